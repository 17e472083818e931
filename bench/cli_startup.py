"""Start-up of every ``dsh-sidecar`` command, against ``python -c pass`` in the same run.

Each command runs as a user runs it (the installed console script, one process per run) in a
small repository; ``serve`` is timed from the spawn to its answer to ``initialize`` on stdio.
Runs are interleaved round-robin so the machine's load hits every command alike. One more row,
``import pygls.lsp.server``, is the floor of ``serve``: the stack it cannot start without. Prints, per
command, the median and p95 wall time and the median CPU time (user + system: from ``wait4``,
or from ``/proc`` at the moment ``serve`` answered), then one ``RESULT {...}`` JSON line
(docs/benchmarks.md, CLI start-up).

    .venv/bin/python bench/cli_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, median, percentile

BIN = Path(sys.executable).parent / "dsh-sidecar"
TICKS = os.sysconf("SC_CLK_TCK")
TARGET_MS = 150.0

COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "preview": ["preview", "{root}/pkg"],
    "scopes": ["scopes", "{root}/pkg/main.py"],
    "explain": ["explain", "{root}/pkg/main.py"],
    "doctor": ["doctor"],
    "sessions": ["sessions"],
    "hooks status": ["hooks", "status"],
}


def repository(root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rules\n")
    (root / "CLAUDE.md").write_text("claude rules\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rules\n")
    (root / "pkg" / "main.py").write_text("x = 1\n")


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one process run to its end."""
    began = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    # doctor exits 1 when the machine lacks tmux or the like; that is still a full start.
    assert code in (0, 1), (argv, code)
    return took, usage.ru_utime + usage.ru_stime


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def serve_once(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds from spawning ``serve`` to its ``initialize`` answer."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": os.getpid(), "rootUri": cwd.as_uri(), "capabilities": {}},
    }
    began = time.perf_counter()
    child = subprocess.Popen(
        [str(BIN), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(frame(initialize))
    child.stdin.flush()
    length = 0
    while line := child.stdout.readline().strip():
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    answer = json.loads(child.stdout.read(length))
    took = time.perf_counter() - began
    with open(f"/proc/{child.pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    assert answer.get("id") == 1 and "result" in answer, answer
    child.stdin.close()  # end of input: the server exits
    child.wait(10)
    return took, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        repository(root)
        env = {**os.environ, "DSH_HOME": f"{tmp}/dsh", "HOME": tmp}
        # argv per row; None for serve, which is timed to its answer, not to its end.
        runs: dict[str, list[str] | None] = {"python -c pass": [sys.executable, "-c", "pass"]}
        for name, template in COMMANDS.items():
            runs[name] = [str(BIN), *(part.format(root=root) for part in template)]
        runs["serve (to initialize)"] = None
        # serve's own floor: importing the language-server stack it cannot start without.
        runs["import pygls.lsp.server"] = [sys.executable, "-c", "import pygls.lsp.server"]
        wall: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, argv in runs.items():
                if argv is None:
                    took, used = serve_once(env, root)
                else:
                    took, used = run_once(argv, env, root)
                wall[name].append(took)
                cpu[name].append(used)
        load = os.getloadavg()[0]
        floor = median(wall["python -c pass"])
        print(f"{args.runs} runs each, interleaved, load average {load:.1f}")
        print(f"{'command':24} {'wall median':>12} {'wall p95':>9} {'CPU median':>11}  vs floor")
        result: dict[str, object] = {"runs": args.runs, "load": load, "machine": machine()}
        for name in runs:
            w, p, c = median(wall[name]), percentile(wall[name], 95), median(cpu[name])
            print(
                f"{name:24} {w * 1000:9.1f} ms {p * 1000:6.1f} ms {c * 1000:8.1f} ms"
                f"  {w / floor:5.1f}x"
            )
            result[name] = {"wall_ms": w * 1000, "p95_ms": p * 1000, "cpu_ms": c * 1000}
        commands = [n for n in runs if n in COMMANDS or n.startswith("serve")]
        slowest = max(commands, key=lambda n: median(wall[n]))
        print(f"slowest: {slowest}; target {TARGET_MS:.0f} ms per command")
        print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()

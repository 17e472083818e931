"""Latency of ``dsh-sidecar hook`` per event kind on a 1,000-file repository (docs/benchmarks.md).

Runs the installed console script as the agents do (one process per event, JSON on stdin) and
prints, per event kind, the median and p95 wall time and CPU time (user + system), each also as a
ratio to ``python -c pass`` measured in the same run (the floor: an interpreter that starts and
exits), the machine's load average, and the import time of one ``SessionStart`` process.

The package is byte-compiled first, as ``pip install`` does: with ``PYTHONDONTWRITEBYTECODE`` set
an editable checkout would otherwise compile every module from source in every process.

    .venv/bin/python bench/hook_latency.py [--runs 30]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import dsh_sidecar

BIN = Path(sys.executable).parent / "dsh-sidecar"


def repository(root: Path) -> list[Path]:
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rules\n")
    (root / "CLAUDE.md").write_text("claude rules\n")
    files = []
    for d in range(40):
        directory = root / f"pkg{d}" / "src"
        directory.mkdir(parents=True)
        if d % 4 == 0:
            (root / f"pkg{d}" / "AGENTS.md").write_text(f"pkg{d} rules\n")
        for f in range(25):
            path = directory / f"m{f}.py"
            path.write_text(f"x = {f}\n")
            files.append(path)
    return files


CPU: dict[str, list[float]] = {}


def spawn(argv: list[str], data: bytes, env: dict[str, str], kind: str) -> float:
    """Wall time of one process; its CPU time (user + system, less sensitive to the machine's
    load than wall time) goes to ``CPU[kind]``."""
    began = time.perf_counter()
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    assert child.stdin is not None
    child.stdin.write(data)
    child.stdin.close()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    took = time.perf_counter() - began
    assert child.returncode == 0, argv
    CPU.setdefault(kind, []).append(usage.ru_utime + usage.ru_stime)
    return took


def once(event: Mapping[str, object], env: dict[str, str], kind: str) -> float:
    argv = [str(BIN), "hook", "--agent", "claude"]
    return spawn(argv, json.dumps(event).encode(), env, kind)


def busy(root: Path, files: list[Path], env: dict[str, str], runs: int) -> list[float]:
    """After-tool events while another process holds the store's write lock (they wait what the
    installed timeout leaves them, ``hooks/budget.py``, then keep their touches for later)."""
    store = Path(env["DSH_HOME"]) / "sessions.sqlite3"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sqlite3, sys\n"
                f"db = sqlite3.connect({str(store)!r}, isolation_level=None)\n"
                "db.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\nsys.stdin.readline()\n"
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    samples = []
    for run in range(runs):
        read = {
            "session_id": f"s{run}",
            "cwd": str(root),
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(files[run])},
            "tool_use_id": f"busy{run}",
        }
        samples.append(once(read, env, "busy store"))
    holder.stdin.write("\n")
    holder.stdin.close()
    holder.wait(10)
    return samples


def median_p95(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[
        min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))
    ]


def summary(samples: list[float], floor: list[float]) -> str:
    median, p95 = median_p95(samples)
    ratio = median / median_p95(floor)[0]
    return f"median {median * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms  ({ratio:4.1f}x floor)"


def import_ms(argv: list[str], data: bytes, env: dict[str, str]) -> float:
    """The sum of every module's own time under ``-X importtime`` for one process."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        input=data,
        capture_output=True,
        env=env,
        check=True,
    )
    total = 0
    for line in done.stderr.decode().splitlines():
        fields = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(fields) == 3 and fields[0].strip().isdigit():
            total += int(fields[0])
    return total / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    compileall.compile_dir(os.path.dirname(dsh_sidecar.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        files = repository(root)
        env = {**os.environ, "DSH_HOME": f"{tmp}/dsh", "HOME": tmp}
        kinds: dict[str, list[float]] = {
            "start": [],
            "prompt": [],
            "after-tool": [],
            "repeat": [],
            "python -c pass": [],
        }
        for run in range(args.runs):
            # The floor on this machine now: an interpreter that starts and exits.
            kinds["python -c pass"].append(
                spawn([sys.executable, "-c", "pass"], b"", env, "python -c pass")
            )
            sid = f"s{run}"
            base = {"session_id": sid, "cwd": str(root)}
            kinds["start"].append(once({**base, "hook_event_name": "SessionStart"}, env, "start"))
            kinds["prompt"].append(
                once({**base, "hook_event_name": "UserPromptSubmit", "prompt": "go"}, env, "prompt")
            )
            read = {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": str(files[(run * 37) % len(files)])},
                "tool_use_id": f"t{run}",
            }
            kinds["after-tool"].append(once(read, env, "after-tool"))
            kinds["repeat"].append(once(read, env, "repeat"))
        kinds["busy store"] = busy(root, files, env, args.runs)
        load = os.getloadavg()
        print(
            f"{len(files)} files, {args.runs} sessions, one process per event,"
            f" load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (2-core target machine)"
        )
        floor = "python -c pass"
        print("wall time")
        for kind, samples in kinds.items():
            print(f"  {kind:14} {summary(samples, kinds[floor])}")
        print("CPU time (user + system)")
        for kind, samples in CPU.items():
            print(f"  {kind:14} {summary(samples, CPU[floor])}")
        start = json.dumps(
            {"session_id": "imports", "cwd": str(root), "hook_event_name": "SessionStart"}
        )
        hook_imports = import_ms([str(BIN), "hook", "--agent", "claude"], start.encode(), env)
        floor_imports = import_ms(["-c", "pass"], b"", env)
        print(
            f"imports of one SessionStart process (-X importtime, sum of self times)"
            f" {hook_imports:.1f} ms; python -c pass {floor_imports:.1f} ms"
        )


if __name__ == "__main__":
    main()

"""Latency of ``dsh-sidecar hook`` per event kind, in the hook's own process and through the
resident engine (docs/benchmarks.md, "Agent hooks").

Runs the installed console script as the agents do (one process per event, JSON on stdin) and
prints, per event kind and per path, the median and p95 wall time and the hook process's CPU time
(user + system), each also as a ratio to ``python -c pass`` of the same interpreter measured in
the same run (the floor: an interpreter that starts and exits), the machine's load average, and
the import time of one ``SessionStart`` process of each path.

Paths: ``in-process`` (``DSH_HOOK_RESIDENT=0``: the event answered in the hook's process, as
before the resident engine) and ``resident`` (``DSH_HOOK_RESIDENT=1``: the hook is a thin client
of a resident engine, started by a first event that is not counted and stopped at the end; its
CPU time is the client's only). Each path has its own ``$DSH_HOME`` and store.

Trees: ``small`` is 1,000 files (40 packages, 10 nested ``AGENTS.md``); ``large`` is about 20,000
files in 14 levels (40 packages, each a chain of 13 directories of 38 files with an ``AGENTS.md``
at every other level; after-tool events read a file at the bottom of a chain).

The package is byte-compiled first, as ``pip install`` does: with ``PYTHONDONTWRITEBYTECODE`` set
an editable checkout would otherwise compile every module from source in every process.

    .venv/bin/python bench/hook_latency.py [--runs 30] [--tree small|large] [--busy]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import signal
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


def large_repository(root: Path) -> list[Path]:
    """About 20,000 files in 14 levels: the bottom file of each chain is what after-tool reads."""
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rules\n")
    (root / "CLAUDE.md").write_text("claude rules\n")
    bottoms = []
    for d in range(40):
        directory = root / f"pkg{d}"
        for level in range(1, 14):
            directory = directory / f"l{level}" if level > 1 else directory
            directory.mkdir(parents=True, exist_ok=True)
            if level % 2 == 1:
                (directory / "AGENTS.md").write_text(f"pkg{d} level {level} rules\n")
            for f in range(38):
                (directory / f"m{f}.py").write_text(f"x = {f}\n")
        bottoms.append(directory / "m0.py")
    return bottoms


def count_files(root: Path) -> int:
    return sum(len(names) for _, _, names in os.walk(root))


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


def resident_pid(home: str) -> int | None:
    from dsh_sidecar.hooks.resident_status import running_pid

    return running_pid(home)


def wait_for_resident(home: str) -> None:
    deadline = time.monotonic() + 60
    socket_file = Path(home) / "run" / "hook.sock"
    while resident_pid(home) is None or not socket_file.exists():
        assert time.monotonic() < deadline, "the resident did not start"
        time.sleep(0.05)


def stop_resident(home: str) -> None:
    pid = resident_pid(home)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while resident_pid(home) is not None and time.monotonic() < deadline:
            time.sleep(0.05)


def events_of(root: Path, files: list[Path], run: int, path: str) -> dict[str, dict[str, object]]:
    sid = f"{path}-s{run}"
    base: dict[str, object] = {"session_id": sid, "cwd": str(root)}
    read: dict[str, object] = {
        **base,
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(files[(run * 37) % len(files)])},
        "tool_use_id": f"t{run}",
    }
    return {
        "start": {**base, "hook_event_name": "SessionStart"},
        "prompt": {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go"},
        "after-tool": read,
        "repeat": read,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--tree", choices=("small", "large"), default="small")
    parser.add_argument(
        "--busy", action="store_true", help="also after-tool events while the store is locked"
    )
    args = parser.parse_args()
    compileall.compile_dir(os.path.dirname(dsh_sidecar.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        files = repository(root) if args.tree == "small" else large_repository(root)
        paths = ("in-process", "resident")
        envs = {
            path: {
                **os.environ,
                "DSH_HOME": f"{tmp}/dsh-{path}",
                "HOME": tmp,
                "DSH_HOOK_RESIDENT": "1" if path == "resident" else "0",
            }
            for path in paths
        }
        floor = "python -c pass"
        kinds = ("start", "prompt", "after-tool", "repeat")
        samples: dict[str, list[float]] = {floor: []}
        try:
            # Started by an event of its own, not counted; it then stays up for the run.
            warm = {"session_id": "warm", "cwd": str(root), "hook_event_name": "SessionStart"}
            once(warm, envs["resident"], "warm-up")
            wait_for_resident(envs["resident"]["DSH_HOME"])
            for run in range(args.runs):
                # The floor on this machine now: an interpreter that starts and exits.
                samples[floor].append(
                    spawn([sys.executable, "-c", "pass"], b"", dict(os.environ), floor)
                )
                # The two paths alternate event by event, so that the load is the same for both.
                by_path = {path: events_of(root, files, run, path) for path in paths}
                for kind in kinds:
                    for path in paths:
                        name = f"{kind} {path}"
                        took = once(by_path[path][kind], envs[path], name)
                        samples.setdefault(name, []).append(took)
            if args.busy:
                samples["busy store in-process"] = busy(root, files, envs["in-process"], args.runs)
            load = os.getloadavg()
            start = json.dumps(
                {"session_id": "imports", "cwd": str(root), "hook_event_name": "SessionStart"}
            ).encode()
            hook = [str(BIN), "hook", "--agent", "claude"]
            imports = {path: import_ms(hook, start, envs[path]) for path in paths}
        finally:
            stop_resident(envs["resident"]["DSH_HOME"])
        floor_imports = import_ms(["-c", "pass"], b"", dict(os.environ))
        print(
            f"{count_files(root)} files ({args.tree} tree), {args.runs} sessions per path,"
            f" one process per event, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
        )
        print("wall time")
        for name, values in samples.items():
            print(f"  {name:24} {summary(values, samples[floor])}")
        print("CPU time of the hook process (user + system)")
        for name, values in CPU.items():
            if name != "warm-up":
                print(f"  {name:24} {summary(values, CPU[floor])}")
        print(
            "imports of one SessionStart process (-X importtime, sum of self times):"
            f" in-process {imports['in-process']:.1f} ms, resident client"
            f" {imports['resident']:.1f} ms; python -c pass {floor_imports:.1f} ms"
        )


if __name__ == "__main__":
    main()

"""CPU time of one hook event's engine work, in one warm process (docs/benchmarks.md, "Agent
hooks"): ``hooks.runtime.handle`` called directly, as the resident engine calls it, without the
interpreter's start or the socket round trip that ``bench/hook_latency.py`` includes.

A project of 40 packages, each with an ``AGENTS.md`` at its top and two levels down; per session
a ``SessionStart``, then ``--steps`` pairs of a Read at the bottom of the next package and a
prompt (``--mode all``: everything is printed, so every Read answers), then a repeated Read.
Prints the median and p90 of ``time.process_time`` per event kind (CPU, which the machine's load
moves far less than wall time), the store without fsync.

    .venv/bin/python bench/hook_engine.py [--sessions 10] [--steps 20]

To compare two commits: ``git archive <commit> server | tar -x -C /tmp/<name>`` and run it with
``PYTHONPATH=/tmp/<name>/server``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from dsh_sidecar.config import Settings
from dsh_sidecar.hooks.config import HookConfig
from dsh_sidecar.hooks.main import parse_event
from dsh_sidecar.hooks.runtime import handle
from dsh_sidecar.sessions.store import Store


def make_tree(root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT\n" * 50)
    for i in range(40):
        bottom = root / f"p{i}" / "a" / "b"
        bottom.mkdir(parents=True)
        (root / f"p{i}" / "AGENTS.md").write_text(f"P{i}\n" * 30)
        (bottom / "AGENTS.md").write_text(f"B{i}\n" * 30)
        (bottom / "x.py").write_text("x = 1\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dsh-hook-engine-"))
    root = tmp / "proj"
    make_tree(root)
    home = tmp / "dsh"
    home.mkdir()
    env = {"DSH_HOME": str(home), "HOME": str(tmp / "home"), "DSH_TEST_STORE_NO_FSYNC": "1"}
    os.environ.update(env)
    config = HookConfig(Settings(), env, "all")
    store = Store(str(home / "sessions.sqlite3"))
    times: dict[str, list[float]] = {"start": [], "read": [], "prompt": [], "repeat": []}
    printed = dict.fromkeys(times, 0)

    def event(sid: str, name: str, **fields: Any) -> Any:
        body = {"hook_event_name": name, "session_id": sid, "cwd": str(root), **fields}
        return parse_event("claude", body)

    def read(sid: str, package: int, tool_id: str) -> Any:
        path = str(root / f"p{package % 40}" / "a" / "b" / "x.py")
        return event(
            sid,
            "PostToolUse",
            tool_name="Read",
            tool_input={"file_path": path},
            tool_use_id=tool_id,
            tool_response={"file": {"filePath": path}},
        )

    def run(kind: str, hook_event: Any) -> None:
        began = time.process_time()
        printed[kind] += handle(store, hook_event, config, lambda data: None)
        times[kind].append(time.process_time() - began)

    for s in range(args.sessions):
        sid = f"s{s}"
        run("start", event(sid, "SessionStart", source="startup"))
        for k in range(args.steps):
            run("read", read(sid, k, f"t{k}"))
            run("prompt", event(sid, "UserPromptSubmit", prompt=f"go on {k}"))
        run("repeat", read(sid, 0, "t0"))
    store.close()
    load = os.getloadavg()[0]
    print(f"{args.sessions} sessions of {args.steps} read+prompt pairs, load average {load:.1f}")
    for kind, spent in times.items():
        ordered = sorted(spent)
        p90 = ordered[int(len(ordered) * 0.9)]
        print(
            f"  {kind:7} n={len(spent):4}  CPU median {statistics.median(spent) * 1000:6.2f} ms"
            f"  p90 {p90 * 1000:6.2f} ms  (printed {printed[kind]})"
        )


if __name__ == "__main__":
    main()

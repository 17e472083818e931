"""Step cost against session age with timeContext and tmuxContext on (issue 14 target 3).

Two ``SessionService`` instances in this process, each over its own store file and each with one
live session at the root of a small project: ``on`` has timeContext (a reading at every step:
``refreshIntervalMs`` 0) and tmuxContext enabled, ``off`` has both disabled. Turn after turn,
interleaved, each session runs ``prepare`` of step 1 (with a prompt and a browser time zone),
``step/end``, ``prepare`` of step 2, ``turn/end``; we time both prepares. The tmux query itself (a
``sh`` subprocess per turn) is replaced by one that answers a fixed pane at once, so the spawn's
noise does not drown the decision being measured; the decision (latest reading, compare, prepend)
is the product's.

Reported: the median prepare time over the first and the last ``--bucket`` turns of each session,
and their ratio. Target: ``on`` last / first <= 1.2 (O(1) in session age), like ``off``.

    .venv/bin/python bench/session_age.py [--turns 2000] [--bucket 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, report
from dsh_sidecar.config import parse_settings
from dsh_sidecar.sessions.service import Prompt, SessionService
from dsh_sidecar.sources import tmux_context

PANE = tmux_context.TmuxLocation("main", "1", "editor", "0", "%1", "1", "1", "c0de,80x24,0,0,1")


def fixed_pane(pid: int, *, env: object = None, timeout_s: float = 2.0) -> object:
    return PANE


async def run(args: argparse.Namespace) -> dict[str, list[float]]:
    tmux_context.query_tmux = fixed_pane  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root = os.path.join(base, "proj")
        os.makedirs(os.path.join(root, ".git"))
        with open(os.path.join(root, "AGENTS.md"), "w", encoding="utf-8") as fh:
            fh.write("rule\n")
        home = os.path.join(base, "home")
        services: dict[str, tuple[SessionService, str]] = {}
        for name, enabled in (("on", True), ("off", False)):
            settings = parse_settings(
                {
                    "store": {"path": os.path.join(base, f"{name}.sqlite3")},
                    "instructions": {"dshHome": home},
                    "timeContext": {"enabled": enabled, "refreshIntervalMs": 0},
                    "tmuxContext": {"enabled": enabled},
                }
            )
            service = SessionService(settings, env={"HOME": base})
            header, _ = await service.open_session(root)
            services[name] = (service, header.id)
        times: dict[str, list[float]] = {f"{n}_{s}": [] for n in services for s in (1, 2)}
        try:
            for turn in range(1, args.turns + 1):
                for name, (service, sid) in services.items():
                    prompt = Prompt(f"task {turn}", "Europe/Berlin", f"r{turn}")
                    start = time.perf_counter()
                    prepared = await service.prepare_step(sid, turn, 1, prompt)
                    times[f"{name}_1"].append(time.perf_counter() - start)
                    assert prepared.messages
                    await service.end_step(sid, turn, 1)
                    start = time.perf_counter()
                    await service.prepare_step(sid, turn, 2, None)
                    times[f"{name}_2"].append(time.perf_counter() - start)
                    await service.end_turn(sid, turn, "completed")
            service, sid = services["on"]
            events = await service.events(sid, None, 10**9)
            readings = [
                e for e in events if e.data.get("source", {}).get("plugin") == "time-context"
            ]
            assert len(readings) == 2 * args.turns, len(readings)
        finally:
            for service, _ in services.values():
                await service.shutdown()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--bucket", type=int, default=100)
    args = parser.parse_args()
    times = asyncio.run(run(args))
    rows = [("turns", f"{args.turns} (buckets of {args.bucket})")]
    out: dict[str, object] = {"turns": args.turns, "bucket": args.bucket}
    for name, values in times.items():
        first = statistics.median(values[: args.bucket])
        last = statistics.median(values[-args.bucket :])
        rows.append(
            (
                f"{name} prepare step {name[-1]}",
                f"first {ms(first)}, last {ms(last)}: {last / first:.2f}x",
            )
        )
        out[f"{name}_first_s"], out[f"{name}_last_s"] = first, last
        out[f"{name}_growth"] = last / first
    rows.append(("target", "on: last / first <= 1.2 for both steps (O(1) in session age)"))
    report("session_age", rows, out)


if __name__ == "__main__":
    main()

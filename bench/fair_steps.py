"""Fair steps under load: one session's ``dsh/step/prepare`` while other sessions have a
projection backlog (docs/benchmarks.md, "Fair steps").

100 live sessions, each in its own project (``.git``, a root ``AGENTS.md`` and 10 directories
with their own ``AGENTS.md``), all given their baseline first; with ``--shared`` all of them in one
project of 1,000 such directories, so that every touch reaches every session. Then a burst of 1,000 editor
touches (10 files in each project) arrives, and right behind it every session takes a step, one
after another, as agents answering in turn would: each step must wait for its own session's
touches (they are part of its answer) and for nothing else. Printed: the slowest and the median
step, the whole burst's time to settle, and how long the burst's 1,000 ``editor_touch`` calls
took on the loop. Runs in-process over ``SessionService`` (no transport), so what it measures is
the service's scheduling; the code measured is whichever ``dsh_sidecar`` is importable
(``PYTHONPATH=<another checkout>/server`` measures another one).

    .venv/bin/python bench/fair_steps.py [--sessions 100] [--files 1000] [--shared]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import machine
from dsh_sidecar.config import parse_settings
from dsh_sidecar.sessions.service import Prompt, SessionService
from dsh_sidecar.sessions.store import Store, now_ms


def build(root: Path, sessions: int, files: int, shared: bool) -> list[tuple[Path, list[str]]]:
    if shared:  # one project, every session in it: each touch reaches all of them
        proj, touched = build(root, 1, files, False)[0]
        return [(proj, touched if n == 0 else []) for n in range(sessions)]
    per = max(1, files // sessions)
    out = []
    for n in range(sessions):
        proj = root / f"p{n:03d}"
        (proj / ".git").mkdir(parents=True)
        (proj / "AGENTS.md").write_text(f"root rule of project {n}\n")
        touched = []
        for d in range(per):
            sub = proj / f"d{d:02d}"
            sub.mkdir()
            (sub / "AGENTS.md").write_text(f"rule {d} of project {n}\n" * 5)
            target = sub / "main.py"
            target.write_text("x = 1\n")
            touched.append(str(target))
        out.append((proj, touched))
    return out


async def run(sessions: int, files: int, shared: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        projects = build(root / "w", sessions, files, shared)
        settings = parse_settings({"store": {"path": str(root / "s.sqlite3")}})
        store = Store(str(root / "s.sqlite3"), now_ms, durable=False)
        svc = SessionService(settings, store=store, env={"HOME": str(root / "home")})
        try:
            ids = []
            for proj, _ in projects:
                header, _ = await svc.open_session(str(proj))
                ids.append(header.id)
                await svc.prepare_step(header.id, 1, 1, Prompt("hello"))
                await svc.end_step(header.id, 1, 1)
            burst_started = time.perf_counter()
            for _, touched in projects:
                for path in touched:
                    svc.editor_touch([path])
            touch_calls = time.perf_counter() - burst_started
            steps = []
            pending = 0
            for sid in ids:
                started = time.perf_counter()
                prepared = await svc.prepare_step(sid, 2, 1, Prompt("next"))
                steps.append(time.perf_counter() - started)
                pending += bool(prepared.messages[:-1])  # the touches' context came with it
                await svc.end_step(sid, 2, 1)
            settled = time.perf_counter() - burst_started
            return {
                "sessions": sessions,
                "shared_project": shared,
                "files": files,
                "slowest_step_s": round(max(steps), 3),
                "median_step_s": round(statistics.median(steps), 3),
                "first_step_s": round(steps[0], 3),
                "burst_settled_s": round(settled, 2),
                "touch_calls_ms": round(touch_calls * 1000, 1),
                "steps_with_context": pending,
            }
        finally:
            await svc.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument(
        "--shared", action="store_true", help="every session in one project (a touch reaches all)"
    )
    args = parser.parse_args()
    result = asyncio.run(run(args.sessions, args.files, args.shared))
    import dsh_sidecar

    result["code"] = os.path.dirname(os.path.dirname(dsh_sidecar.__file__))
    result["machine"] = machine()["cpu"]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

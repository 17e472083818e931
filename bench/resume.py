"""Resume of a 100,000-event session against a 1,000-event one (ISSUE 8 target 4).

Two sessions are written straight into one store file with the ``Store`` API: turns of
``turn/start``, ``step/start``, a user prompt, assistant messages and tool results, inbox splices,
``step/end`` and ``turn/end``, plus an agent-instructions baseline in the first turn and an
instruction update every 50 turns (so the indexed look-ups have real rows to skip). Then, in one
process and interleaved, each round starts a *new* ``SessionService`` over the store (what a
restarted sidecar is: no caches), and times ``open`` (resume) plus the first ``dsh/step/prepare``
of a new turn, for each session.

A third session, ``large_few``, has the large one's 100,000 events but its instruction updates
only as long as the small one has them (the same three visible instruction messages): what a
resume costs for the log's length alone, apart from how many instruction messages are visible
(each is read and compared at the first step, so that part grows with their number).

Target: the 100,000-event resume within 1.5x of the 1,000-event one.

    .venv/bin/python bench/resume.py [--small 1000] [--large 100000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import median, ms, report
from dsh_sidecar.config import Settings, parse_settings
from dsh_sidecar.model import SessionHeader
from dsh_sidecar.sessions.service import Prompt, SessionService
from dsh_sidecar.sessions.store import EventDraft, Store
from dsh_sidecar.sources.agent_instructions.render import BASELINE_INTRO

EVENTS_PER_TURN = 10


def _message(role: str, text: str, source: Mapping[str, object]) -> dict[str, object]:
    return {
        "id": str(uuid.uuid4()),
        "role": role,
        "content": [{"type": "text", "text": text}],
        "source": source,
    }


def turn_drafts(turn: int, updates_until: int | None = None) -> list[EventDraft]:
    """One turn of ten events: what an agent loop with one tool call writes. An instruction
    update comes every 50 turns (up to turn ``updates_until``, when given)."""
    prompt = _message("user", f"please fix bug #{turn}", {"kind": "user", "rpcId": f"r{turn}"})
    drafts = [
        EventDraft("turn/start", {"turn": turn}),
        EventDraft("step/start", {"turn": turn, "step": 1}),
        EventDraft("user/message", prompt, "append"),
    ]
    if turn == 1 or (turn % 50 == 0 and (updates_until is None or turn <= updates_until)):
        text = f"<system-reminder>\n{BASELINE_INTRO}\n\nInstructions from: AGENTS.md\n\nrule\n</system-reminder>"
        source = {
            "kind": "agent-instructions",
            "form": "instructions",
            **({"baseline": True, "baselineIdentity": "{}"} if turn == 1 else {}),
            "changes": [
                {
                    "action": "set" if turn == 1 else "replace",
                    "scope": ".\u0000AGENTS.md",
                    "path": "AGENTS.md",
                    "digest": f"{turn:040x}",
                }
            ],
        }
        drafts.append(EventDraft("user/message", _message("user", text, source), "append"))
    else:
        drafts.append(
            EventDraft("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": []})
        )
    call = {"kind": "model"}
    drafts += [
        EventDraft(
            "assistant/message",
            {"turn": turn, "step": 1, "message": _message("assistant", "let me look " * 20, call)},
            "append",
        ),
        EventDraft(
            "tool/result",
            {
                "turn": turn,
                "step": 1,
                "message": _message(
                    "user", "file contents " * 40, {"kind": "tool", "callId": f"c{turn}"}
                ),
            },
            "append",
        ),
        EventDraft("step/end", {"turn": turn, "step": 1}),
        EventDraft("step/start", {"turn": turn, "step": 2}),
        EventDraft(
            "assistant/message",
            {"turn": turn, "step": 2, "message": _message("assistant", "done", call)},
            "append",
        ),
        EventDraft("turn/end", {"turn": turn, "reason": "completed"}),
    ]
    return drafts[:EVENTS_PER_TURN] if len(drafts) > EVENTS_PER_TURN else drafts


def build_session(
    store: Store, cwd: str, events: int, updates_until: int | None = None
) -> tuple[str, int]:
    sid = str(uuid.uuid4())
    store.create_session(SessionHeader(sid, int(time.time() * 1000), cwd, f"{events} events"))
    turns = events // EVENTS_PER_TURN
    batch: list[EventDraft] = []
    for turn in range(1, turns + 1):
        batch.extend(turn_drafts(turn, updates_until))
        if len(batch) >= 2000:
            store.append(sid, batch)
            batch = []
    if batch:
        store.append(sid, batch)
    return sid, turns


async def resume(settings: Settings, sid: str, cwd: str, turn: int) -> float:
    service = SessionService(settings, env={})
    try:
        start = time.perf_counter()
        _header, resumed = await service.open_session(cwd, sid)
        assert resumed
        prepared = await service.prepare_step(sid, turn, 1, Prompt("next task"))
        elapsed = time.perf_counter() - start
        assert prepared.messages
        await service.end_step(sid, turn, 1)
        await service.end_turn(sid, turn, "completed")
        return elapsed
    finally:
        await service.shutdown()


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root = os.path.join(base, "proj")
        os.makedirs(os.path.join(root, ".git"))
        with open(os.path.join(root, "AGENTS.md"), "w", encoding="utf-8") as fh:
            fh.write("rule\n")
        store_path = os.path.join(base, "sessions.sqlite3")
        store = Store(store_path)
        build_start = time.perf_counter()
        small, small_turns = build_session(store, root, args.small)
        large, large_turns = build_session(store, root, args.large)
        few, few_turns = build_session(store, root, args.large, updates_until=small_turns)
        build = time.perf_counter() - build_start
        sizes = {s: store.last_seq(s) for s in (small, large)}
        store.close()
        settings = parse_settings(
            {"store": {"path": store_path}, "instructions": {"dshHome": os.path.join(base, "home")}}
        )
        turns = {small: small_turns, large: large_turns, few: few_turns}
        times: dict[str, list[float]] = {small: [], large: [], few: []}
        for round_ in range(args.rounds + 2):
            for sid in (small, large, few):
                turns[sid] += 1
                elapsed = await resume(settings, sid, root, turns[sid])
                if round_ >= 2:  # two warm-up rounds: page cache, imports, the allocator
                    times[sid].append(elapsed)
    t_small, t_large, t_few = median(times[small]), median(times[large]), median(times[few])
    ratio, few_ratio = t_large / t_small, t_few / t_small
    report(
        "resume",
        [
            (
                "log sizes",
                f"{(sizes[small] or 0) + 1:,} and {(sizes[large] or 0) + 1:,} events (built in {build:.1f} s)",
            ),
            ("open + first prepare, small", ms(t_small)),
            ("open + first prepare, large", ms(t_large)),
            ("open + first prepare, large_few", ms(t_few)),
            ("large / small", f"{ratio:.2f}x  (target <= 1.5)"),
            ("large_few / small", f"{few_ratio:.2f}x  (the log's length alone)"),
        ],
        {
            "small_events": args.small,
            "large_events": args.large,
            "small_s": t_small,
            "large_s": t_large,
            "ratio": ratio,
            "large_few_s": t_few,
            "large_few_ratio": few_ratio,
            "rounds": args.rounds,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

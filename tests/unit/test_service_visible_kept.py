"""A live session keeps its visible agent-instructions messages (``LiveSession.visible``): read
once at resume, extended by each step's own messages, dropped when an append or a compaction may
have changed them. Whatever it keeps must be what the log says at that moment."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sessionkit import Kit, all_changes, opened, start, step

from dsh_sidecar.sessions.instruction_log import visible_instructions
from dsh_sidecar.sessions.service import SessionService


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    k.write("pkg/x.py", "x = 1\n")
    yield k
    await k.close()


def kept_ids(svc: SessionService, sid: str) -> list[str] | None:
    kept = svc.live[sid].kept_visible()
    return None if kept is None else [m.id for m in kept]


def log_ids(svc: SessionService, sid: str) -> list[str]:
    return [m.id for m in visible_instructions(svc.store, sid)]


async def touch(svc: SessionService, sid: str, kit: Kit, call: str) -> None:
    svc.tool_result(sid, call, None, "read", {"file_path": str(kit.path("pkg/x.py"))}, False)
    await svc.pending(sid)


async def test_what_a_session_keeps_is_what_the_log_says(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    assert kept_ids(svc, sid) == [] == log_ids(svc, sid)
    await start(svc, sid)  # the baseline
    assert kept_ids(svc, sid) == log_ids(svc, sid) and len(log_ids(svc, sid)) == 1
    await touch(svc, sid, kit, "t1")
    assert ("set", "pkg/AGENTS.md") in all_changes(await step(svc, sid, 1, 2))
    kit.write("pkg/AGENTS.md", "pkg rules, edited\n")
    await touch(svc, sid, kit, "t2")
    assert ("replace", "pkg/AGENTS.md") in all_changes(await step(svc, sid, 1, 3))
    kit.remove("pkg/AGENTS.md")
    await touch(svc, sid, kit, "t3")
    assert ("remove", "pkg/AGENTS.md") in all_changes(await step(svc, sid, 1, 4))
    assert kept_ids(svc, sid) == log_ids(svc, sid) and len(log_ids(svc, sid)) == 4
    await step(svc, sid, 1, 5)  # nothing new: still kept, still the same
    assert kept_ids(svc, sid) == log_ids(svc, sid)


async def test_an_append_or_a_compaction_is_never_served_from_what_was_kept(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    await svc.append(sid, [{"type": "user/message", "data": {
        "id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}],
        "source": {"kind": "user"}}, "surfaceOp": "append"}])  # fmt: skip
    assert kept_ids(svc, sid) is None  # the next reader asks the log
    size = len((await svc.surface(sid)).events)
    await svc.compact(sid, 0, size - 1, "summary")  # shadows the baseline
    assert kept_ids(svc, sid) == log_ids(svc, sid) == []
    # The next step starts from what the log says: a new baseline.
    prepared = await svc.prepare_step(sid, 1, 2, None)
    assert prepared.messages[0].source.get("baseline") is True
    assert kept_ids(svc, sid) == log_ids(svc, sid)


async def test_a_resumed_session_keeps_what_it_read(kit: Kit) -> None:
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    await first.shutdown()
    svc = kit.service()
    _header, resumed = await svc.open_session(str(kit.root), sid)
    assert resumed
    assert kept_ids(svc, sid) == log_ids(svc, sid) and len(log_ids(svc, sid)) == 1

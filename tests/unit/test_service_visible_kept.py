"""A live session keeps its visible agent-instructions messages (``LiveSession.visible``) only
from a resume or a compaction that has just read them to the next step, which then does not read
them again; an append or a step drops them. Whatever it keeps must be what the log says."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.sessionkit import Kit, all_changes, opened, start, step

from dsh_sidecar.sessions import stepping
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


async def started_and_closed(kit: Kit) -> str:
    """A session with its baseline and a pkg/ update entered, then its service shut down."""
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    first.tool_result(sid, "t1", None, "read", {"file_path": str(kit.path("pkg/x.py"))}, False)
    await first.pending(sid)
    assert ("set", "pkg/AGENTS.md") in all_changes(await step(first, sid, 1, 2))
    await first.shutdown()
    return sid


async def test_a_resume_keeps_what_it_read_for_the_first_step_only(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await started_and_closed(kit)
    svc = kit.service()
    _header, resumed = await svc.open_session(str(kit.root), sid)
    assert resumed
    assert kept_ids(svc, sid) == log_ids(svc, sid) and len(log_ids(svc, sid)) == 2
    reads: list[str] = []
    real = visible_instructions  # what stepping calls, until the test replaces it there

    def counted(store: object, session_id: str) -> object:
        reads.append(session_id)
        return real(store, session_id)  # type: ignore[arg-type]

    monkeypatch.setattr(stepping, "visible_instructions", counted)
    kit.write("pkg/AGENTS.md", "pkg rules, edited\n")
    svc.tool_result(sid, "t2", None, "read", {"file_path": str(kit.path("pkg/x.py"))}, False)
    assert ("replace", "pkg/AGENTS.md") in all_changes(await step(svc, sid, 1, 3))
    assert reads == []  # the first step used what the resume read
    assert kept_ids(svc, sid) is None  # and dropped it: the step changed what is visible
    await step(svc, sid, 1, 4)
    assert reads == [sid]  # from here on, each step reads the log


async def test_an_append_drops_what_was_kept_and_a_compaction_keeps_what_it_read(
    kit: Kit,
) -> None:
    sid = await started_and_closed(kit)
    svc = kit.service()
    await svc.open_session(str(kit.root), sid)
    await svc.append(
        sid,
        [
            {
                "type": "user/message",
                "data": {
                    "id": "m1",
                    "role": "user",
                    "content": [{"type": "text", "text": "hi"}],
                    "source": {"kind": "user"},
                },
                "surfaceOp": "append",
            }
        ],
    )
    assert kept_ids(svc, sid) is None  # the next reader asks the log
    size = len((await svc.surface(sid)).events)
    await svc.compact(sid, 0, size - 1, "summary")  # shadows every instruction message
    assert kept_ids(svc, sid) == log_ids(svc, sid) == []
    # The next step starts from what the log says: a fresh baseline.
    prepared = await svc.prepare_step(sid, 1, 3, None)
    assert prepared.messages[0].source.get("baseline") is True

"""A cancelled or failing ``prepare_step`` writes nothing and leaves the inbox as it was
(docs/protocol.md#dshstepprepare)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.sessionkit import (
    BlockingFS,
    Kit,
    Prompt,
    all_changes,
    baseline_text,
    changes,
    check_store_consistent,
    opened,
    start,
)

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import Message
from dsh_sidecar.sessions.service import PreparedStep, SessionService
from dsh_sidecar.sources.session_reference.uri import format_session_reference_mention


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    yield k
    await k.close()


def snapshot(svc: SessionService, sid: str) -> tuple[object, ...]:
    return (svc.store.events(sid), svc.store.surface_seqs(sid), svc.store.inbox(sid))


async def cancel_mid_compose(
    svc: SessionService, fs: BlockingFS, sid: str, turn: int, number: int, prompt: Prompt | None
) -> None:
    """Start ``prepare_step``, cancel it while its worker is blocked in a read, then let it go."""
    fs.armed = True
    task = asyncio.create_task(svc.prepare_step(sid, turn, number, prompt))
    await asyncio.to_thread(fs.entered.wait)
    try:
        task.cancel()
        # One turn of the loop delivers the cancellation to the task (it is first in the ready
        # queue), so the worker is released only after the service has raised its flag.
        await asyncio.sleep(0)
    finally:
        fs.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancelling_the_step_that_would_enter_the_baseline(kit: Kit) -> None:
    fs = BlockingFS(kit.path("AGENTS.md"))
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    before = snapshot(svc, sid)
    await cancel_mid_compose(svc, fs, sid, 1, 1, Prompt("hello"))
    assert snapshot(svc, sid) == before
    assert kit.notes == []
    assert svc.live[sid].open_step is None

    # Nothing half-done survives in memory either: the retry enters the full baseline.
    prepared = await svc.prepare_step(sid, 1, 1, Prompt("hello"))
    assert [m.text for m in prepared.messages] == [
        "hello",
        baseline_text([("AGENTS.md", "root rules\n")]),
    ]
    check_store_consistent(svc, sid)


async def test_cancelling_a_step_leaves_the_queued_context_queued(kit: Kit) -> None:
    fs = BlockingFS(kit.path("pkg/AGENTS.md"))
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    (queued,) = await svc.pending(sid)
    kit.write("pkg/AGENTS.md", "pkg rules v2\n")  # the pre-step must read it: that read blocks
    notes = list(kit.notes)
    before = snapshot(svc, sid)

    await cancel_mid_compose(svc, fs, sid, 1, 2, None)
    assert snapshot(svc, sid) == before
    assert await svc.pending(sid) == [queued]
    assert kit.notes == notes
    # The step never opened, so a touch now projects at once instead of waiting for a step end.
    assert svc.live[sid].open_step is None

    prepared = await svc.prepare_step(sid, 1, 2, None)
    claimed, update = prepared.messages
    assert claimed == queued
    assert changes(update) == [("replace", "pkg/AGENTS.md")]
    check_store_consistent(svc, sid)


async def test_a_second_cancel_still_waits_for_the_worker(kit: Kit) -> None:
    fs = BlockingFS(kit.path("AGENTS.md"))
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    fs.armed = True
    task = asyncio.create_task(svc.prepare_step(sid, 1, 1, Prompt("hello")))
    await asyncio.to_thread(fs.entered.wait)
    try:
        task.cancel()
        await asyncio.sleep(0)
        task.cancel()
        # Loop turns, not time: a cancel reaches a task through a short, fixed chain of
        # callbacks, so twenty turns are plenty for a task that would give up to have done so.
        for _ in range(20):
            await asyncio.sleep(0)
        # The worker thread is still blocked mid-compose; giving up the session lock now would
        # let another step compose over the same in-memory caches at the same time.
        assert not task.done()
        assert svc.live[sid].lock.locked()
    finally:
        fs.release.set()  # never leave a worker thread blocked, or the loop cannot shut down
    with pytest.raises(asyncio.CancelledError):
        await task
    assert svc.store.events(sid) == []


async def test_an_unknown_session_mention_rejects_the_step_and_writes_nothing(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    (queued,) = await svc.pending(sid)
    before = snapshot(svc, sid)
    mention = format_session_reference_mention("no-such-session", "old work")
    with pytest.raises(DshError) as failure:
        await svc.prepare_step(sid, 2, 1, Prompt(f"continue {mention}"))
    assert failure.value.code == errors.SESSION_REFERENCE_READ_FAILED
    assert snapshot(svc, sid) == before
    assert await svc.pending(sid) == [queued]
    assert svc.live[sid].open_step is None


async def test_a_rejected_first_step_does_not_swallow_the_baseline(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    mention = format_session_reference_mention("ghost")
    with pytest.raises(DshError):
        await svc.prepare_step(sid, 1, 1, Prompt(mention))
    assert svc.store.events(sid) == []
    prepared = await svc.prepare_step(sid, 1, 1, Prompt("plain"))
    assert [m.source["kind"] for m in prepared.messages] == ["user", "agent-instructions"]
    assert prepared.messages[1].source["baseline"] is True


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", " UTC", "", "utc", "EST5EDT!", 7])
async def test_an_invalid_client_time_zone_rejects_the_step(kit: Kit, zone: object) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    await svc.pending(sid)
    before = snapshot(svc, sid)
    with pytest.raises(DshError) as failure:
        await svc.prepare_step(sid, 2, 1, Prompt("hi", client_time_zone=zone))  # type: ignore[arg-type]
    assert failure.value.code == errors.INVALID_TIME_ZONE
    assert snapshot(svc, sid) == before


async def test_a_valid_client_time_zone_is_recorded_on_the_prompt(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    prepared = await svc.prepare_step(sid, 1, 1, Prompt("hi", client_time_zone="Europe/Paris"))
    prompt: Message = prepared.messages[0]
    assert prompt.source["clientTimeZone"] == "Europe/Paris"
    assert isinstance(prompt.source["rpcId"], str) and prompt.source["rpcId"]


async def test_steps_of_one_session_are_serialized(kit: Kit) -> None:
    fs = BlockingFS(kit.path("pkg/AGENTS.md"))
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    await svc.pending(sid)  # the projection has read pkg/AGENTS.md; the next read is the step's
    kit.write("pkg/AGENTS.md", "pkg rules v2\n")
    fs.armed = True
    first = asyncio.create_task(svc.prepare_step(sid, 1, 2, None))
    try:
        await asyncio.to_thread(fs.entered.wait)
        appended = asyncio.create_task(
            svc.append(sid, [{"type": "session/title", "data": {"title": "while blocked"}}])
        )
        for _ in range(20):  # let the append reach the session lock while the step holds it
            await asyncio.sleep(0)
        assert not appended.done()
    finally:
        fs.release.set()
    prepared: PreparedStep = await first
    # The append queued behind the step's session lock, so it lands after the whole step
    # (step/start, two messages, the inbox splice) rather than in the middle of it.
    assert await appended == [prepared.seqs[-1] + 2]
    assert all_changes(prepared.messages) == [
        ("set", "pkg/AGENTS.md"),
        ("replace", "pkg/AGENTS.md"),
    ]
    check_store_consistent(svc, sid)

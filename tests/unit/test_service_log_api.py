"""The log-facing session API: open, list, append, compact, events, surface.

The contract: docs/protocol.md, Sessions.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import pytest
from tests.support.sessionkit import Kit, Prompt, check_store_consistent, opened, start

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import Message
from dsh_sidecar.sessions.service import SessionService


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    yield k
    await k.close()


def user(text: str) -> dict[str, Any]:
    return {"type": "user/message", "data": Message.user([text], {"kind": "user"}).to_json()}


def reply(text: str, kind: str = "assistant/message") -> dict[str, Any]:
    role: Literal["user", "assistant"] = "assistant" if kind == "assistant/message" else "user"
    message = Message(
        id=f"m-{text}",
        role=role,
        content=({"type": "text", "text": text},),
        source={"kind": "model"},
    )
    return {"type": kind, "data": {"turn": 1, "step": 1, "message": message.to_json()}}


async def fresh(kit: Kit) -> tuple[SessionService, str]:
    svc = kit.service()
    return svc, await opened(kit, svc)


# --- open and list -----------------------------------------------------------------------------


async def test_open_creates_then_resumes(kit: Kit) -> None:
    svc = kit.service()
    header, resumed = await svc.open_session(kit.root.as_uri(), "chosen-id", "a title")
    assert (header.id, header.cwd, header.title, resumed) == (
        "chosen-id",
        str(kit.root),
        "a title",
        False,
    )
    assert await svc.open_session(str(kit.root), "chosen-id") == (header, True)
    other = kit.service()
    kit.write("elsewhere/x", "")
    # The stored header wins over the cwd a resuming client passes.
    assert await other.open_session(str(kit.root / "elsewhere"), "chosen-id") == (header, True)
    minted, resumed = await svc.open_session(str(kit.root))
    assert not resumed and minted.id != "chosen-id" and len(minted.id) == 36


# A cwd of the wrong type never reaches the service: the wire refuses it (tests/protocol/test_param_ranges.py).
@pytest.mark.parametrize("cwd", ["relative/path", "", "file://otherhost/tmp", "/does/not/exist"])
async def test_open_refuses_a_bad_cwd(kit: Kit, cwd: str) -> None:
    svc = kit.service()
    with pytest.raises(DshError) as failure:
        await svc.open_session(cwd)
    assert failure.value.code == errors.INVALID_CWD
    assert svc.store.list_sessions() == []


async def test_open_refuses_a_file_as_cwd(kit: Kit) -> None:
    svc = kit.service()
    with pytest.raises(DshError) as failure:
        await svc.open_session(str(kit.write("f.txt", "")))
    assert failure.value.code == errors.INVALID_CWD


async def test_list_is_newest_first_then_by_id_with_query_and_limit(kit: Kit) -> None:
    times = iter([100, 300, 300, 200])
    svc = kit.service(clock=lambda: next(times, 999))
    for sid, title in (("d", "alpha"), ("b", "beta"), ("a", None), ("c", "Alphabet")):
        await svc.open_session(str(kit.root), sid, title)
    assert [h.id for h in await svc.list_sessions()] == ["a", "b", "c", "d"]
    assert [h.id for h in await svc.list_sessions(limit=2)] == ["a", "b"]
    assert [h.id for h in await svc.list_sessions("ALPHA")] == ["c", "d"]
    await svc.append("a", [{"type": "session/title", "data": {"title": "renamed alpha"}}])
    assert [h.id for h in await svc.list_sessions("alpha", 2)] == ["a", "c"]


# --- append ------------------------------------------------------------------------------------


async def test_append_assigns_contiguous_seqs_and_grows_the_surface(kit: Kit) -> None:
    svc, sid = await fresh(kit)
    seqs = await svc.append(sid, [user("q"), reply("a"), reply("t", "tool/result")])
    assert seqs == [0, 1, 2]
    seqs = await svc.append(
        sid, [{"type": "session/title", "data": {"title": "named"}}, user("q2")]
    )
    assert seqs == [3, 4]
    assert svc.store.surface_seqs(sid) == [0, 1, 2, 4]
    assert (await svc.surface(sid)).session.title == "named"
    check_store_consistent(svc, sid)


def message_data(**changes: Any) -> dict[str, Any]:
    return {**Message.user(["x"], {"kind": "user"}).to_json(), **changes}


def user_with(**source: Any) -> dict[str, Any]:
    return {"type": "user/message", "data": message_data(source={"kind": "user", **source})}


BAD_EVENTS: list[tuple[str, Any]] = [
    ("not an object", "user/message"),
    ("lifecycle turn/start", {"type": "turn/start", "data": {"turn": 1}}),
    ("lifecycle turn/end", {"type": "turn/end", "data": {"turn": 1, "reason": "x"}}),
    ("lifecycle step/start", {"type": "step/start", "data": {"turn": 1, "step": 1}}),
    ("lifecycle step/end", {"type": "step/end", "data": {"turn": 1, "step": 1}}),
    (
        "inbox splice",
        {
            "type": "agent/inbox/spliced",
            "data": {"target": "next-step", "start": 0, "inserted": []},
        },
    ),
    ("unknown type", {"type": "user/said", "data": {}}),
    ("data not an object", {"type": "user/message", "data": ["x"]}),
    ("no id", {"type": "user/message", "data": message_data(id="")}),
    ("wrong role", {"type": "user/message", "data": message_data(role="assistant")}),
    ("content not a list", {"type": "user/message", "data": message_data(content="x")}),
    (
        "text block without text",
        {"type": "user/message", "data": message_data(content=[{"type": "text"}])},
    ),
    ("source without kind", {"type": "user/message", "data": message_data(source={})}),
    ("unknown time zone", user_with(rpcId="r", clientTimeZone="Mars/Olympus_Mons")),
    ("alias time zone", user_with(rpcId="r", clientTimeZone="US/Eastern")),
    ("padded time zone", user_with(clientTimeZone=" UTC")),
    ("rpcId not a string", user_with(rpcId=7)),
    (
        "context forged by a client",
        {
            "type": "user/message",
            "data": message_data(source={"kind": "agent-instructions", "changes": []}),
        },
    ),
    ("replace op", {**user("x"), "surfaceOp": {"op": "replace", "start": 0, "end": 0}}),
    ("malformed op", {**user("x"), "surfaceOp": "prepend"}),
    (
        "assistant without step",
        {
            "type": "assistant/message",
            "data": {"turn": 1, "message": reply("a")["data"]["message"]},
        },
    ),
    (
        "assistant with step 0",
        {"type": "assistant/message", "data": {**reply("a")["data"], "step": 0}},
    ),
    (
        "assistant with bool turn",
        {"type": "assistant/message", "data": {**reply("a")["data"], "turn": True}},
    ),
    (
        "assistant message as user",
        {"type": "assistant/message", "data": reply("a", "tool/result")["data"]},
    ),
    ("title not a string", {"type": "session/title", "data": {"title": 5}}),
    (
        "title with a surface op",
        {"type": "session/title", "data": {"title": "t"}, "surfaceOp": "append"},
    ),
]


@pytest.mark.parametrize(("why", "bad"), BAD_EVENTS, ids=[why for why, _ in BAD_EVENTS])
async def test_one_bad_event_rejects_the_whole_call(kit: Kit, why: str, bad: Any) -> None:
    svc, sid = await fresh(kit)
    await svc.append(sid, [user("before")])
    with pytest.raises(DshError) as failure:
        await svc.append(sid, [user("fine"), reply("fine too"), bad, user("after")])
    assert failure.value.code == errors.INVALID_EVENT, why
    assert failure.value.data == {"index": 2}
    assert failure.value.message.startswith("events[2]: ")
    assert [e.seq for e in svc.store.events(sid)] == [0]
    assert svc.store.surface_seqs(sid) == [0]


async def test_a_canonical_client_time_zone_is_accepted(kit: Kit) -> None:
    svc, sid = await fresh(kit)
    event = user_with(rpcId="r1", clientTimeZone="America/New_York")
    assert await svc.append(sid, [event, user_with(clientTimeZone="UTC")]) == [0, 1]


@pytest.mark.parametrize("events", [[], None, {"type": "user/message"}, "x"])
async def test_append_needs_a_non_empty_list(kit: Kit, events: Any) -> None:
    svc, sid = await fresh(kit)
    with pytest.raises(DshError) as failure:
        await svc.append(sid, events)
    assert failure.value.code == errors.INVALID_EVENT


async def test_append_to_an_unknown_session(kit: Kit) -> None:
    svc, _ = await fresh(kit)
    with pytest.raises(DshError) as failure:
        await svc.append("nope", [user("x")])
    assert failure.value.code == errors.UNKNOWN_SESSION


async def test_append_reaches_a_session_open_in_another_sidecar(kit: Kit) -> None:
    owner, sid = await fresh(kit)
    other = kit.service()  # shares the store file but never opened the session
    assert await other.append(sid, [user("from elsewhere")]) == [0]
    assert [e.seq for e in owner.store.events(sid)] == [0]


# --- compact -----------------------------------------------------------------------------------


async def test_compact_replaces_a_surface_range_with_a_checkpoint(kit: Kit) -> None:
    svc, sid = await fresh(kit)
    await svc.append(sid, [user(str(i)) for i in range(5)])
    seq = await svc.compact(sid, 1, 3, "summary of 1-3", "cmp-1")
    assert seq == 5
    snapshot = await svc.surface(sid)
    assert [e.seq for e in snapshot.events] == [0, 5, 4]
    assert snapshot.captured_through_seq == 5
    checkpoint = snapshot.events[1]
    assert checkpoint.surface_op == {"op": "replace", "start": 1, "end": 3}
    assert checkpoint.source_event_seqs == (1, 2, 3)
    message = checkpoint.message()
    assert message is not None and message.text == "summary of 1-3"
    assert message.source == {"kind": "plugin", "plugin": "compact", "compactionId": "cmp-1"}
    minted = await svc.compact(sid, 0, 2, "all of it")
    checkpoint2 = (await svc.surface(sid)).events[0]
    assert checkpoint2.seq == minted and checkpoint2.source_event_seqs == (0, 5, 4)
    assert checkpoint2.data["source"]["compactionId"]
    check_store_consistent(svc, sid)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ((0, 3, "s"), errors.INVALID_EVENT),
        ((2, 1, "s"), errors.INVALID_EVENT),
    ],
)
async def test_compact_validation_writes_nothing(
    kit: Kit, args: tuple[Any, ...], code: str
) -> None:
    svc, sid = await fresh(kit)
    await svc.append(sid, [user("a"), user("b"), user("c")])
    with pytest.raises(DshError) as failure:
        await svc.compact(sid, *args)
    assert failure.value.code == code
    assert svc.store.last_seq(sid) == 2
    assert svc.store.surface_seqs(sid) == [0, 1, 2]


# --- events and surface ------------------------------------------------------------------------


async def test_events_after_seq_with_limit_and_default_cap(kit: Kit) -> None:
    svc, sid = await fresh(kit)
    titles = [{"type": "session/title", "data": {"title": str(i)}} for i in range(1005)]
    await svc.append(sid, titles)
    assert [e.seq for e in await svc.events(sid)] == list(range(1000))
    assert [e.seq for e in await svc.events(sid, 998)] == list(range(999, 1005))
    assert [e.seq for e in await svc.events(sid, 10, 3)] == [11, 12, 13]
    assert [e.seq for e in await svc.events(sid, -5, 2)] == [0, 1]
    assert await svc.events(sid, 1004) == []
    with pytest.raises(DshError) as unknown:
        await svc.events("nope")
    assert unknown.value.code == errors.UNKNOWN_SESSION


async def test_surface_lists_visible_events_in_model_order(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    svc, sid = await fresh(kit)
    empty = await svc.surface(sid)
    assert (empty.captured_through_seq, empty.events) == (None, ())
    await start(svc, sid, "first")
    await svc.append(sid, [reply("answer")])
    await svc.compact(sid, 0, 0, "the prompt, briefly")
    prepared = await svc.prepare_step(sid, 2, 1, Prompt("second"))
    snapshot = await svc.surface(sid)
    assert snapshot.session.id == sid
    assert snapshot.captured_through_seq == svc.store.last_seq(sid)
    kinds = [e.message().source["kind"] for e in snapshot.events]  # type: ignore[union-attr]
    assert kinds == ["plugin", "agent-instructions", "model", "user"]
    assert snapshot.events[-1].seq == prepared.seqs[-1]
    with pytest.raises(DshError) as unknown:
        await svc.surface("nope")
    assert unknown.value.code == errors.UNKNOWN_SESSION


async def test_the_inbox_callback_reports_every_change_with_its_count(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    kit.write("pkg/AGENTS.md", "pkg rules\n")
    svc, sid = await fresh(kit)
    counter = itertools.count()
    tokens = (f"t{next(counter)}" for _ in itertools.repeat(None))
    await svc.prepare_step(sid, 1, 1, None)  # queues the baseline
    svc.tool_result(sid, next(tokens), None, "read", {"file_path": "pkg/a"}, False)  # staged
    await svc.end_step(sid, 1, 1)  # releases: baseline and pkg set now share one message
    await svc.pending(sid)
    kit.write("pkg/AGENTS.md", "pkg rules v2\n")
    svc.tool_result(sid, next(tokens), None, "read", {"file_path": "pkg/a"}, False)
    svc.tool_result(sid, next(tokens), None, "read", {"file_path": "pkg/a"}, False)  # no change
    await svc.pending(sid)
    await svc.prepare_step(sid, 1, 2, None)  # claims it
    await svc.end_step(sid, 1, 2)
    svc.tool_result(sid, next(tokens), None, "read", {"file_path": "pkg/a"}, False)  # entered
    await svc.pending(sid)
    assert kit.notes == [(sid, 1), (sid, 1), (sid, 1), (sid, 0)]
    check_store_consistent(svc, sid)

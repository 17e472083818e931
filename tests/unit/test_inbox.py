"""The next-step inbox: logged splices, their replay, and upstream's syncInbox rules
(docs/reference/agent-instructions.md, Inbox sync)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.model import INBOX_SPLICED, Event, Message, SessionHeader
from dsh_sidecar.sessions.inbox import same_inbox, splice_draft
from dsh_sidecar.sessions.store import Store, replay_inbox
from dsh_sidecar.sources.agent_instructions.compose import sync_inbox
from dsh_sidecar.sources.agent_instructions.state import Change, make_source


def context(text: str, path: str = "pkg/AGENTS.md") -> Message:
    change = Change("set", f"pkg\u0000{path.rsplit('/', 1)[-1]}", path, "0" * 40)
    return Message.user([text], make_source([change]))


def note(text: str) -> Message:
    return Message.user([text], {"kind": "user"})


def replayed(old: list[Message], new: list[Message]) -> list[dict[str, object]]:
    splice = splice_draft(old, new)
    assert splice is not None
    seed = Event(
        0,
        INBOX_SPLICED,
        0,
        {"target": "next-step", "start": 0, "inserted": [m.to_json() for m in old]},
    )
    return replay_inbox([seed, Event(1, splice.type, 0, splice.data)])


def test_no_change_no_splice() -> None:
    a = context("a")
    assert splice_draft([a], [a]) is None
    assert splice_draft([], []) is None


def test_splice_shapes() -> None:
    a, b, c = context("a"), context("b"), note("c")
    prepend = splice_draft([c], [a, c])
    assert prepend is not None
    assert prepend.data == {"target": "next-step", "start": 0, "inserted": [a.to_json()]}
    swap = splice_draft([a, c], [b, c])
    assert swap is not None
    assert swap.data == {
        "target": "next-step",
        "start": 0,
        "removedCount": 1,
        "inserted": [b.to_json()],
    }
    drop = splice_draft([c, a], [c])
    assert drop is not None
    assert drop.data == {"target": "next-step", "start": 1, "removedCount": 1, "inserted": []}


def test_same_inbox_compares_ids_and_payloads() -> None:
    a = context("a")
    twin = Message.user(list(b["text"] for b in a.content), a.source)
    assert same_inbox([a], [a])
    assert not same_inbox([a], [twin])  # same payload, new id: a different queued message
    assert not same_inbox([a], [])


inbox_states = st.lists(
    st.lists(st.integers(0, 5), max_size=4, unique=True), min_size=1, max_size=12
)


@settings(max_examples=examples(80), deadline=None)
@given(inbox_states)
def test_materialized_inbox_equals_the_replay_of_its_splices(states: list[list[int]]) -> None:
    pool = [context(f"m{i}") if i % 2 else note(f"m{i}") for i in range(6)]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "s.sqlite3"), durable=False)
        store.create_session(SessionHeader("s", 1, "/w"))
        current: list[Message] = []
        for state in states:
            target = [pool[i] for i in state]
            splice = splice_draft(current, target)
            if splice is not None:
                store.append("s", [splice], inbox=target)
            current = target
            log = [e for e in store.events("s") if e.type == INBOX_SPLICED]
            assert [m.to_json() for m in store.inbox("s")] == replay_inbox(log)
            assert store.inbox("s") == target
        store.close()


def test_replay_ignores_other_targets() -> None:
    a = context("a")
    log = [
        Event(0, INBOX_SPLICED, 0, {"target": "next-step", "start": 0, "inserted": [a.to_json()]}),
        Event(
            1,
            INBOX_SPLICED,
            0,
            {"target": "elsewhere", "start": 0, "removedCount": 1, "inserted": []},
        ),
    ]
    assert replay_inbox(log) == [a.to_json()]
    assert replayed([a], []) == []


# --- syncInbox ---------------------------------------------------------------------------------


def test_sync_removes_pending_when_nothing_is_due() -> None:
    a, n = context("a"), note("n")
    assert sync_inbox([a, n], None) == [n]


def test_sync_drops_pending_when_the_payload_is_already_claimed_or_visible() -> None:
    a, n = context("a"), note("n")
    desired = context("d")
    same = Message.user(["d"], desired.source)
    assert sync_inbox([a, n], desired, claimed=[same]) == [n]
    assert sync_inbox([a, n], desired, visible=[same]) == [n]


def test_sync_keeps_a_pending_twin_with_its_id_and_drops_the_rest() -> None:
    first, twin, n = context("x"), context("d"), note("n")
    desired = Message.user(["d"], twin.source)
    out = sync_inbox([first, n, twin], desired)
    assert out == [n, twin]
    assert out[1].id == twin.id != desired.id


def test_sync_prepends_when_nothing_is_pending() -> None:
    n, desired = note("n"), context("d")
    assert sync_inbox([n], desired) == [desired, n]


def test_sync_replaces_the_first_pending_in_place() -> None:
    a, b, n = context("a"), context("b"), note("n")
    desired = context("d")
    assert sync_inbox([n, a, b], desired) == [n, desired]

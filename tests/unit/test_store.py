"""The SQLite store: file safety, pragmas, seqs, atomic writes, materialized folds, indexes."""

from __future__ import annotations

import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.property_budget import examples

from dsh_sidecar.model import (
    ASSISTANT_MESSAGE,
    SESSION_TITLE,
    STEP_START,
    USER_MESSAGE,
    Event,
    Message,
    SessionHeader,
)
from dsh_sidecar.sessions.store import (
    BUSY_TIMEOUT_MS,
    EVENTS_OF_TYPE_SQL,
    LATEST_OF_SOURCE_SQL,
    NO_FSYNC_ENV,
    VISIBLE_OF_SOURCE_SQL,
    EventDraft,
    Store,
)
from dsh_sidecar.sessions.surface import SurfaceOpError, fold_surface


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def user(text: str, **source: str) -> Message:
    return Message.user([text], {"kind": "user", **source})


def said(text: str) -> EventDraft:
    return EventDraft(USER_MESSAGE, user(text).to_json(), "append")


def new_store(path: Path, *ids: str) -> Store:
    store = Store(str(path), clock=lambda: 1000, durable=False)
    for i, sid in enumerate(ids):
        assert store.create_session(SessionHeader(sid, 10 + i, "/w"))
    return store


def test_store_file_is_0600_in_directories_created_0700(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "s.sqlite3"
    store = new_store(path, "s")
    store.append("s", [said("x")])
    assert mode(tmp_path / "a") == 0o700
    assert mode(tmp_path / "a" / "b") == 0o700
    assert mode(path) == 0o600
    # SQLite copies the database file's mode to its WAL, which holds the same secrets.
    assert mode(Path(f"{path}-wal")) == 0o600
    store.close()


def test_existing_store_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    new_store(path).close()
    path.chmod(0o640)
    Store(str(path), durable=False).close()
    assert mode(path) == 0o640


def test_wal_full_sync_and_busy_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_FSYNC_ENV, raising=False)
    store = Store(str(tmp_path / "s.sqlite3"))
    assert store.pragma("journal_mode") == "wal"
    assert store.pragma("busy_timeout") == BUSY_TIMEOUT_MS > 0
    assert store.pragma("synchronous") == 2  # FULL
    with pytest.raises(ValueError):
        store.pragma("journal_mode = DELETE")
    store.close()


def test_fsync_is_skipped_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "s.sqlite3")

    def synchronous(durable: bool | None = None) -> int:
        store = Store(path, durable=durable)
        try:
            return int(store.pragma("synchronous"))
        finally:
            store.close()

    monkeypatch.setenv(NO_FSYNC_ENV, "1")
    unsynced = Store(path)
    assert unsynced.pragma("synchronous") == 0  # OFF
    monkeypatch.delenv(NO_FSYNC_ENV)
    assert unsynced.pragma("synchronous") == 0  # read once, when the store opened
    unsynced.close()
    assert synchronous() == 2  # FULL
    monkeypatch.setenv(NO_FSYNC_ENV, "1")
    assert synchronous(durable=True) == 2  # an explicit choice wins
    monkeypatch.setenv(NO_FSYNC_ENV, "yes")
    assert synchronous() == 2  # only "1" turns it off
    assert synchronous(durable=False) == 0


def test_seqs_are_contiguous_from_zero_per_session(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite3", "a", "b")
    got: dict[str, list[int]] = {"a": [], "b": []}
    for round_ in range(4):
        for sid in ("a", "b"):
            batch = [said(f"{sid}{round_}.{i}") for i in range(round_ + 1)]
            got[sid] += [e.seq for e in store.append(sid, batch)]
    assert got["a"] == got["b"] == list(range(10))
    assert [e.seq for e in store.events("a")] == list(range(10))
    assert store.last_seq("a") == 9
    store.close()


def test_failing_append_in_the_middle_of_a_batch_leaves_nothing(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite3", "s")
    store.append("s", [said("one"), said("two")], inbox=[user("queued")])
    before = (store.events("s"), store.surface_seqs("s"), store.inbox("s"))
    bad = EventDraft(USER_MESSAGE, user("c").to_json(), {"op": "replace", "start": 0, "end": 5})
    with pytest.raises(SurfaceOpError):
        store.append(
            "s",
            [said("three"), EventDraft(SESSION_TITLE, {"title": "t"}), bad, said("four")],
            inbox=[],
        )
    assert (store.events("s"), store.surface_seqs("s"), store.inbox("s")) == before
    assert store.get_session("s") == SessionHeader("s", 10, "/w")  # the title did not stick
    # The seq counter was rolled back too: the next append continues where the log ends.
    assert [e.seq for e in store.append("s", [said("five")])] == [2]
    store.close()


@pytest.mark.parametrize(
    "op",
    [
        {"op": "replace", "start": 1, "end": 0},
        {"op": "replace", "start": -1, "end": 0},
        {"op": "replace", "start": 0, "end": 2},
        {"op": "replace", "start": True, "end": 1},
        {"op": "replace", "start": 0},
        {"op": "merge", "start": 0, "end": 0},
        "prepend",
    ],
)
def test_malformed_or_out_of_range_surface_ops_are_refused(tmp_path: Path, op: object) -> None:
    store = new_store(tmp_path / "s.sqlite3", "s")
    store.append("s", [said("one"), said("two")])
    with pytest.raises(SurfaceOpError):
        store.append("s", [EventDraft(USER_MESSAGE, user("c").to_json(), op)])
    assert store.surface_seqs("s") == [0, 1]
    assert store.last_seq("s") == 1
    store.close()


def test_surface_op_on_a_non_surface_event_is_refused(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite3", "s")
    with pytest.raises(SurfaceOpError):
        store.append("s", [EventDraft(STEP_START, {"turn": 1, "step": 1}, "append")])
    assert store.events("s") == []
    store.close()


def test_append_to_an_unknown_session_raises(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite3")
    with pytest.raises(KeyError):
        store.append("nope", [said("x")])
    store.close()


def test_compact_records_the_shadowed_seqs_and_rejects_bad_ranges(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite3", "s")
    store.append("s", [said(str(i)) for i in range(5)])
    first = store.compact("s", user("summary"), 1, 3)
    assert first.source_event_seqs == (1, 2, 3)
    assert store.surface_seqs("s") == [0, 5, 4]
    second = store.compact("s", user("summary 2"), 0, 1)
    assert second.source_event_seqs == (0, 5)
    assert store.surface_seqs("s") == [6, 4]
    for start, end in ((0, 2), (1, 0), (-1, 0)):
        with pytest.raises(SurfaceOpError):
            store.compact("s", user("bad"), start, end)
    assert store.last_seq("s") == 6
    assert store.surface_seqs("s") == fold_surface(store.events("s"))
    store.close()


# --- the materialized surface is the fold of the log -------------------------------------------

surface_ops = st.lists(
    st.one_of(
        st.tuples(st.just("say"), st.integers(1, 3)),
        st.tuples(st.just("title"), st.just(0)),
        st.tuples(st.just("compact"), st.integers(0, 10**6), st.integers(0, 10**6)),
        st.tuples(st.just("bad"), st.integers(-2, 12), st.integers(-2, 12)),
    ),
    max_size=30,
)


@settings(max_examples=examples(60), deadline=None)
@given(surface_ops)
def test_materialized_surface_equals_the_pure_fold(ops: list[tuple[int | str, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = new_store(Path(tmp) / "s.sqlite3", "s")
        for op in ops:
            size = store.surface_size("s")
            if op[0] == "say":
                store.append("s", [said("x") for _ in range(int(op[1]))])
            elif op[0] == "title":
                store.append("s", [EventDraft(SESSION_TITLE, {"title": "t"})])
            elif op[0] == "compact" and size:
                a, b = sorted((int(op[1]) % size, int(op[2]) % size))
                store.compact("s", user("sum"), a, b)
            elif op[0] == "bad":
                a, b = int(op[1]), int(op[2])
                if 0 <= a <= b < size + 1:  # "lost" lands first, so the surface has grown by one
                    continue
                draft = EventDraft(
                    ASSISTANT_MESSAGE,
                    {"turn": 1, "step": 1, "message": user("m").to_json()},
                    {"op": "replace", "start": a, "end": b},
                )
                with pytest.raises(SurfaceOpError):
                    store.append("s", [said("lost"), draft])
            log = store.events("s")
            assert [e.seq for e in log] == list(range(len(log)))
            assert store.surface_seqs("s") == fold_surface(log)
            assert [e.seq for e in store.surface_events("s")] == fold_surface(log)
        store.close()


# --- indexed look-ups ----------------------------------------------------------------------------


def query_plan(path: Path, sql: str, args: tuple[object, ...]) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [str(row[-1]) for row in db.execute("EXPLAIN QUERY PLAN " + sql, args)]
    finally:
        db.close()


def test_latest_of_source_is_answered_by_the_source_index(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    new_store(path).close()
    plan = query_plan(path, LATEST_OF_SOURCE_SQL, ("s", "plugin", "time-context"))
    assert plan == [
        "SEARCH events USING INDEX events_by_source (session_id=? AND source_kind=? AND source_plugin=?)"
    ]  # one seek, no SCAN, and no sort because the index is already in seq order


def test_visible_of_source_reads_the_source_not_the_log(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    new_store(path).close()
    plan = query_plan(path, VISIBLE_OF_SOURCE_SQL, ("s", "agent-instructions"))
    assert plan[0] == "SEARCH e USING INDEX events_by_source (session_id=? AND source_kind=?)"
    assert not any(line.startswith("SCAN") for line in plan), plan


def test_events_of_one_type_are_read_through_the_type_index(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    new_store(path).close()
    plan = query_plan(path, EVENTS_OF_TYPE_SQL, ("s", "agent/inbox/discarded"))
    assert plan == ["SEARCH events USING INDEX events_by_type (session_id=? AND type=?)"]


def test_latest_of_source_sees_shadowed_events_and_matches_plugin_exactly(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite3", "s", "other")

    def reading(plugin: str | None, text: str) -> EventDraft:
        source = {"kind": "plugin", "plugin": plugin} if plugin else {"kind": "plugin"}
        return EventDraft(USER_MESSAGE, Message.user([text], source).to_json(), "append")

    store.append("s", [reading("alpha", "t1"), reading(None, "bare"), said("u")])
    store.append("s", [reading("alpha", "t2"), reading("beta", "x")])
    store.append("other", [reading("alpha", "elsewhere")])
    store.compact("s", user("sum"), 0, 4)  # shadows every reading
    latest = store.latest_of_source("s", "plugin", "alpha")
    assert latest is not None and latest.seq == 3
    bare = store.latest_of_source("s", "plugin", None)
    assert bare is not None and bare.seq == 1
    assert store.latest_of_source("s", "agent-instructions") is None
    assert store.visible_events_of_source("s", "plugin") == []
    store.close()


def test_sessions_newest_first_then_id_and_duplicates_refused(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.sqlite3"), durable=False)
    for sid, created in (("b", 5), ("a", 5), ("c", 9), ("d", 1)):
        assert store.create_session(SessionHeader(sid, created, "/w"))
    assert not store.create_session(SessionHeader("a", 99, "/elsewhere"))
    assert [h.id for h in store.list_sessions()] == ["c", "a", "b", "d"]
    assert store.get_session("a") == SessionHeader("a", 5, "/w")
    store.append("a", [EventDraft(SESSION_TITLE, {"title": "named"})])
    assert store.get_session("a") == SessionHeader("a", 5, "/w", "named")
    store.close()


def test_reopening_the_file_sees_everything(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = new_store(path, "s")
    store.append("s", [said("a"), said("b")], inbox=[user("q")])
    store.compact("s", user("sum"), 0, 0)
    events, inbox = store.events("s"), store.inbox("s")
    store.close()
    again = Store(str(path), durable=False)
    assert again.events("s") == events
    assert again.inbox("s") == inbox
    assert again.surface_seqs("s") == [2, 1]
    assert [e.seq for e in again.append("s", [said("c")])] == [3]
    again.close()


class RacedStore(Store):
    """Another connection commits an append between the reads of every surface snapshot."""

    other: Store | None = None

    def surface_events(self, session_id: str) -> list[Event]:
        if self.other is not None:
            self.other.append(session_id, [said("sneaked in")])
        return super().surface_events(session_id)


def test_a_surface_snapshot_is_one_state_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = RacedStore(str(path), durable=False)
    store.create_session(SessionHeader("s", 1, "/w"))
    store.append("s", [said("a")])
    store.other = Store(str(path), durable=False)  # what another sidecar process would hold
    for expected_last in (0, 1, 2):
        snapshot = store.surface_snapshot("s")
        assert snapshot is not None
        assert snapshot.captured_through_seq == expected_last
        assert [e.seq for e in snapshot.events] == list(range(expected_last + 1))
    assert store.surface_snapshot("nope") is None
    store.other.close()
    store.close()


def test_delete_session_removes_everything_of_it_durably(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = new_store(path, "gone", "kept")
    store.append("gone", [said("one"), said("two")], inbox=[user("pending")])
    store.append("kept", [said("stays")])
    assert store.delete_session("gone") is True
    assert store.delete_session("gone") is False  # nothing left to delete
    store.close()
    reopened = Store(str(path), clock=lambda: 1000, durable=False)
    assert [h.id for h in reopened.list_sessions()] == ["kept"]
    assert reopened.get_session("gone") is None
    assert reopened.events("gone") == [] and reopened.surface_events("gone") == []
    assert reopened.inbox("gone") == []
    assert [e.data["content"][0]["text"] for e in reopened.events("kept")] == ["stays"]

"""Store schema versions: a new file is current, an old one is migrated, a newer one is refused.

The old store is ``tests/fixtures/store-schema-1.sqlite3``, written by the schema-1 code (see
tests/fixtures/README.md); every test works on a copy.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.fixtures import schema_1_rows, schema_1_store, schema_2_store
from tests.support.property_budget import examples
from tests.support.sessionkit import Kit, Prompt, changes, check_store_consistent, replace_text

from dsh_sidecar import cli
from dsh_sidecar.model import (
    INBOX_SPLICED,
    STEP_END,
    STEP_START,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    SessionHeader,
)
from dsh_sidecar.sessions import store as store_module
from dsh_sidecar.sessions.store import (
    SCHEMA_VERSION,
    TURN_START_SQL,
    EventDraft,
    Store,
    StoreSchemaError,
    read_schema_version,
    replay_inbox,
)
from dsh_sidecar.sessions.surface import fold_surface

LIFECYCLE = (TURN_START, TURN_END, STEP_START, STEP_END)


def old_store(directory: Path) -> Path:
    return schema_1_store(directory / "old.sqlite3")


def meta_schema(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0])
    finally:
        db.close()


def columns(path: Path, table: str) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    finally:
        db.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def scan_turn_start(log: Sequence[Event], turn: int) -> Event | None:
    """The definition ``Store.turn_start`` must agree with: a walk back through the whole log."""
    for event in reversed(log):
        value = event.data.get("turn")
        if event.type == TURN_START and type(value) is int and value == turn:
            return event
    return None


def test_fixture_is_a_schema_1_store(tmp_path: Path) -> None:
    # Guards the premise of every test below: the fixture really is the old format.
    path = old_store(tmp_path)
    assert meta_schema(path) == "1"
    assert "turn" not in columns(path, "events")
    assert read_schema_version(str(path)) == 1


def test_new_store_is_created_at_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = Store(str(path), durable=False)
    assert store.migrated_from is None
    store.close()
    assert meta_schema(path) == str(SCHEMA_VERSION) == "3"
    assert columns(path, "events")[-1] == "turn"
    assert columns(path, "sessions")[-3:] == ["agent", "agent_session", "parent_id"]
    reopened = Store(str(path), durable=False)
    assert reopened.migrated_from is None
    reopened.close()


def test_migration_preserves_every_event_surface_and_inbox(tmp_path: Path) -> None:
    path = old_store(tmp_path)
    before = schema_1_rows(path)
    store = Store(str(path), durable=False)
    assert store.migrated_from == 1
    assert schema_1_rows(path) == before
    assert meta_schema(path) == "3"
    for header in store.list_sessions():
        log = store.events(header.id)
        assert store.surface_seqs(header.id) == fold_surface(log)
        assert [m.to_json() for m in store.inbox(header.id)] == replay_inbox(
            [e for e in log if e.type == INBOX_SPLICED]
        )
    assert len(store.inbox("session-a")) == 1  # the pending replace survived
    store.close()
    # The backfill: lifecycle events carry their turn, every other event none.
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT type, data, turn FROM events").fetchall()
    finally:
        db.close()
    lifecycle = [(json.loads(data)["turn"], turn) for kind, data, turn in rows if kind in LIFECYCLE]
    assert len(lifecycle) == 14 and all(want == got for want, got in lifecycle)
    assert all(turn is None for kind, _, turn in rows if kind not in LIFECYCLE)
    again = Store(str(path), durable=False)
    assert again.migrated_from is None  # migrated once, then simply current
    again.close()


async def test_a_migrated_session_resumes_and_claims_its_pending_context(tmp_path: Path) -> None:
    """The old log is live data: the service resumes it and the next step claims its inbox."""
    kit = Kit(tmp_path)
    schema_1_store(kit.store_path)
    # The fixture's project and home, rebuilt under tmp_path with the files as the log last saw
    # them; only the copy's session headers are pointed at the new place.
    kit.write("AGENTS.md", "root rule\n")
    kit.write("pkg/AGENTS.md", "package rule, edited\n")
    kit.home.mkdir()
    (kit.home / "AGENTS.md").write_text("user-global rule\n")
    db = sqlite3.connect(kit.store_path)
    db.execute(
        "UPDATE sessions SET cwd = replace(cwd, '/tmp/dsh-store-v1/project', ?)", (str(kit.root),)
    )
    db.commit()
    db.close()
    svc = kit.service()
    header, resumed = await svc.open_session(str(kit.root), "session-a")
    assert (header.title, resumed) == ("renamed", True)
    pending = await svc.pending("session-a")
    # The compaction shadowed the first baseline, so the queued message carries a fresh one, then
    # the replace of the still-visible pkg/AGENTS.md.
    assert len(pending) == 1
    assert changes(pending[0]) == [
        ("set", "$DSH_HOME/AGENTS.md"),
        ("set", "AGENTS.md"),
        ("replace", "pkg/AGENTS.md"),
    ]
    assert pending[0].content[1]["text"] == replace_text("pkg/AGENTS.md", "package rule, edited\n")
    prepared = await svc.prepare_step("session-a", 3, 1, Prompt("go on"))
    assert prepared.messages[0].id == pending[0].id  # the inbox, then the prompt
    assert [m.text for m in prepared.messages] == [pending[0].text, "go on"]
    assert await svc.pending("session-a") == []
    log = check_store_consistent(svc, "session-a")
    for turn in (1, 2, 3):
        assert svc.store.turn_start("session-a", turn) == scan_turn_start(log, turn) is not None
    await kit.close()


def test_a_schema_2_store_gains_the_agent_columns_and_hook_events(tmp_path: Path) -> None:
    path = schema_2_store(tmp_path / "two.sqlite3")
    assert meta_schema(path) == "2"
    before = schema_1_rows(path)
    store = Store(str(path), durable=False)
    assert store.migrated_from == 2
    assert meta_schema(path) == "3"
    assert schema_1_rows(path) == before
    headers = store.list_sessions()
    assert {h.id for h in headers} == {"session-a", "session-b"}
    assert all((h.agent, h.agent_session, h.parent_id) == (None, None, None) for h in headers)
    assert not store.hook_event_seen("session-a", "tool-1")
    assert store.record_hook_event("session-a", "tool-1", None)
    assert not store.record_hook_event("session-a", "tool-1", 7)
    assert store.hook_event_seen("session-a", "tool-1")
    store.close()


def test_an_agent_session_is_created_once_and_resumed(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.sqlite3"), durable=False)
    header = SessionHeader("claude:abc", 5, "/w", agent="claude", agent_session="abc")
    assert store.open_or_create(header) == (header, False)
    other = SessionHeader("claude:abc", 9, "/elsewhere", agent="claude", agent_session="abc")
    assert store.open_or_create(other) == (header, True)
    child = SessionHeader(
        "claude:abc:sub-1", 6, "/w", agent="claude", agent_session="abc", parent_id="claude:abc"
    )
    assert store.open_or_create(child) == (child, False)
    assert store.get_session("claude:abc:sub-1") == child
    assert child.to_json() == {
        "id": "claude:abc:sub-1",
        "createdAt": 6,
        "cwd": "/w",
        "agent": "claude",
        "agentSession": "abc",
        "parentId": "claude:abc",
    }
    store.close()


def test_a_failing_migration_leaves_the_old_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = old_store(tmp_path)
    before = (schema_1_rows(path), digest(path))
    # The real migration, then a statement that fails: everything before it must roll back.
    broken = store_module.MIGRATIONS[1] + ";\nSELECT no_such_function()"
    monkeypatch.setitem(store_module.MIGRATIONS, 1, broken)
    with pytest.raises(sqlite3.OperationalError, match="no_such_function"):
        Store(str(path), durable=False)
    assert (schema_1_rows(path), meta_schema(path)) == (before[0], "1")
    assert "turn" not in columns(path, "events")
    monkeypatch.undo()
    assert Store(str(path), durable=False).migrated_from == 1  # and it migrates once fixed


def test_newer_store_is_refused_naming_the_file_and_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    Store(str(path), durable=False).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    db.commit()
    db.close()
    before = digest(path)
    with pytest.raises(StoreSchemaError) as caught:
        Store(str(path), durable=False)
    assert str(caught.value) == (
        f"{path} has session store schema version 4, newer than this dsh-sidecar supports (3):"
        " upgrade dsh-sidecar, or point store.path at another file"
    )
    assert (digest(path), meta_schema(path)) == (before, "4")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            "CREATE TABLE notes (body TEXT)",
            "is an SQLite database but not a dsh-sidecar session store",
        ),
        (
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
            "is an SQLite database but not a dsh-sidecar session store",
        ),
        (
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', 'two')",
            "has an unreadable schema version 'two'",
        ),
        (
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '0')",
            "has session store schema version 0, which has no migration",
        ),
    ],
)
def test_a_file_that_is_not_a_usable_store_is_refused_untouched(
    tmp_path: Path, setup: str, message: str
) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.executescript(setup)
    db.close()
    tables = columns(path, "sqlite_master")
    before = digest(path)
    with pytest.raises(StoreSchemaError, match=message):
        Store(str(path), durable=False)
    assert digest(path) == before
    assert columns(path, "sqlite_master") == tables


# --- turn_start ----------------------------------------------------------------------------------


def test_turn_start_is_one_index_seek(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    Store(str(path), durable=False).close()
    db = sqlite3.connect(path)
    try:
        plan = [str(r[-1]) for r in db.execute("EXPLAIN QUERY PLAN " + TURN_START_SQL, ("s", 4))]
    finally:
        db.close()
    # One seek on all three key columns, already in seq order: no SCAN, no sort.
    assert plan == ["SEARCH events USING INDEX events_by_turn (session_id=? AND type=? AND turn=?)"]


# Turn values as they can appear in an event's JSON: integers of every size (beyond SQLite's
# 64 bits too), and the non-integers a scan must not mistake for one.
turn_values = st.one_of(
    st.integers(1, 6),
    st.integers(-3, 0),
    st.sampled_from([2**63 - 1, 2**63, 2**70, -(2**63), -(2**63) - 1]),
    st.sampled_from([True, False, 1.0, 2.5, "1", None, [1], {"n": 1}]),
)
lifecycle_drafts = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]), st.sampled_from([*LIFECYCLE, USER_MESSAGE]), turn_values
    ),
    max_size=25,
)
ASKED = [*range(-3, 8), 2**63 - 1, 2**63, 2**70, -(2**63), -(2**63) - 1]


def draft(kind: str, turn: Any) -> EventDraft:
    if kind == USER_MESSAGE:
        return EventDraft(USER_MESSAGE, {"turn": turn})  # a turn key outside lifecycle events
    return EventDraft(kind, {"turn": turn, "step": 1})


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def check_agreement(store: Store, sessions: Sequence[str]) -> None:
    for sid in sessions:
        log = store.events(sid)
        for turn in ASKED:
            assert store.turn_start(sid, turn) == scan_turn_start(log, turn), (sid, turn)


@settings(max_examples=examples(60), deadline=None)
@given(lifecycle_drafts)
def test_turn_start_agrees_with_a_scan_for_appended_events(
    scratch: Path, drafts: list[tuple[str, str, Any]]
) -> None:
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        store = Store(f"{tmp}/s.sqlite3", durable=False)
        for sid in ("a", "b"):
            store.create_session(SessionHeader(sid, 0, "/w"))
        for sid, kind, turn in drafts:
            store.append(sid, [draft(kind, turn)])
        check_agreement(store, ("a", "b"))
        store.close()


@settings(max_examples=examples(40), deadline=None)
@given(lifecycle_drafts)
def test_turn_start_agrees_with_a_scan_for_migrated_events(
    scratch: Path, drafts: list[tuple[str, str, Any]]
) -> None:
    """The backfill reads JSON turns the way appends do, whatever the old log holds."""
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        path = old_store(Path(tmp))
        db = sqlite3.connect(path)
        next_seq = {"a": 0, "b": 0}
        for sid in next_seq:
            db.execute("INSERT INTO sessions (id, created_at, cwd) VALUES (?, 0, '/w')", (sid,))
        for sid, kind, turn in drafts:
            data = json.dumps(draft(kind, turn).data)
            db.execute(
                "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, 0, ?)",
                (sid, next_seq[sid], kind, data),
            )
            next_seq[sid] += 1
        for sid, seq in next_seq.items():
            db.execute("UPDATE sessions SET next_seq = ? WHERE id = ?", (seq, sid))
        db.commit()
        db.close()
        store = Store(str(path), durable=False)
        assert store.migrated_from == 1
        check_agreement(store, ("a", "b", "session-a", "session-b"))
        store.close()


# --- doctor ----------------------------------------------------------------------------------------


def doctor(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, str]]:
    settings_path = tmp_path / "settings.json"
    settings_path.write_text(json.dumps({"store": {"path": str(store)}}))
    code = cli.main(["doctor", "--settings", str(settings_path)])
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        name, _, value = line.partition(" ")
        rows[name] = value.strip()
    return code, rows


def test_doctor_reports_an_old_store_as_healthy_and_leaves_it_old(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = old_store(tmp_path)
    before = digest(path)
    code, rows = doctor(tmp_path, path, capsys)
    assert (code, rows["schema"], rows["status"]) == (
        0,
        "1, migrated to 3 when the sidecar next opens it",
        "ok",
    )
    assert (digest(path), meta_schema(path)) == (before, "1")


def test_doctor_reports_a_newer_store_as_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sqlite3"
    Store(str(path), durable=False).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '7' WHERE key = 'schema'")
    db.commit()
    db.close()
    code, rows = doctor(tmp_path, path, capsys)
    refusal = (
        f"{path} has session store schema version 7, newer than this dsh-sidecar supports (3):"
        " upgrade dsh-sidecar, or point store.path at another file"
    )
    assert (code, rows["schema"], rows["status"]) == (1, refusal, refusal)


def test_doctor_reports_a_current_store_and_a_foreign_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = tmp_path / "s.sqlite3"
    Store(str(current), durable=False).close()
    assert doctor(tmp_path, current, capsys)[1]["schema"] == "3 (current)"
    foreign = tmp_path / "notes.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.close()
    code, rows = doctor(tmp_path, foreign, capsys)
    assert (code, rows["schema"]) == (
        1,
        f"{foreign} is an SQLite database but not a dsh-sidecar session store",
    )
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"not sqlite at all, just some bytes long enough to be a header" * 3)
    code, rows = doctor(tmp_path, garbage, capsys)
    assert (code, rows["schema"]) == (1, f"cannot read {garbage}: file is not a database")

"""The durable session store: SQLite, embedded, one transaction per logical write.

Tables: ``sessions`` (headers and the next seq), ``events`` (the append-only log with the source
kind/plugin of each message pulled out for indexed look-ups), ``surface`` (the materialized
surface fold) and ``inbox`` (the materialized next-step inbox). The last two are derived from the
log but written in the same transaction as the events that change them, so a decision never has to
replay a long log and a crash can never leave them out of step with it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from dsh_sidecar.errors import StoreBusy
from dsh_sidecar.model import (
    INBOX_SPLICED,
    SESSION_TITLE,
    STEP_END,
    STEP_START,
    SURFACE_EVENT_TYPES,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    JsonObject,
    Message,
    SessionHeader,
    SurfaceSnapshot,
)
from dsh_sidecar.private_paths import make_private_dirs

from .surface import SurfaceOpError, apply_op, replace_range

# How long a write waits for another connection's write lock before failing with StoreBusy:
# writes are single short transactions, so this only runs out when something holds the lock.
BUSY_TIMEOUT_MS = 5_000
# The store format this code reads and writes; see docs/architecture.md, "Schema versions".
SCHEMA_VERSION = 3
# Test-only: "1" makes stores opened without an explicit ``durable`` skip fsync (README,
# Development). Never set it for a store whose contents matter.
NO_FSYNC_ENV = "DSH_TEST_STORE_NO_FSYNC"

# Lifecycle events carry their turn number in a column of its own, so "where did turn N start"
# is one index seek instead of a walk back through every turn.
LIFECYCLE_TYPES = (TURN_START, TURN_END, STEP_START, STEP_END)
_SQL_LIFECYCLE_TYPES = ", ".join(f"'{t}'" for t in LIFECYCLE_TYPES)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    cwd TEXT NOT NULL,
    title TEXT,
    next_seq INTEGER NOT NULL DEFAULT 0,
    next_ord INTEGER NOT NULL DEFAULT 0,
    agent TEXT,
    agent_session TEXT,
    parent_id TEXT
);
CREATE INDEX IF NOT EXISTS sessions_newest ON sessions (created_at DESC, id ASC);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    time INTEGER NOT NULL,
    data TEXT NOT NULL,
    surface_op TEXT,
    source_event_seqs TEXT,
    source_kind TEXT,
    source_plugin TEXT,
    turn INTEGER,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_by_type ON events (session_id, type, seq);
CREATE INDEX IF NOT EXISTS events_by_turn ON events (session_id, type, turn, seq)
    WHERE turn IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_by_source ON events (session_id, source_kind, source_plugin, seq)
    WHERE source_kind IS NOT NULL;
CREATE TABLE IF NOT EXISTS surface (
    session_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (session_id, ord)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS surface_by_seq ON surface (session_id, seq);
CREATE TABLE IF NOT EXISTS inbox (
    session_id TEXT NOT NULL,
    pos INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session_id, pos)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hook_events (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
"""

# MIGRATIONS[n] turns a schema-n store into a schema-(n+1) one. They run in the transaction that
# reads the version, so a reader never sees a half-migrated file and two processes opening an old
# store at once migrate it once (the second waits for the lock, then finds the new version).
MIGRATIONS: dict[int, str] = {
    # 2: the turn of lifecycle events, backfilled from their JSON exactly as _turn_of reads it.
    1: f"""
ALTER TABLE events ADD COLUMN turn INTEGER;
UPDATE events SET turn = json_extract(data, '$.turn')
    WHERE type IN ({_SQL_LIFECYCLE_TYPES}) AND json_type(data, '$.turn') = 'integer'
    AND typeof(json_extract(data, '$.turn')) = 'integer';
CREATE INDEX events_by_turn ON events (session_id, type, turn, seq) WHERE turn IS NOT NULL;
""",
    # 3: sessions driven by an agent's hooks: which agent, its own session id, the parent
    # session of a subagent; and the hook events already answered (a retried one says nothing).
    2: """
ALTER TABLE sessions ADD COLUMN agent TEXT;
ALTER TABLE sessions ADD COLUMN agent_session TEXT;
ALTER TABLE sessions ADD COLUMN parent_id TEXT;
CREATE TABLE hook_events (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
""",
}

# One seek in events_by_turn; pinned like the source look-ups below.
TURN_START_SQL = (
    "SELECT * FROM events INDEXED BY events_by_turn"
    f" WHERE session_id = ? AND type = '{TURN_START}' AND turn = ?"
    " ORDER BY seq DESC LIMIT 1"
)

# Kept as a constant so a test can ask SQLite for its plan. Without statistics the planner
# prefers walking the session's primary key backwards (it avoids a sort), which scans the whole
# log when the source last spoke long ago; INDEXED BY pins the one index that answers this with a
# single seek, and makes SQLite fail loudly rather than scan if that index ever goes missing. The
# partial index is usable because ``source_kind = ?`` implies ``source_kind IS NOT NULL``.
LATEST_OF_SOURCE_SQL = (
    "SELECT * FROM events INDEXED BY events_by_source"
    " WHERE session_id = ? AND source_kind = ? AND source_plugin IS ?"
    " ORDER BY seq DESC LIMIT 1"
)

# Runs at every step and projection: reading the source's own events through the index and
# probing the surface for each keeps it proportional to that source's messages, where the
# planner's default (walk the session's log, join the surface) grows with the whole log.
VISIBLE_OF_SOURCE_SQL = (
    "SELECT e.* FROM events e INDEXED BY events_by_source"
    " JOIN surface s ON s.session_id = e.session_id AND s.seq = e.seq"
    " WHERE e.session_id = ? AND e.source_kind = ? ORDER BY e.seq"
)


# Pinned like the source look-ups: without statistics the planner walks the session's whole log
# by primary key for the ORDER BY (10 ms at 100,000 events, and a resume reads the session's
# dropped changes this way).
EVENTS_OF_TYPE_SQL = (
    "SELECT * FROM events INDEXED BY events_by_type WHERE session_id = ? AND type = ? ORDER BY seq"
)


@attrs.frozen
class EventDraft:
    """An event to append; the store assigns ``seq`` and ``time``."""

    type: str
    data: JsonObject
    surface_op: Any = None
    source_event_seqs: tuple[int, ...] | None = None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _source_of(draft: EventDraft) -> tuple[str | None, str | None]:
    if draft.type != USER_MESSAGE:
        return None, None
    source = draft.data.get("source")
    if not isinstance(source, dict):
        return None, None
    kind, plugin = source.get("kind"), source.get("plugin")
    return (kind if isinstance(kind, str) else None, plugin if isinstance(plugin, str) else None)


def _turn_of(draft: EventDraft) -> int | None:
    """The ``turn`` column: a lifecycle event's integer ``data.turn`` that SQLite can hold.

    The same rule as the schema-2 backfill (a JSON integer, not ``true``, that fits SQLite's 64
    bits), so appended and migrated rows agree and a seek never misses a turn a scan would find.
    """
    if draft.type not in LIFECYCLE_TYPES:
        return None
    turn = draft.data.get("turn")
    if isinstance(turn, int) and not isinstance(turn, bool) and -(2**63) <= turn < 2**63:
        return turn
    return None


class StoreSchemaError(sqlite3.DatabaseError):
    """The file is not a session store this code can use; nothing in it was changed."""


def _schema_version(query: Callable[[str], sqlite3.Cursor], path: str) -> int | None:
    """The schema version of a store this code can open, or None for a file with no tables yet.

    Raises ``StoreSchemaError`` for a file that is not a session store, has a newer schema, or an
    older one with no migration. ``query`` runs one statement: ``Connection.execute`` inside a
    transaction, or ``Store._retrying`` before the store has begun one.
    """
    tables = {r[0] for r in query("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return None
    row = (
        query("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if "meta" in tables
        else None
    )
    if row is None:
        raise StoreSchemaError(f"{path} is an SQLite database but not a dsh-sidecar session store")
    try:
        found = int(row[0])
    except ValueError:
        raise StoreSchemaError(f"{path} has an unreadable schema version {row[0]!r}") from None
    if found > SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{path} has session store schema version {found}, newer than this dsh-sidecar"
            f" supports ({SCHEMA_VERSION}): upgrade dsh-sidecar, or point store.path at another file"
        )
    if found < SCHEMA_VERSION and found not in MIGRATIONS:
        raise StoreSchemaError(
            f"{path} has session store schema version {found}, which has no migration"
        )
    return found


def _row_to_event(row: sqlite3.Row) -> Event:
    op = json.loads(row["surface_op"]) if row["surface_op"] is not None else None
    seqs = json.loads(row["source_event_seqs"]) if row["source_event_seqs"] is not None else None
    return Event(
        seq=row["seq"],
        type=row["type"],
        time=row["time"],
        data=json.loads(row["data"]),
        surface_op=op,
        source_event_seqs=tuple(seqs) if seqs is not None else None,
    )


def _row_to_header(row: sqlite3.Row) -> SessionHeader:
    return SessionHeader(
        id=row["id"],
        created_at=row["created_at"],
        cwd=row["cwd"],
        title=row["title"],
        agent=row["agent"],
        agent_session=row["agent_session"],
        parent_id=row["parent_id"],
    )


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Store:
    """The session store of one process: one writing connection, one reading connection per thread.

    Writes take the writing connection under a lock (one ``BEGIN IMMEDIATE`` transaction per
    logical write). Reads never queue behind a write: each thread reads through its own
    connection, which in WAL mode sees the last committed state even while this process or
    another one holds the write lock. A write that cannot get the lock within the busy timeout
    raises ``StoreBusy`` having written nothing.

    ``durable=False`` skips fsync (``synchronous=OFF``): for tests that are not about durability.
    Left as None it is False only when ``DSH_TEST_STORE_NO_FSYNC=1`` was set when the store opened
    (how tests reach stores inside server subprocesses). ``migrated_from`` is the schema version
    this open migrated the file from, or None.
    """

    def __init__(
        self,
        path: str,
        clock: Callable[[], int] = now_ms,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        durable: bool | None = None,
    ) -> None:
        self.path = os.path.abspath(path)
        self.clock = clock
        self.busy_timeout_ms = busy_timeout_ms
        if durable is None:
            durable = os.environ.get(NO_FSYNC_ENV) != "1"
        self.migrated_from: int | None = None
        self._lock = threading.RLock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        _create_private_file(self.path)
        self._conn = self._connect()
        # Refuse a newer or foreign file before the WAL switch below rewrites its header. The
        # transaction further down checks again: the file may change in between.
        found = _schema_version(self._retrying, self.path)
        # Switching a fresh file to WAL needs an exclusive lock, and SQLite reports a clash with
        # another process opening the same new file as "locked" without calling the busy handler.
        mode = self._retrying("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            # Concurrent processes are only safe with WAL; never fall back silently.
            raise sqlite3.OperationalError(f"{self.path}: cannot use WAL journal mode (got {mode})")
        # FULL: an append the client was told is durable survives power loss, not only a crash.
        self._conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
        self._conn.execute("PRAGMA foreign_keys = ON")
        if found == SCHEMA_VERSION:
            return  # current already: nothing to write, so no write lock to wait for
        with self.transaction() as db:
            self.migrated_from = _prepare_schema(db, self.path)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        return conn

    def close(self) -> None:
        with self._lock, self._readers_lock:
            self._closed = True
            for reader in self._readers:
                reader.close()
            self._readers.clear()
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` so the write lock is taken up front and ``busy_timeout`` applies."""
        with self._lock:
            if getattr(self._local, "writing", False):
                # Already inside this thread's transaction (a hook holds one across printing its
                # answer): the outer one commits or rolls back everything together.
                yield self._conn
                return
            self._begin_immediate()
            self._local.writing = True
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite rolls some failed COMMITs back itself (I/O error, full disk) and leaves
                # others open; either way the connection must leave here outside a transaction,
                # or every later write would fail to begin.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._local.writing = False

    def _reader(self) -> sqlite3.Connection:
        """This thread's reading connection; inside a write, the writing one (to see its rows)."""
        if getattr(self._local, "writing", False):
            return self._conn
        conn: sqlite3.Connection | None = getattr(self._local, "reader", None)
        if conn is None:
            with self._readers_lock:
                if self._closed:
                    raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
                conn = self._connect()
                conn.execute("PRAGMA query_only = ON")
                self._readers.append(conn)
            self._local.reader = conn
        return conn

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            return self._reader().execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise _busy_or(exc, self.path) from exc

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Run several reads against one state of the file.

        A read transaction pins a WAL snapshot, so what another connection commits meanwhile
        stays invisible until the block ends.
        """
        conn = self._reader()
        if conn.in_transaction:  # already inside a write or a snapshot: that is one state already
            yield
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    def surface_snapshot(self, session_id: str) -> SurfaceSnapshot | None:
        """``readSurface``: header, last seq and visible events, all from the same state."""
        with self.snapshot():
            header = self.get_session(session_id)
            if header is None:
                return None
            return SurfaceSnapshot(
                header, self.last_seq(session_id), tuple(self.surface_events(session_id))
            )

    def _begin_immediate(self) -> None:
        try:
            self._retrying("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _busy_or(exc, self.path) from exc

    def _retrying(self, statement: str) -> sqlite3.Cursor:
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                return self._conn.execute(statement)
            except sqlite3.OperationalError as exc:
                # busy_timeout covers ordinary contention; this loop covers the BUSY that SQLite
                # returns without calling the busy handler (a journal-mode switch, WAL recovery).
                if not _is_busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    # --- sessions ---------------------------------------------------------------------------

    def create_session(self, header: SessionHeader) -> bool:
        """Insert a header; False when the id already exists (another process won the race)."""
        with self.transaction() as db:
            return self._create_in(db, header)

    def _create_in(self, db: sqlite3.Connection, header: SessionHeader) -> bool:
        cur = db.execute(
            "INSERT OR IGNORE INTO sessions (id, created_at, cwd, title, agent, agent_session,"
            " parent_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                header.id,
                header.created_at,
                header.cwd,
                header.title,
                header.agent,
                header.agent_session,
                header.parent_id,
            ),
        )
        return cur.rowcount == 1

    def open_or_create(self, header: SessionHeader) -> tuple[SessionHeader, bool]:
        """The stored session ``header.id`` (resumed: True), or ``header`` stored now (False).

        One transaction, so two hook processes of the same agent session create it once.
        """
        with self.transaction() as db:
            row = db.execute("SELECT * FROM sessions WHERE id = ?", (header.id,)).fetchone()
            if row is not None:
                return _row_to_header(row), True
            self._create_in(db, header)
            return header, False

    # --- hook events ------------------------------------------------------------------------

    def hook_event_seen(self, session_id: str, key: str) -> bool:
        """Whether a hook event with ``key`` (an agent's tool-use id, say) was answered."""
        rows = self._read(
            "SELECT 1 FROM hook_events WHERE session_id = ? AND key = ?", (session_id, key)
        )
        return bool(rows)

    def record_hook_event(self, session_id: str, key: str, seq: int | None) -> bool:
        """Mark ``key`` answered (inside the caller's transaction); False if it already was."""
        with self.transaction() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO hook_events (session_id, key, seq) VALUES (?, ?, ?)",
                (session_id, key, seq),
            )
            return cur.rowcount == 1

    def get_session(self, session_id: str) -> SessionHeader | None:
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return _row_to_header(rows[0]) if rows else None

    def delete_session(self, session_id: str) -> bool:
        """Remove a session and everything of it (log, surface, inbox) in one transaction;
        False when there was no such session."""
        with self.transaction() as db:
            for table in ("inbox", "surface", "events"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            return db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 1

    def list_sessions(self) -> list[SessionHeader]:
        """Newest first: createdAt descending, then id ascending."""
        rows = self._read("SELECT * FROM sessions ORDER BY created_at DESC, id ASC")
        return [_row_to_header(r) for r in rows]

    # --- the log ----------------------------------------------------------------------------

    def append(
        self,
        session_id: str,
        drafts: Sequence[EventDraft],
        inbox: Sequence[Message] | None = None,
    ) -> list[Event]:
        """Append ``drafts`` atomically with contiguous seqs; optionally replace the inbox too."""
        with self.transaction() as db:
            return self._append_in(db, session_id, drafts, inbox)

    def _append_in(
        self,
        db: sqlite3.Connection,
        session_id: str,
        drafts: Sequence[EventDraft],
        inbox: Sequence[Message] | None,
    ) -> list[Event]:
        row = db.execute(
            "SELECT next_seq, next_ord FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise KeyError(session_id)
        seq, ord_ = row["next_seq"], row["next_ord"]
        stamp = self.clock()
        out: list[Event] = []
        for draft in drafts:
            if draft.surface_op is not None:
                if draft.type not in SURFACE_EVENT_TYPES:
                    # fold_surface ignores ops on other types; materializing one would make the
                    # stored surface disagree with the log it is derived from.
                    raise SurfaceOpError(f"{draft.type} events cannot carry a surfaceOp")
                ord_ = self._apply_surface_op(db, session_id, seq, draft.surface_op, ord_)
            kind, plugin = _source_of(draft)
            db.execute(
                "INSERT INTO events (session_id, seq, type, time, data, surface_op,"
                " source_event_seqs, source_kind, source_plugin, turn) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    session_id,
                    seq,
                    draft.type,
                    stamp,
                    _dumps(draft.data),
                    _dumps(draft.surface_op) if draft.surface_op is not None else None,
                    _dumps(list(draft.source_event_seqs))
                    if draft.source_event_seqs is not None
                    else None,
                    kind,
                    plugin,
                    _turn_of(draft),
                ),
            )
            if draft.type == SESSION_TITLE and isinstance(draft.data.get("title"), str):
                db.execute(
                    "UPDATE sessions SET title = ? WHERE id = ?", (draft.data["title"], session_id)
                )
            out.append(
                Event(seq, draft.type, stamp, draft.data, draft.surface_op, draft.source_event_seqs)
            )
            seq += 1
        db.execute(
            "UPDATE sessions SET next_seq = ?, next_ord = ? WHERE id = ?", (seq, ord_, session_id)
        )
        if inbox is not None:
            db.execute("DELETE FROM inbox WHERE session_id = ?", (session_id,))
            db.executemany(
                "INSERT INTO inbox (session_id, pos, message) VALUES (?, ?, ?)",
                [(session_id, i, _dumps(m.to_json())) for i, m in enumerate(inbox)],
            )
        return out

    def _apply_surface_op(
        self, db: sqlite3.Connection, session_id: str, seq: int, op: Any, next_ord: int
    ) -> int:
        span = replace_range(op)
        if span is None:
            db.execute(
                "INSERT INTO surface (session_id, ord, seq) VALUES (?, ?, ?)",
                (session_id, next_ord, seq),
            )
            return next_ord + 1
        start, end = span
        rows = (
            db.execute(
                "SELECT ord FROM surface WHERE session_id = ? ORDER BY ord LIMIT ? OFFSET ?",
                (session_id, end - start + 1, start),
            ).fetchall()
            if 0 <= start <= end
            else []  # SQLite reads LIMIT -1 as "no limit" and a negative OFFSET as 0
        )
        if not 0 <= start <= end or len(rows) != end - start + 1:
            count = db.execute(
                "SELECT COUNT(*) FROM surface WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            apply_op(list(range(count)), seq, op)  # raises SurfaceOpError with the reason
        first, last = rows[0]["ord"], rows[-1]["ord"]
        db.execute(
            "DELETE FROM surface WHERE session_id = ? AND ord BETWEEN ? AND ?",
            (session_id, first, last),
        )
        # The checkpoint takes the first replaced node's place, so model order needs no renumbering.
        db.execute(
            "INSERT INTO surface (session_id, ord, seq) VALUES (?, ?, ?)", (session_id, first, seq)
        )
        return next_ord

    def compact(self, session_id: str, checkpoint: Message, start: int, end: int) -> Event:
        """Append ``checkpoint`` replacing surface positions ``start..end`` in one transaction.

        The shadowed seqs are read inside the same transaction as the append, so another
        process compacting or appending in between cannot make ``sourceEventSeqs`` name nodes
        other than the ones actually replaced.
        """
        with self.transaction() as db:
            nodes = [
                int(r[0])
                for r in db.execute(
                    "SELECT seq FROM surface WHERE session_id = ? ORDER BY ord", (session_id,)
                ).fetchall()
            ]
            if not 0 <= start <= end < len(nodes):
                raise SurfaceOpError(
                    f"compact range {start}..{end} is outside the surface of {len(nodes)} nodes"
                )
            draft = EventDraft(
                USER_MESSAGE,
                checkpoint.to_json(),
                {"op": "replace", "start": start, "end": end},
                tuple(nodes[start : end + 1]),
            )
            return self._append_in(db, session_id, [draft], None)[0]

    def pragma(self, name: str) -> Any:
        """The value of a read-only ``PRAGMA`` on this connection (diagnostics and tests)."""
        if not name.isidentifier():
            raise ValueError(f"not a pragma name: {name!r}")
        with self._lock:
            row = self._conn.execute(f"PRAGMA {name}").fetchone()
        return None if row is None else row[0]

    def surface_size(self, session_id: str) -> int:
        rows = self._read("SELECT COUNT(*) FROM surface WHERE session_id = ?", (session_id,))
        return int(rows[0][0])

    def events(
        self, session_id: str, after_seq: int | None = None, limit: int | None = None
    ) -> list[Event]:
        rows = self._read(
            "SELECT * FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, -1 if after_seq is None else after_seq, -1 if limit is None else limit),
        )
        return [_row_to_event(r) for r in rows]

    def events_of_type(self, session_id: str, kind: str) -> list[Event]:
        """Every event of one type, in log order (through the ``events_by_type`` index)."""
        rows = self._read(EVENTS_OF_TYPE_SQL, (session_id, kind))
        return [_row_to_event(r) for r in rows]

    def events_from(self, session_id: str, seq: int) -> list[Event]:
        return self.events(session_id, after_seq=seq - 1)

    def last_seq(self, session_id: str) -> int | None:
        rows = self._read("SELECT next_seq FROM sessions WHERE id = ?", (session_id,))
        return None if not rows or rows[0][0] == 0 else int(rows[0][0]) - 1

    def surface_seqs(self, session_id: str) -> list[int]:
        rows = self._read(
            "SELECT seq FROM surface WHERE session_id = ? ORDER BY ord", (session_id,)
        )
        return [r[0] for r in rows]

    def surface_events(self, session_id: str) -> list[Event]:
        """The current surface events in model order."""
        rows = self._read(
            "SELECT e.* FROM surface s JOIN events e ON e.session_id = s.session_id AND e.seq = s.seq"
            " WHERE s.session_id = ? ORDER BY s.ord",
            (session_id,),
        )
        return [_row_to_event(r) for r in rows]

    def visible_events_of_source(self, session_id: str, kind: str) -> list[Event]:
        """Surface-visible ``user/message`` events of one source kind, in log order."""
        rows = self._read(VISIBLE_OF_SOURCE_SQL, (session_id, kind))
        return [_row_to_event(r) for r in rows]

    def latest_of_source(
        self, session_id: str, kind: str, plugin: str | None = None
    ) -> Event | None:
        """The latest raw ``user/message`` of a source (shadowed ones count), via the index."""
        rows = self._read(LATEST_OF_SOURCE_SQL, (session_id, kind, plugin))
        return _row_to_event(rows[0]) if rows else None

    def latest_of_types(
        self, session_id: str, types: Sequence[str], before_seq: int | None = None
    ) -> Event | None:
        marks = ",".join("?" for _ in types)
        rows = self._read(
            f"SELECT * FROM events WHERE session_id = ? AND type IN ({marks}) AND seq < ?"
            " ORDER BY seq DESC LIMIT 1",
            (session_id, *types, 2**62 if before_seq is None else before_seq),
        )
        return _row_to_event(rows[0]) if rows else None

    def turn_start(self, session_id: str, turn: int) -> Event | None:
        """The latest ``turn/start`` whose ``data.turn`` is the integer ``turn``."""
        if not -(2**63) <= turn < 2**63:
            return self._turn_start_unindexed(session_id, turn)
        rows = self._read(TURN_START_SQL, (session_id, turn))
        return _row_to_event(rows[0]) if rows else None

    def _turn_start_unindexed(self, session_id: str, turn: int) -> Event | None:
        # A turn number too large for SQLite's integers has no ``turn`` column to seek on.
        rows = self._read(
            "SELECT * FROM events INDEXED BY events_by_type WHERE session_id = ? AND type = ?"
            " AND turn IS NULL ORDER BY seq DESC",
            (session_id, TURN_START),
        )
        for row in rows:
            event = _row_to_event(row)
            value = event.data.get("turn")
            if isinstance(value, int) and not isinstance(value, bool) and value == turn:
                return event
        return None

    def inbox(self, session_id: str) -> list[Message]:
        rows = self._read(
            "SELECT message FROM inbox WHERE session_id = ? ORDER BY pos", (session_id,)
        )
        return [Message.from_json(json.loads(r[0])) for r in rows]


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _busy_or(exc: sqlite3.OperationalError, path: str) -> Exception:
    """``StoreBusy`` for lock contention that outlasted the busy timeout, else ``exc`` itself."""
    if _is_busy(exc):
        return StoreBusy(path)
    return exc


def _prepare_schema(db: sqlite3.Connection, path: str) -> int | None:
    """Create a new file's tables or migrate an old one, inside the open transaction.

    Returns the version migrated from (None when nothing was migrated). A file that cannot be
    used is refused before anything is written to it.
    """
    found = _schema_version(db.execute, path)
    if found is None:
        _execute_script(db, _SCHEMA)
        db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        return None
    if found == SCHEMA_VERSION:
        return None
    for version in range(found, SCHEMA_VERSION):
        _execute_script(db, MIGRATIONS[version])
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
    return found


def _execute_script(db: sqlite3.Connection, script: str) -> None:
    # Statement by statement: executescript() would commit the enclosing transaction first.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def read_schema_version(path: str) -> int | None:
    """The schema version of the store at ``path``, read without writing; None if it has none yet.

    Raises ``StoreSchemaError`` for a file this code would refuse to open, and ``sqlite3.Error``
    or ``OSError`` when it cannot be read.
    """
    if not os.path.exists(path):
        return None
    from pathlib import Path  # not on the hook path: pathlib alone costs milliseconds there

    db = sqlite3.connect(f"{Path(os.path.abspath(path)).as_uri()}?mode=ro", uri=True)
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return _schema_version(db.execute, path)
    finally:
        db.close()


def describe_schema(path: str) -> tuple[bool, str]:
    """``(usable, detail)`` of the store's schema, for ``dsh-sidecar doctor``."""
    if os.path.exists(path) and not os.path.isfile(path):
        return True, "unknown: the store path is not a file"  # the store check reports it
    try:
        found = read_schema_version(path)
    except StoreSchemaError as exc:
        return False, str(exc)
    except (sqlite3.Error, OSError) as exc:
        return False, f"cannot read {path}: {exc}"
    if found is None:
        return True, f"{SCHEMA_VERSION} (the store is created with it on first use)"
    if found < SCHEMA_VERSION:
        return True, f"{found}, migrated to {SCHEMA_VERSION} when the sidecar next opens it"
    return True, f"{found} (current)"


def replay_inbox(events: Sequence[Event]) -> list[JsonObject]:
    """Rebuild the next-step inbox by replaying ``agent/inbox/spliced`` events (checks the store)."""
    inbox: list[JsonObject] = []
    for event in events:
        if event.type != INBOX_SPLICED or event.data.get("target") != "next-step":
            continue
        start = int(event.data["start"])
        removed = int(event.data.get("removedCount", 0))
        inbox[start : start + removed] = list(event.data.get("inserted", []))
    return inbox


def _create_private_file(path: str) -> None:
    """Create the store file 0600 (and every missing directory 0700) unless it already exists.

    Session logs hold prompts and file contents, so nobody else may read them. ``os.makedirs``
    would give intermediate directories the default mode and the umask could leave the file
    unwritable for its owner, so modes are set explicitly, on creation only: an existing file or
    directory keeps the mode its owner chose. SQLite gives ``-wal`` and ``-shm`` the file's mode.
    """
    make_private_dirs(os.path.dirname(path))
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)

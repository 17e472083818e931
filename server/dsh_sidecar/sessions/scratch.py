"""A private in-memory copy of one session, where an event is worked out without the write lock.

The hook path's engine reads instruction files, walks directories and renders between its store
reads and writes; inside the store's ``BEGIN IMMEDIATE`` transaction that would make every other
writer of the file wait on a slow disk. So the engine runs against a ``ScratchStore``: a copy of
the event's session (its header, log, surface, inbox and answered hook events, plus its parent's
header) taken in one read transaction of the real file, which takes no lock. What the engine
writes lands in the copy. Then, under the real write lock, :meth:`ScratchStore.unchanged` checks
that the session is still at the version the copy was taken from, and :meth:`ScratchStore.apply`
writes the difference (the new events, the new surface and inbox when they changed, the new hook
event keys, a created session) in a few statements.

The version is the session's ``next_seq``, ``next_ord``, the number of its answered hook events
(every log write moves ``next_seq``, the surface and the inbox change only with log writes, and a
hook event key is only ever added) and its ``created_at`` (a session deleted and made again by the
same events counts the same otherwise): equal versions mean nobody wrote the session in between, so
the copy's result is exactly what the engine would have written on the real store. A differing
version means the work is redone on a fresh copy.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .store import _SCHEMA, Store, _execute_script, now_ms

# Keys of hook_events that are not answered events: a delivery offered and not yet confirmed
# (``hooks/offer.py``). Left out of the copy and of the version.
OFFER_PREFIX = "offer:"

_SESSION_COLUMNS = "id, created_at, cwd, title, next_seq, next_ord, agent, agent_session, parent_id"
_EVENT_COLUMNS = (
    "session_id, seq, type, time, data, surface_op, source_event_seqs, source_kind,"
    " source_plugin, turn"
)
_VERSION_SQL = (
    "SELECT s.next_seq, s.next_ord,"
    " (SELECT COUNT(*) FROM {db}hook_events h WHERE h.session_id = s.id"
    f" AND h.key NOT LIKE '{OFFER_PREFIX}%'),"
    " s.created_at"
    " FROM {db}sessions s WHERE s.id = ?"
)

# (next_seq, next_ord, answered hook events, created_at); None: the session does not exist.
Version = tuple[int, int, int, int] | None


def session_version(db: sqlite3.Connection, session_id: str, schema: str = "") -> Version:
    return _version(db.execute(_VERSION_SQL.format(db=schema), (session_id,)).fetchone())


def _version(row: Sequence[Any] | None) -> Version:
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]), int(row[3]))


@attrs.frozen
class _Base:
    """What the copy held when it was taken: the version, and what ``apply`` diffs against."""

    version: Version
    surface: tuple[tuple[int, int], ...]
    inbox: tuple[tuple[int, str], ...]
    keys: frozenset[str]


class ScratchStore(Store):
    """A ``Store`` over a private in-memory database holding one session copied from ``real``."""

    def __init__(self, clock: Callable[[], int] = now_ms) -> None:
        # No file: none of Store.__init__'s file handling applies (the WAL switch, the schema
        # check, the private file). One connection serves reads and writes.
        self.path = ":memory:"
        self.clock = clock
        self.busy_timeout_ms = 0
        self.migrated_from = None
        self._lock = threading.RLock()
        self._local = threading.local()
        self._readers = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._conn = sqlite3.connect(
            ":memory:", isolation_level=None, check_same_thread=False, uri=True
        )
        _empty_schema(self._conn)
        self._conn.row_factory = sqlite3.Row
        self.session_id = ""
        self.parent_id: str | None = None
        self._base = _Base(None, (), (), frozenset())

    def _reader(self) -> sqlite3.Connection:
        return self._conn

    # --- the copy ---------------------------------------------------------------------------

    @classmethod
    def copy_of(
        cls, real: Store, session_id: str, parent_id: str | None, clock: Callable[[], int]
    ) -> ScratchStore:
        """``session_id`` (and ``parent_id``'s header) as ``real`` holds them now."""
        scratch = cls(clock)
        scratch.session_id, scratch.parent_id = session_id, parent_id
        db = scratch._conn
        uri = "file:" + _uri_path(real.path) + "?mode=ro"
        db.execute(f"PRAGMA busy_timeout = {int(real.busy_timeout_ms)}")
        db.execute("ATTACH DATABASE ? AS real", (uri,))
        try:
            db.execute("BEGIN")  # one read transaction: one state of the real file
            try:
                ids = (session_id, parent_id or session_id)
                db.execute(
                    f"INSERT INTO main.sessions ({_SESSION_COLUMNS}) SELECT {_SESSION_COLUMNS}"
                    " FROM real.sessions WHERE id IN (?, ?)",
                    ids,
                )
                db.execute(
                    f"INSERT INTO main.events ({_EVENT_COLUMNS}) SELECT {_EVENT_COLUMNS}"
                    " FROM real.events WHERE session_id = ?",
                    (session_id,),
                )
                for table, columns in (
                    ("surface", "session_id, ord, seq"),
                    ("inbox", "session_id, pos, message"),
                ):
                    db.execute(
                        f"INSERT INTO main.{table} ({columns}) SELECT {columns}"
                        f" FROM real.{table} WHERE session_id = ?",
                        (session_id,),
                    )
                db.execute(
                    "INSERT INTO main.hook_events (session_id, key, seq) SELECT session_id, key,"
                    " seq FROM real.hook_events WHERE session_id = ?"
                    f" AND key NOT LIKE '{OFFER_PREFIX}%'",
                    (session_id,),
                )
            finally:
                db.execute("COMMIT")
        finally:
            db.execute("DETACH DATABASE real")
        scratch._base = scratch._state()
        return scratch

    def _state(self) -> _Base:
        db, sid = self._conn, self.session_id
        return _Base(
            session_version(db, sid),
            tuple(
                (int(r[0]), int(r[1]))
                for r in db.execute(
                    "SELECT ord, seq FROM surface WHERE session_id = ? ORDER BY ord", (sid,)
                )
            ),
            tuple(
                (int(r[0]), str(r[1]))
                for r in db.execute(
                    "SELECT pos, message FROM inbox WHERE session_id = ? ORDER BY pos", (sid,)
                )
            ),
            frozenset(
                str(r[0])
                for r in db.execute("SELECT key FROM hook_events WHERE session_id = ?", (sid,))
            ),
        )

    def still_current(self, real: Store) -> bool:
        """Whether ``real`` holds the session at the version of this copy's last ``rebase``
        (nothing was written to it since): the copy may then serve another event as it is."""
        rows = real._read(_VERSION_SQL.format(db=""), (self.session_id,))
        found = _version(rows[0] if rows else None)
        return found is not None and found == self._base.version

    def rebase(self) -> None:
        """After ``apply`` committed: the copy's state is the real one's now."""
        self._base = self._state()

    # --- back to the real store -------------------------------------------------------------

    def changed(self) -> bool:
        """Whether the engine wrote anything into the copy."""
        return self._state() != self._base

    def unchanged(self, db: sqlite3.Connection) -> bool:
        """Inside the real store's write transaction (``db``): whether the session is still at
        the version this copy was taken from."""
        return session_version(db, self.session_id) == self._base.version

    def apply(self, db: sqlite3.Connection) -> None:
        """Write what the engine wrote into the copy, inside the real store's write transaction
        (``db``), after :meth:`unchanged` said yes."""
        src, sid, base = self._conn, self.session_id, self._base
        now = self._state()
        for row in src.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id IN (?, ?)",
            (sid, self.parent_id or sid),
        ).fetchall():
            if row["id"] != sid:
                # The parent: only ever created here, never advanced (the engine writes the
                # event's own session); another process may have created it meanwhile.
                db.execute(
                    f"INSERT OR IGNORE INTO sessions ({_SESSION_COLUMNS}) VALUES"
                    " (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    tuple(row),
                )
                continue
            db.execute(
                f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET title = excluded.title,"
                " next_seq = excluded.next_seq, next_ord = excluded.next_ord",
                tuple(row),
            )
        first_new = 0 if base.version is None else base.version[0]
        _insert_rows(
            db,
            "events",
            _EVENT_COLUMNS,
            src.execute(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq >= ?"
                " ORDER BY seq",
                (sid, first_new),
            ).fetchall(),
        )
        # Only the rows that differ: a step appends to a long surface, it does not rewrite it.
        for table, key, value, old, new in (
            ("surface", "ord", "seq", base.surface, now.surface),
            ("inbox", "pos", "message", base.inbox, now.inbox),
        ):
            if old == new:
                continue
            gone, came = set(old) - set(new), set(new) - set(old)
            db.executemany(
                f"DELETE FROM {table} WHERE session_id = ? AND {key} = ?",
                [(sid, k) for k, _ in gone],
            )
            db.executemany(
                f"INSERT INTO {table} (session_id, {key}, {value}) VALUES (?, ?, ?)",
                [(sid, k, v) for k, v in came],
            )
        added = now.keys - base.keys
        if added:
            _insert_rows(
                db,
                "hook_events",
                "session_id, key, seq",
                [
                    tuple(r)
                    for r in src.execute(
                        "SELECT session_id, key, seq FROM hook_events WHERE session_id = ?",
                        (sid,),
                    )
                    if r["key"] in added
                ],
            )


_template: sqlite3.Connection | None = None
_template_lock = threading.Lock()


def _empty_schema(db: sqlite3.Connection) -> None:
    """The store's tables and indexes, empty, in ``db``: copied from a database made once per
    process (a page copy takes a fifth of the time of running the schema's statements)."""
    global _template
    with _template_lock:
        if _template is None:
            made = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            _execute_script(made, _SCHEMA)
            _template = made
        _template.backup(db)


def _insert_rows(db: sqlite3.Connection, table: str, columns: str, rows: Sequence[Any]) -> None:
    if not rows:
        return
    marks = ", ".join("?" for _ in columns.split(","))
    db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", [tuple(r) for r in rows])


def _uri_path(path: str) -> str:
    """``path`` as the path of an SQLite URI (only these characters mean something there)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")

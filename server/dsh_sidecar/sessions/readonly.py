"""The session store read without writing: for ``dsh-sidecar sessions`` and stored sessions that
are not live in this process.

``Store`` creates its file, switches it to WAL and migrates it; a listing must do none of that,
and must not create a store where there is none. This opens the file read-only (SQLite's
``mode=ro``), accepts a store of this schema or an older one it could migrate (an older one has
no agent columns: its sessions have no agent), and refuses anything else as ``Store`` would.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from dsh_sidecar.model import Message, SessionHeader
from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND, Change, effective_changes

from .store import (
    BUSY_TIMEOUT_MS,
    VISIBLE_OF_SOURCE_SQL,
    _row_to_event,
    _schema_version,
)


class StoreReader:
    """A read-only view of the store at ``path``; ``None`` from :func:`open_reader` when the file
    does not exist or holds no tables yet."""

    def __init__(self, db: sqlite3.Connection, path: str, schema: int) -> None:
        self._db = db
        self.path = path
        self.schema = schema

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def list_sessions(self) -> list[SessionHeader]:
        """Newest first: createdAt descending, then id ascending (as ``dsh/session/list``)."""
        rows = self._db.execute("SELECT * FROM sessions ORDER BY created_at DESC, id ASC")
        return [_header(row) for row in rows]

    def get_session(self, session_id: str) -> SessionHeader | None:
        row = self._db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _header(row) if row is not None else None

    def instructions_in_effect(self, session_id: str) -> list[Change]:
        """The instruction files the session's log says are in effect (its visible
        agent-instructions messages, latest change per file, removed ones left out)."""
        messages = [
            message
            for row in self._db.execute(VISIBLE_OF_SOURCE_SQL, (session_id, SOURCE_KIND))
            if (message := _row_to_event(row).message()) is not None
        ]
        return [c for c in effective_changes(messages, ()).values() if c.active]

    def answered(self, session_id: str, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` the session's ``hook_events`` holds (none before schema 3)."""
        if self.schema < 3 or not keys:
            return set()
        marks = ", ".join("?" for _ in keys)
        rows = self._db.execute(
            f"SELECT key FROM hook_events WHERE session_id = ? AND key IN ({marks})",
            (session_id, *keys),
        )
        return {row[0] for row in rows}

    def inbox(self, session_id: str) -> list[Message]:
        rows = self._db.execute(
            "SELECT message FROM inbox WHERE session_id = ? ORDER BY pos", (session_id,)
        )
        return [Message.from_json(json.loads(row[0])) for row in rows]


def open_reader(path: str) -> StoreReader | None:
    """The store at ``path`` opened read-only, or None when there is none yet. Raises
    ``StoreSchemaError`` for a file this dsh-sidecar would refuse, ``sqlite3.Error`` or
    ``OSError`` for one it cannot read."""
    if not os.path.isfile(path):
        if os.path.exists(path):
            raise OSError(f"{path}: not a regular file")
        return None
    db = sqlite3.connect(f"{Path(os.path.abspath(path)).as_uri()}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        schema = _schema_version(db.execute, path)
    except BaseException:
        db.close()
        raise
    if schema is None:
        db.close()
        return None
    return StoreReader(db, path, schema)


def _header(row: sqlite3.Row) -> SessionHeader:
    keys = row.keys()
    return SessionHeader(
        id=row["id"],
        created_at=row["created_at"],
        cwd=row["cwd"],
        title=row["title"],
        agent=row["agent"] if "agent" in keys else None,
        agent_session=row["agent_session"] if "agent_session" in keys else None,
        parent_id=row["parent_id"] if "parent_id" in keys else None,
    )

"""A delivery offered: the session reserved in the store before the answer is printed, and the
answer recorded after, each in a short transaction, so no write lock is held across a print.

An offer is a ``hook_events`` row ``offer:<token>`` of the session (no seq), committed before the
print, and a lock file ``<store>-offers/<token>`` beside the store file, which its owner (the
hook process, or the resident engine answering for it) holds with ``flock`` from before the row
exists until after the row is gone. While the row stands nobody else writes the session. The owner prints, then records
the event's writes and deletes the row in one transaction (the confirmation); a print that failed
or a client that left deletes the row and records nothing.

An owner killed in between leaves the row behind, but the kernel releases its lock: the next
writer of the session finds the file free (or gone), takes the row for an offer nobody will
confirm and deletes it. Nothing of that event was recorded, so the next event delivers what it
would have. A row whose file is still locked belongs to a live owner: the next writer waits for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import string

from dsh_sidecar.private_paths import make_private_dirs
from dsh_sidecar.sessions.scratch import OFFER_PREFIX

_HEX = frozenset(string.hexdigits)


def offers_directory(store_path: str) -> str:
    """Beside the store file: whoever shares the store (whatever its ``$DSH_HOME``) sees them."""
    return store_path + "-offers"


class Offer:
    """One offer of ours: its lock file created and locked; the row is the caller's to write."""

    def __init__(self, directory: str, session_id: str) -> None:
        self.session_id = session_id
        token = os.urandom(12).hex()
        self.key = OFFER_PREFIX + token
        self.path = os.path.join(directory, token)
        make_private_dirs(directory)
        self._fd: int | None = os.open(
            self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
        )
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def insert(self, db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO hook_events (session_id, key, seq) VALUES (?, ?, NULL)",
            (self.session_id, self.key),
        )

    def withdraw(self, db: sqlite3.Connection) -> bool:
        """Delete the row; False when it was not there any more."""
        cur = db.execute(
            "DELETE FROM hook_events WHERE session_id = ? AND key = ?", (self.session_id, self.key)
        )
        return cur.rowcount == 1

    def release(self) -> None:
        """After the row is gone (or was never written): the file, then the lock."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


def another_stands(db: sqlite3.Connection, directory: str, session_id: str, mine: str) -> bool:
    """Inside a write transaction: whether an offer of another live owner reserves the session.
    Offers whose owner is gone are deleted on the way."""
    rows = db.execute(
        f"SELECT key FROM hook_events WHERE session_id = ? AND key LIKE '{OFFER_PREFIX}%'",
        (session_id,),
    ).fetchall()
    standing = False
    for (key,) in rows:
        if key == mine:
            continue
        token = key[len(OFFER_PREFIX) :]
        if token and set(token) <= _HEX and _owner_alive(os.path.join(directory, token)):
            standing = True
            continue
        db.execute("DELETE FROM hook_events WHERE session_id = ? AND key = ?", (session_id, key))
    return standing


def _owner_alive(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False  # its owner removes the file only after its row: an owner that is gone
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        # Free: the owner died between its offer and its confirmation. The file goes with the row.
        with contextlib.suppress(OSError):
            os.unlink(path)
        return False
    finally:
        os.close(fd)

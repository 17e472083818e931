"""Files and directories only their owner may read: the session store, the TCP token, the sockets
(``serve --socket`` and the resident hook engine's), and who is at the other end of a socket.

Modes are set explicitly on creation: ``os.makedirs`` would give parents the default mode, and the
umask could loosen (or, for the owner, tighten) what we ask for. Existing paths keep the mode their
owner chose.
"""

from __future__ import annotations

import os
import stat
import sys

# Not ``typing.TYPE_CHECKING``: the thin hook client imports this module on every event.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class _Credentialed(Protocol):
        def getsockopt(self, level: int, option: int, size: int, /) -> bytes: ...


def make_private_dirs(directory: str) -> None:
    """Create ``directory`` and its missing parents, each ``0700``; raises ``OSError``."""
    missing: list[str] = []
    current = os.path.abspath(directory)
    while not os.path.lexists(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for created in reversed(missing):
        try:
            os.mkdir(created, 0o700)
        except FileExistsError:
            continue  # another process made it first; its mode is theirs to choose
        os.chmod(created, 0o700)


def identity(path: str) -> tuple[int, int]:
    """The (device, inode) of ``path`` itself, not of what a link there points to."""
    st = os.lstat(path)
    return st.st_dev, st.st_ino


def remove_if_same(path: str, made: tuple[int, int] | None) -> None:
    """Delete ``path`` if it is still the file we made (not one a later server put there)."""
    try:
        if identity(path) == made:
            os.unlink(path)
    except OSError:
        pass


def shared_directory_problem(directory: str) -> str | None:
    """Why another user could replace what we put in ``directory`` (followed); None when no one
    but us (or root, who owns ``/`` and can anyway) can write it."""
    try:
        st = os.stat(directory)
    except OSError as exc:
        return f"{directory}: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{directory} is not a directory"
    if st.st_uid not in (os.geteuid(), 0):
        return f"{directory} belongs to uid {st.st_uid}; use a directory of your own"
    if stat.S_IMODE(st.st_mode) & 0o022:
        return f"{directory} is writable by other users; use a directory only you can write"
    return None


def peer_uid(sock: _Credentialed) -> int:
    """The uid of the process at the other end of a connected Unix socket (``SO_PEERCRED``: a
    ``struct ucred`` of pid, uid and gid, native ints)."""
    # _socket, not socket: the latter's enums and selectors would cost a hook event ~10 ms.
    from _socket import SO_PEERCRED, SOL_SOCKET

    raw = sock.getsockopt(SOL_SOCKET, SO_PEERCRED, 12)
    return int.from_bytes(raw[4:8], sys.byteorder)

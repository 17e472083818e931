"""Files and directories only their owner may read: the session store, the TCP token, the socket.

Modes are set explicitly on creation: ``os.makedirs`` would give parents the default mode, and the
umask could loosen (or, for the owner, tighten) what we ask for. Existing paths keep the mode their
owner chose.
"""

from __future__ import annotations

import os


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

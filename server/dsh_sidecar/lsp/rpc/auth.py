"""Who may connect: the TCP token file and the private directories the listeners rely on.

TCP on 127.0.0.1 is reachable by every local user, so ``serve --tcp`` writes a random token to
``$DSH_HOME/run/tcp-<port>.token`` (0600, in a 0700 directory) before it listens, and a client
must present it as ``initializationOptions.authToken`` (docs/protocol.md, "Who may connect").
Only a process running as the same user (or root) can read it.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from typing import Any

from dsh_sidecar.private_paths import (
    identity,
    make_private_dirs,
    remove_if_same,
    shared_directory_problem,
)

TOKEN_BYTES = 32
RUN_DIRNAME = "run"


class ServeError(Exception):
    """``serve`` cannot start; the message is one line naming what is wrong."""


def token_file_name(port: int) -> str:
    return f"tcp-{port}.token"


def ensure_private_directory(path: str) -> None:
    """``path`` exists as a directory of ours that nobody else can enter: created 0700 with any
    missing parents, tightened to 0700 if it is ours but open, refused otherwise."""
    make_missing_directories(path)
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise ServeError(f"{path}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise ServeError(f"{path} is a symbolic link; a private directory is needed here")
    if not stat.S_ISDIR(st.st_mode):
        raise ServeError(f"{path} is not a directory")
    if st.st_uid != os.geteuid():
        raise ServeError(f"{path} belongs to uid {st.st_uid}, not to this user")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, 0o700)


def check_parent_not_shared(directory: str) -> None:
    """Refuse a directory that another user could write in (and so replace what we put there)."""
    problem = shared_directory_problem(directory)
    if problem is not None:
        raise ServeError(problem)


def make_missing_directories(path: str) -> None:
    """Create ``path`` and any missing parents, each 0700; a failure is a ``ServeError``."""
    try:
        make_private_dirs(path)
    except OSError as exc:
        raise ServeError(f"cannot create {path}: {exc.strerror or exc}") from exc


class TokenFile:
    """The token of one TCP listener, on disk while it listens."""

    def __init__(self, path: str, token: str) -> None:
        self.path = path
        self.token = token
        self._identity: tuple[int, int] | None = None

    @classmethod
    def create(cls, dsh_home: str, port: int) -> TokenFile:
        run_dir = os.path.join(dsh_home, RUN_DIRNAME)
        make_missing_directories(dsh_home)
        check_parent_not_shared(dsh_home)
        ensure_private_directory(run_dir)
        token = secrets.token_hex(TOKEN_BYTES)
        path = os.path.join(run_dir, token_file_name(port))
        temp = os.path.join(run_dir, f".{token_file_name(port)}.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, (token + "\n").encode("ascii"))
                os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
            # Atomic: a reader sees the previous file (a stale one, from a server that was
            # killed) or ours, never a half-written token; a symlink planted there is replaced,
            # not followed.
            os.replace(temp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise ServeError(f"cannot write the token file {path}: {exc.strerror or exc}") from exc
        made = cls(path, token)
        made._identity = identity(path)
        return made

    def accepts(self, offered: Any) -> bool:
        if not isinstance(offered, str):
            return False
        # compare_digest takes time independent of where the strings differ.
        return hmac.compare_digest(
            offered.encode("utf-8", "surrogatepass"), self.token.encode("ascii")
        )

    def remove(self) -> None:
        """Delete the file if it is still ours (not one a later server wrote)."""
        remove_if_same(self.path, self._identity)

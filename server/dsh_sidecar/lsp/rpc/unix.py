"""The Unix domain socket of ``serve --socket PATH``: a private place, and only our own user.

Three guards, each enough alone on Linux (docs/protocol.md, "Who may connect"): the parent
directory is one only we (or root) can write, created 0700 when missing; the socket file is
0600; every accepted peer's uid, from SO_PEERCRED, must be ours.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat

from dsh_sidecar.private_paths import identity, remove_if_same

from .auth import ServeError, check_parent_not_shared, make_missing_directories


class UnixListenerSocket:
    """A bound (not yet listening) socket at ``path``, removed again by ``remove``."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.sock: socket.socket | None = None
        self._identity: tuple[int, int] | None = None

    def bind(self) -> socket.socket:
        parent = os.path.dirname(self.path)
        make_missing_directories(parent)
        check_parent_not_shared(parent)
        _clear_stale(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The umask decides the mode bind() creates the file with: no window where it is open.
        previous = os.umask(0o177)
        try:
            sock.bind(self.path)
        except OSError as exc:
            sock.close()
            raise ServeError(f"cannot listen on {self.path}: {exc.strerror or exc}") from exc
        finally:
            os.umask(previous)
        os.chmod(self.path, 0o600)
        self._identity = identity(self.path)
        self.sock = sock
        return sock

    def remove(self) -> None:
        remove_if_same(self.path, self._identity)


def _clear_stale(path: str) -> None:
    """Remove a socket file left by a server that died; refuse anything else at ``path``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ServeError(f"{path}: {exc.strerror or exc}") from exc
    if not stat.S_ISSOCK(st.st_mode):
        raise ServeError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError as exc:
        if exc.errno not in (errno.ECONNREFUSED, errno.ENOENT):
            raise ServeError(f"{path}: {exc.strerror or exc}") from exc
    else:
        raise ServeError(f"{path} is in use by a running server")
    finally:
        probe.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)

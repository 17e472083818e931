"""``dsh-sidecar doctor``'s ``resident`` line: whether hook events go to a resident engine, and
whether one runs now. Reads only: it creates no directory, lock or socket."""

from __future__ import annotations

import os
from collections.abc import Mapping

from dsh_sidecar.private_paths import shared_directory_problem

from . import resident_wire as wire


def describe(env: Mapping[str, str]) -> str:
    if not wire.SUPPORTED:
        return "off (Linux only)"
    if not wire.enabled(env):
        if env.get(wire.SWITCH_ENV, "").strip():
            return f"off ({wire.SWITCH_ENV}={env[wire.SWITCH_ENV].strip()})"
        return f"off (the default; {wire.SWITCH_ENV}=1 turns it on)"
    home = wire.dsh_home(env)
    if home is None:
        return "not used: no DSH_HOME and no HOME"
    path = wire.socket_path(home)
    if len(os.fsencode(path)) > wire.MAX_SOCKET_PATH:
        return f"not used: {path} is longer than a socket path may be"
    pid = running_pid(home)
    if pid is None:
        return "not running (the next hook event starts it)"
    problem = (
        shared_directory_problem(home)
        or wire.owner_only_problem(wire.run_dir(home), "dir")
        or wire.owner_only_problem(path, "socket")
    )
    if problem:
        return f"running (pid {pid}) but not used: {problem}"
    return f"running (pid {pid}, {path})"


def running_pid(home: str) -> int | None:
    """The pid in the start lock while a resident holds the lock; None when none does."""
    import fcntl

    try:
        fd = os.open(wire.lock_path(home), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)

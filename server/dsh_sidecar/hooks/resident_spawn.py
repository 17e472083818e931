"""Starting the resident hook engine: at most one per ``$DSH_HOME``, detached from the hook.

The start lock (``run/hook.lock``, ``flock``) is taken by the hook that starts the resident and
handed to it: the resident inherits the locked open file and keeps it open for its lifetime, so
while any resident lives or starts, the lock is held. A hook that cannot take it (another one is
starting a resident, or one runs and its socket is being replaced) starts nothing. A resident
never finds another one listening at its socket's place, so whatever socket is there was left
by a dead one.

Detached twice over: a new session (``setsid``: the agent's signals to the hook's process group
do not reach it) and a second fork (its parent is not the hook, which exits at once); its stdin
is ``/dev/null`` and its stdout and stderr its own log, ``$DSH_HOME/log/hook-resident.log``, so it
holds none of the agent's pipes (the agent waits for the hook's stdout to close).
"""

from __future__ import annotations

import os
import sys

from dsh_sidecar.private_paths import make_private_dirs, shared_directory_problem

from . import resident_wire as wire


def start(home: str) -> str | None:
    """Start a resident for ``home`` unless one holds the lock; why not, or None once started."""
    import fcntl

    run = wire.run_dir(home)
    try:
        make_private_dirs(run)
    except OSError as exc:
        return f"cannot create {run}: {exc.strerror or exc}"
    problem = shared_directory_problem(home) or wire.owner_only_problem(run, "dir")
    if problem:
        return problem
    try:
        fd = os.open(
            wire.lock_path(home),
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
    except OSError as exc:
        return f"cannot open the start lock: {exc.strerror or exc}"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return "another resident holds the start lock"
    try:
        log = _open_log(home)
    except OSError as exc:
        os.close(fd)
        return f"cannot open {wire.log_path(home)}: {exc.strerror or exc}"
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked child execs or exits
        _detach_and_exec(home, fd, log)
    os.close(log)
    os.close(fd)
    os.waitpid(child, 0)
    return None


def _open_log(home: str) -> int:
    directory = os.path.dirname(wire.log_path(home))
    make_private_dirs(directory)
    return os.open(
        wire.log_path(home), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600
    )


def _detach_and_exec(home: str, lock_fd: int, log: int) -> None:
    try:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        os.chdir("/")  # holds no directory of the hook's (it could be unmounted or removed)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.set_inheritable(lock_fd, True)
        keep = max(lock_fd, 2)
        os.closerange(3, lock_fd)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
        # -P: nothing from the current directory on sys.path (it is "/" anyway; the hook's
        # project directory must never be where the resident imports from).
        os.execv(
            sys.executable,
            [sys.executable, "-P", "-m", "dsh_sidecar.hooks.resident", home, str(lock_fd)],
        )
    finally:
        os._exit(127)

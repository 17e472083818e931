"""The resident hook engine of one test's ``$DSH_HOME``: waiting for it, finding it, stopping it.

Every test that lets a hook start a resident stops it (``stop``) before it ends, so that no
detached process outlives the test run; tests/conftest.py stops those that other tests' hook
processes started (``started_under``). The resident writes its pid into its start lock file,
which it holds for its whole life.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path

from dsh_sidecar.hooks import resident_wire as wire

WAIT_S = 60  # only bounds a resident that never comes or never goes (a failing test)
STOP_S = 15  # a resident's event ends within its hook's timeout; past this it is stuck


def pid_of(home: Path) -> int | None:
    """The live resident of ``home``, from its lock file; None when there is none."""
    try:
        text = Path(wire.lock_path(str(home))).read_text().strip()
    except FileNotFoundError:
        return None
    if not text.isdigit():
        return None
    pid = int(text)
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return None
    if b"dsh_sidecar.hooks.resident" not in cmdline or os.fsencode(str(home)) not in cmdline:
        return None  # the pid was recycled by another process
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None
    return None if state == "Z" else pid


def answers(home: Path) -> bool:
    """A resident listens on ``home``'s socket."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(wire.socket_path(str(home)))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def wait_until_up(home: Path) -> int:
    deadline = time.monotonic() + WAIT_S
    while True:
        pid = pid_of(home)
        if pid is not None and answers(home):
            return pid
        assert time.monotonic() < deadline, f"no resident came up for {home}"
        time.sleep(0.02)


def wait_until_gone(pid: int, within: float = WAIT_S) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":  # exited; its parent (init) has yet to reap it
            return
        assert time.monotonic() < deadline, f"resident {pid} did not exit"
        time.sleep(0.02)


def stop(home: Path) -> None:
    """SIGTERM the resident of ``home`` (SIGKILL if stopped or stuck) and wait for it to go."""
    pid = pid_of(home)
    if pid is not None:
        stop_pid(pid)


def stop_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)  # a test may have stopped it
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        # It leaves after the event in hand, if any; one that does not is killed.
        wait_until_gone(pid, within=STOP_S)
    except AssertionError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_until_gone(pid)


def log(home: Path) -> str:
    path = Path(wire.log_path(str(home)))
    return path.read_text() if path.exists() else ""


def started_under(base: Path) -> dict[int, Path]:
    """This user's residents whose ``$DSH_HOME`` lies under ``base``: pid -> home. A resident's
    command line is ``python -P -m dsh_sidecar.hooks.resident HOME LOCK_FD``."""
    found: dict[int, Path] = {}
    prefix = os.fsencode(str(base)) + b"/"
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            words = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            if Path(f"/proc/{name}").stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if b"dsh_sidecar.hooks.resident" not in words:
            continue
        at = words.index(b"dsh_sidecar.hooks.resident")
        home = words[at + 1] if at + 1 < len(words) else b""
        if home.startswith(prefix):
            found[int(name)] = Path(os.fsdecode(home))
    return found

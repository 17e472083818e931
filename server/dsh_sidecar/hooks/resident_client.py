"""``dsh-sidecar hook``'s first stop: hand the event to the resident engine, or answer it here.

Imports nothing of the engine (``tests/unit/test_resident_hook.py`` checks ``sys.modules``):
``resident_wire``, ``private_paths``, ``budget`` and the C socket module. With the resident
switched off (``DSH_HOOK_RESIDENT=0``), a test stop requested (``DSH_TEST_HOOK_PAUSE``) or an
input over 16 MiB, and whenever the resident cannot be used, the event is answered in this
process by ``hooks.main`` exactly as before, from the stdin bytes read here.

The client falls back only while it has not confirmed a printed answer (``D``): before that the
resident has committed nothing for this event, and it rolls back whatever it did once the client
closes the connection (``resident_wire``). After ``D`` the event is the resident's; the client
waits for the commit (``E``) until its deadline and exits 0 either way.
"""

from __future__ import annotations

# _socket, not socket: socket.py's enums and selectors would cost every event ~10 ms.
import _socket
import io
import os
import sys
import time

from dsh_sidecar.private_paths import peer_uid, shared_directory_problem

from . import resident_wire as wire
from .budget import MARGIN_SECONDS, TIMEOUT_SECONDS

# The resident acknowledges a request as soon as it has read it, on a thread of its own; one
# that does not within this is stuck, and the event is answered here.
ACK_SECONDS = 1.5
# As resident.CLIENT_GRACE_SECONDS: the resident's own lock wait ends before the client stops
# waiting, so a busy store's outcome (touches kept) reaches the client.
GRACE_SECONDS = 0.5
HOOK_PAUSE_ENV = "DSH_TEST_HOOK_PAUSE"  # testpoint.PAUSE_ENV, without importing it


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    words = list(sys.argv[1:] if argv is None else argv)
    env = os.environ
    stdin = None
    if wire.enabled(env) and HOOK_PAUSE_ENV not in env:
        try:
            raw = sys.stdin.buffer.read(wire.MAX_STDIN + 1)
            stdin = io.BytesIO(raw)  # whatever happens next, the fallback reads the same bytes
            code = through_resident(words, raw, started) if len(raw) <= wire.MAX_STDIN else None
        except KeyboardInterrupt:
            return 0  # as hooks.main: nothing printed, and the resident commits nothing unasked
        except Exception as exc:  # whatever it was (a sandbox's EPERM on fork, say): here
            _note(wire.dsh_home(env), f"resident not used: {type(exc).__name__}: {exc}")
            code = None
        if code is not None:
            return code
    from .main import main as in_process

    return in_process(words, stdin=stdin, started=started)


def through_resident(words: list[str], raw: bytes, started: float) -> int | None:
    """The exit status the resident gave; None: answer here (nothing was committed for it)."""
    home = wire.dsh_home(os.environ)
    if home is None:
        return None
    path = wire.socket_path(home)
    if len(os.fsencode(path)) > wire.MAX_SOCKET_PATH:
        return None
    if not os.path.lexists(path):
        _start(home)
        return None
    problem = (
        shared_directory_problem(home)
        or wire.owner_only_problem(wire.run_dir(home), "dir")
        or wire.owner_only_problem(path, "socket")
    )
    if problem:
        _note(home, f"resident not used: {problem}")
        return None
    deadline = started + TIMEOUT_SECONDS - MARGIN_SECONDS + GRACE_SECONDS
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        return _ask(sock, home, path, words, raw, started, deadline)
    finally:
        sock.close()


def _ask(
    sock: _socket.socket,
    home: str,
    path: str,
    words: list[str],
    raw: bytes,
    started: float,
    deadline: float,
) -> int | None:
    try:
        sock.settimeout(max(0.05, min(ACK_SECONDS, deadline - time.monotonic())))
        sock.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        _start(home)  # a socket nobody listens on: its resident died
        return None
    except OSError:
        return None
    if peer_uid(sock) != os.geteuid():
        _note(home, f"resident not used: {path} is served by another user")
        return None
    try:
        cwd = os.getcwdb()
    except OSError:
        return None
    request = wire.encode_request(wire.version(), cwd, started, words, os.environb, raw)
    try:
        sock.sendall(request)
        kind, payload = wire.read_frame(sock)
    except (OSError, EOFError, ValueError):
        return None
    if kind != wire.ACCEPTED:
        return None  # another version (which now leaves), or not for the resident
    sock.settimeout(max(0.05, deadline - time.monotonic()))
    try:
        kind, payload = wire.read_frame(sock)
    except (OSError, EOFError, ValueError):
        return None  # the event's transaction, if any, rolls back as the connection closes
    if kind == wire.OUTPUT:
        try:
            out = sys.stdout.buffer
            out.write(payload)
            out.flush()
        except OSError:
            return 0  # nothing confirmed: the resident rolls back, as a failed print does here
        try:
            sock.sendall(wire.DONE)
        except OSError:
            return 0  # printed; the resident rolls back as it would after a kill here
        try:
            kind, payload = wire.read_frame(sock)
        except (OSError, EOFError, ValueError):
            return 0  # printed and confirmed: the event is the resident's now, whatever follows
        return _status(payload) if kind == wire.END else 0
    if kind == wire.END:
        return _status(payload)  # nothing to print, nothing written (an answered retry)
    return None  # N: declined before doing anything


def _status(payload: bytes) -> int:
    return int(payload) if payload.isdigit() else 0


def _start(home: str) -> None:
    from .resident_spawn import start

    why = start(home)
    if why is not None and "start lock" not in why:
        _note(home, f"resident not started: {why}")


def _note(home: str | None, what: str) -> None:
    from .failopen import log_line

    log_line(home, "hook", what)

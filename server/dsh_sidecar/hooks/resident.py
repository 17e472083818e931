"""The resident hook engine: one process per ``$DSH_HOME`` that answers the thin clients' events.

``python -m dsh_sidecar.hooks.resident DSH_HOME LOCK_FD``, started by ``resident_spawn`` (detached,
holding the start lock it inherited as ``LOCK_FD`` for as long as it lives). It listens on
``$DSH_HOME/run/hook.sock`` (the directory 0700, the socket 0600, each peer's uid checked with
``SO_PEERCRED``), reads each request on a thread of its own, acknowledges it, and answers the
requests one at a time on one worker thread: one writer to the store, with the engine's modules
and caches loaded once for every event of every agent. Each event runs ``hooks.main.main`` as
the hook process would, in the hook's directory and environment; the wire and the
commit-after-``D`` rule are in ``resident_wire``.

It exits after ``DSH_HOOK_RESIDENT_IDLE`` seconds without a request (600 by default), on
SIGTERM or SIGINT (after the event in hand), when a client of another version asks, or when one
event has run past ``WATCHDOG_SECONDS`` (a hung engine; its clients answer in their own
processes meanwhile). It removes its socket first, so a new client never connects to a resident
on its way out.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping

from dsh_sidecar.private_paths import (
    identity,
    make_private_dirs,
    peer_uid,
    remove_if_same,
    shared_directory_problem,
)

from . import resident_wire as wire
from .budget import MARGIN_SECONDS, TIMEOUT_SECONDS
from .failopen import HandedBack, one_line

# An event is answered within the agent's timeout or its client gave up on it long ago.
WATCHDOG_SECONDS = 2 * TIMEOUT_SECONDS
READ_TIMEOUT_SECONDS = 2.0  # for a client to send its whole request
TICK_SECONDS = 0.5  # how often the accept loop looks at the clock
PAUSE_ENV = "DSH_TEST_RESIDENT_PAUSE"  # tests only: hooks/testpoint.py's mechanism, here


class ClientGone(HandedBack):
    """The client did not confirm the printed answer: the event's transaction rolls back."""


def log(text: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    sys.stderr.write(f"{stamp} [{os.getpid()}] {one_line(text)}\n")
    sys.stderr.flush()


class Answer:
    """The hook's stdout inside the resident: written into a buffer, sent as ``O`` when the
    event is about to commit, and confirmed (``D``) by the client before it does."""

    def __init__(self, conn: socket.socket, deadline: float) -> None:
        # Once it has the answer the client cannot answer the event itself any more, so it may
        # take until the agent's timeout to print it (a large answer to a slow reader).
        self.conn, self.deadline = conn, deadline
        self.buffer = io.BytesIO()
        self.confirmed = False

    def write(self, data: bytes) -> int:
        return self.buffer.write(data)

    def flush(self) -> None:
        pass  # sent whole by ``confirm``

    def confirm(self) -> None:
        try:
            self.conn.settimeout(max(0.05, self.deadline - time.monotonic()))
            self.conn.sendall(wire.frame(wire.OUTPUT, self.buffer.getvalue()))
            reply = wire.read_exactly(self.conn, 1)
        except (OSError, EOFError) as exc:
            raise ClientGone(f"the hook left before confirming its answer ({exc})") from exc
        if reply != wire.DONE:
            raise ClientGone(f"the hook answered {reply!r} instead of confirming")
        self.confirmed = True


class Resident:
    def __init__(self, home: str, idle: float) -> None:
        self.home, self.idle = home, idle
        self.path = wire.socket_path(home)
        self.version = wire.version()
        # (None, None) tells the worker to stop.
        self.requests: queue.Queue[tuple[socket.socket | None, wire.Request | None]] = queue.Queue()
        self.last_active = time.monotonic()
        self.busy_since: float | None = None
        self.stopping = threading.Event()
        self.answered = self.declined = 0
        self.code = LoadedCode()  # made after warm_up(): what every event uses is loaded
        self.listener: socket.socket | None = None
        self._identity: tuple[int, int] | None = None

    # -- the door ---------------------------------------------------------------------------

    def bind(self) -> None:
        run = wire.run_dir(self.home)
        make_private_dirs(run)
        # What a client checks before it connects (resident_client): never listen where it
        # would refuse to.
        problem = shared_directory_problem(self.home) or wire.owner_only_problem(run, "dir")
        if problem:
            raise SystemExit(f"refusing to listen: {problem}")
        # The start lock is ours, so nothing that answers is at the path: a socket of ours there
        # was left by a killed resident. Anything else is not ours to remove.
        if os.path.lexists(self.path):
            problem = wire.owner_only_problem(self.path, "socket")
            if problem:
                raise SystemExit(f"refusing to replace it: {problem}")
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)  # created 0600: no moment where others could connect
        try:
            listener.bind(self.path)
        finally:
            os.umask(previous)
        os.chmod(self.path, 0o600)
        self._identity = identity(self.path)
        listener.listen(64)
        listener.settimeout(TICK_SECONDS)
        self.listener = listener

    def close_door(self) -> None:
        """No new connections: the socket file goes first, then the listener."""
        remove_if_same(self.path, self._identity)
        if self.listener is not None:
            self.listener.close()
            self.listener = None

    def serve(self) -> None:
        worker = threading.Thread(target=self.work, name="hook-worker", daemon=True)
        worker.start()
        while not self.stopping.is_set():
            if self.should_leave():
                break
            assert self.listener is not None
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                log(f"accept failed: {exc}")
                time.sleep(TICK_SECONDS)
                continue
            if peer_uid(conn) != os.geteuid():
                log("refused a connection of another user")
                conn.close()
                continue
            self.last_active = time.monotonic()
            threading.Thread(target=self.receive, args=(conn,), daemon=True).start()
        self.close_door()
        self.requests.put_nowait((None, None))
        worker.join(WATCHDOG_SECONDS)

    def should_leave(self) -> bool:
        now = time.monotonic()
        busy = self.busy_since
        if busy is not None and now - busy > WATCHDOG_SECONDS:
            log(f"an event has run for over {WATCHDOG_SECONDS} s; leaving")
            self.close_door()
            os._exit(1)  # the worker is stuck: SQLite rolls its transaction back
        if busy is None and self.requests.empty() and now - self.last_active > self.idle:
            log(f"idle for {self.idle:g} s; leaving")
            return True
        return False

    def receive(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(READ_TIMEOUT_SECONDS)
            header = wire.read_sized(conn, wire.MAX_HEADER)
            stdin = wire.read_sized(conn, wire.MAX_STDIN)
            request = wire.Request(header, stdin)
        except (OSError, EOFError, ValueError) as exc:
            log(f"unreadable request: {exc}")
            conn.close()
            return
        try:
            if request.version != self.version:
                conn.sendall(wire.frame(wire.OTHER_VERSION, self.version.encode()))
                conn.close()
                log(f"a client of another version ({request.version}); leaving")
                self.stopping.set()
                return
            conn.sendall(wire.frame(wire.ACCEPTED))
        except OSError:
            conn.close()
            return
        self.requests.put((conn, request))

    # -- the one writer ---------------------------------------------------------------------

    def work(self) -> None:
        while True:
            conn, request = self.requests.get()
            if conn is None or request is None:
                return
            if self.stopping.is_set():
                self.decline(conn, "the resident is leaving")
                continue
            changed = self.code.changed()
            if changed is not None:
                # Reinstalled or edited in place, same version: it must not answer with the
                # old code. The client answers this one; the next starts a new resident.
                log(f"{changed} changed on disk; leaving")
                self.stopping.set()
                self.decline(conn, "the resident's code changed on disk")
                continue
            self.busy_since = time.monotonic()
            try:
                self.answer(conn, request)
            except Exception as exc:  # an event's failure is its own, never the resident's
                log(f"event failed: {type(exc).__name__}: {exc}")
            finally:
                conn.close()
                self.code.note_new_modules()
                self.busy_since = None
                self.last_active = time.monotonic()

    def decline(self, conn: socket.socket, why: str) -> None:
        self.declined += 1
        with contextlib.suppress(OSError):
            conn.sendall(wire.frame(wire.NOT_HERE, why.encode()))
        conn.close()

    def answer(self, conn: socket.socket, request: wire.Request) -> None:
        deadline = request.started + TIMEOUT_SECONDS - MARGIN_SECONDS + CLIENT_GRACE_SECONDS
        if time.monotonic() >= deadline:
            return self.decline(conn, "the request waited past its budget")
        try:
            os.chdir(request.cwd)
        except OSError as exc:
            return self.decline(conn, f"cannot enter the hook's directory: {exc}")
        # The engine reads some of its environment from os.environ (the git user's files, the
        # store's fsync switch): it gets the hook's, as in the hook's own process.
        os.environ.clear()
        os.environ.update(request.env)
        why = not_for_here(request.argv, request.stdin, request.env)
        if why is not None:
            return self.decline(conn, why)
        from .main import main

        pause(request.env, "received")
        out = Answer(conn, request.started + TIMEOUT_SECONDS)

        def before_commit() -> None:
            pause(request.env, "answered")
            out.confirm()

        self.answered += 1
        try:
            code = main(
                request.argv,
                stdin=io.BytesIO(request.stdin),
                stdout=out,
                env=request.env,
                started=request.started,
                before_commit=before_commit,
            )
        except ClientGone as exc:
            # Rolled back; the client answered the event itself. Not a failure of the hook's,
            # so this log, not hooks.log, says it.
            log(f"event handed back: {exc}")
            return None
        if not out.confirmed and out.buffer.getvalue():
            # Printed outside a transaction (nothing is): never without the client's word.
            log("an answer was written outside the event's transaction; not sent")
        try:
            conn.settimeout(max(0.05, deadline - time.monotonic()))
            conn.sendall(wire.frame(wire.END, str(code).encode()))
        except OSError:
            pass
        return None


class LoadedCode:
    """The files of the package's modules this process loaded, as they were when loaded."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, int] | None] = {}
        self.note_new_modules()

    def note_new_modules(self) -> None:
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if name.startswith("dsh_sidecar") and path and path not in self.seen:
                self.seen[path] = _stamp(path)

    def changed(self) -> str | None:
        """A file that is not what was loaded any more; None when all are."""
        for path, stamp in self.seen.items():
            if _stamp(path) != stamp:
                return path
        return None


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


# How long past the resident's own lock wait a client waits for its answer, so that an event
# whose store was busy for the whole wait still reaches the client (and spools only once).
CLIENT_GRACE_SECONDS = 0.5


def not_for_here(argv: list[str], stdin: bytes, env: Mapping[str, str]) -> str | None:
    """Why this event must run in the hook's own process; None when the resident may answer.

    A command line other than the installer's (argparse would print here, not in the hook) and a
    prompt that reads tmux (which asks about the hook's parent process) stay with the client."""
    from .main import _quick_args, _settings, parse_event

    args = _quick_args(argv)
    if args is None:
        return "not an installed command line"
    try:
        from dsh_sidecar.config import Settings

        settings = _settings(args.settings) if args.settings else Settings()
        if not settings.tmux_context.enabled:
            return None
        import json

        if parse_event(args.agent, json.loads(stdin)).kind == "prompt":
            return "a prompt with tmuxContext on"
    except Exception:
        return None  # the engine reports it in its log line, as in the hook's own process
    return None


def pause(env: Mapping[str, str], stage: str) -> None:
    from . import testpoint

    testpoint.stage(env, stage, variable=PAUSE_ENV)


def warm_up() -> None:
    """Load what every event uses before the socket appears: the first client it serves should
    not pay the imports a hook process pays."""
    import importlib

    for name in ("main", "runtime", "answer", "output", "adapter", "tool_paths", "gemini"):
        importlib.import_module(f"dsh_sidecar.hooks.{name}")


def main(argv: list[str]) -> int:
    home, lock_fd = argv[0], int(argv[1])
    os.set_inheritable(lock_fd, False)
    # The lock file names the process holding it, for doctor and for tests that stop it.
    os.ftruncate(lock_fd, 0)
    os.pwrite(lock_fd, f"{os.getpid()}\n".encode(), 0)
    warm_up()
    resident = Resident(home, wire.idle_seconds(os.environ))
    try:
        resident.bind()
    except (OSError, SystemExit) as exc:
        log(f"cannot listen on {resident.path}: {exc}")
        return 1

    def stop(signum: int, frame: object) -> None:
        resident.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log(f"listening on {resident.path} (version {resident.version}, idle {resident.idle:g} s)")
    try:
        resident.serve()
    finally:
        resident.close_door()
    log(f"stopped: answered {resident.answered} event(s), declined {resident.declined}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

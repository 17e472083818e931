"""The TCP listener's door: who is let in, how many may wait at it, and what the log says.

``127.0.0.1`` is open to every local user, and a crowd at the door must not keep the owner out
(docs/protocol.md, "Who may connect"). So the listener accepts connections itself rather than
through ``asyncio.start_server``, and before a byte is read from one:

- **another uid is refused.** On Linux the peer's uid comes from the kernel (``tcp_peers``:
  sock_diag, else ``/proc/net/tcp``); a connection from another user gets one ``unauthorized``
  error and is closed at once, so it holds no descriptor and no buffer. A peer the kernel no longer knows (it has
  already gone) is closed too. Where neither source can be read, the token is the only check.
- **at most ``MAX_WAITING`` connections wait to authenticate.** One more evicts the oldest
  waiting one if that has had ``EVICT_AFTER_SECONDS`` to send its token, else it is turned
  away itself; each waiting connection holds at most one small message
  (``transport.UNAUTHENTICATED_MAX_BODY_BYTES``) and is closed after a short timeout.
- **refusals are counted, not logged one by one**: the first of a quiet spell gets a line (and
  a clean close), the rest one summary line per ``SUMMARY_SECONDS`` (and a reset, see
  ``_turn_away``).
- **a crowd is sorted in paced batches**: after a full batch of ``ACCEPT_BATCH`` accepts the door
  rests as long as the batch took, so refusing never takes more than half of the loop from the
  clients already in; the crowd waits in a backlog deeper than it is.
- **running out of descriptors pauses accepting** (with a growing delay, up to a second) instead
  of spinning on ``accept`` or logging each failure; connections wait in the kernel's backlog
  meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import socket
import struct
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Coroutine
from typing import Any

from . import framing, incoming
from .tcp_peers import PeerUids, endpoints
from .transport import CODE_UNAUTHORIZED

log = logging.getLogger(__name__)

MAX_WAITING = 32
# A waiting connection younger than this is not evicted for a newcomer (who is turned away
# instead): every client gets this long to send its initialize, however busy the door.
EVICT_AFTER_SECONDS = 1.0
ACCEPT_BATCH = 64  # accepts per wake-up, so one flood cannot starve the rest of the loop
# As deep as the system allows (net.core.somaxconn caps it, 4096 on current Linux): a flood
# reconnects as fast as it is refused, and a full queue drops the owner's SYN, which the client's
# kernel only retries after 1 s, then 3 s. Deeper than the flood's connections, it never fills.
BACKLOG = socket.SOMAXCONN
SUMMARY_SECONDS = 10.0
PAUSE_FIRST_SECONDS = 0.05
PAUSE_MOST_SECONDS = 1.0
# Running out of these is a reason to wait, not to stop listening.
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# The peer gave up between the kernel's accept queue and us.
_PEER_GONE = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.ECONNRESET})

_RESET_ON_CLOSE = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s

Serve = Callable[[socket.socket, Callable[[], None]], Coroutine[Any, Any, None]]


class RefusalLog:
    """Refusals by reason: the first of a quiet spell logged, the rest summed up."""

    def __init__(self, interval: float = SUMMARY_SECONDS) -> None:
        self._interval = interval
        self._counts: Counter[str] = Counter()
        self._window: asyncio.TimerHandle | None = None

    def add(self, reason: str) -> bool:
        """Count one refusal; True if it is the first of a quiet spell (and was logged)."""
        if self._window is None:
            log.warning("TCP: refused a connection: %s (more are summed up every %g s)", reason, self._interval)  # fmt: skip
            self._open_window()
            return True
        self._counts[reason] += 1
        return False

    def _open_window(self) -> None:
        self._window = asyncio.get_running_loop().call_later(self._interval, self._close_window)

    def _close_window(self) -> None:
        self._window = None
        if self.flush():
            self._open_window()

    def flush(self) -> bool:
        """Log what is counted (one line); whether there was anything."""
        if not self._counts:
            return False
        total = sum(self._counts.values())
        parts = ", ".join(f"{n} {reason}" for reason, n in self._counts.most_common())
        log.warning("TCP: refused %d more connection(s): %s", total, parts)
        self._counts.clear()
        return True

    def close(self) -> None:
        if self._window is not None:
            self._window.cancel()
            self._window = None
        self.flush()


class Door:
    """Accepts on a listening socket and hands admitted connections to ``serve``."""

    def __init__(self, sock: socket.socket, serve: Serve, *, own_uid: int | None = None) -> None:
        self._sock = sock
        self._serve = serve
        self._own_uid = os.geteuid() if own_uid is None else own_uid
        self._loop = asyncio.get_running_loop()
        self.refusals = RefusalLog()
        self._waiting: OrderedDict[int, tuple[float, asyncio.Task[None]]] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_key = 0
        self._pause = 0.0
        self._resume: asyncio.TimerHandle | None = None
        self._closed = False
        self._peers = PeerUids()
        self.uid_checked = self._peers.available

    def open(self) -> None:
        self._sock.setblocking(False)
        self._sock.listen(BACKLOG)
        self._loop.add_reader(self._sock.fileno(), self._on_readable)

    async def close(self) -> None:
        self._closed = True
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(self._sock.fileno())
        if self._resume is not None:
            self._resume.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self.refusals.close()
        self._peers.close()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    # --- accepting ----------------------------------------------------------------------------

    def _on_readable(self) -> None:
        started = time.monotonic()
        batch: list[socket.socket] = []
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                if exc.errno in _PEER_GONE:
                    continue
                if exc.errno in _OUT_OF_RESOURCES:
                    self._pause_accepting(exc)
                    break
                self.refusals.add(f"accept failed ({exc.strerror or exc})")
                self._pause_accepting(exc)
                break
            batch.append(conn)
        if batch:
            if self._resume is None:
                self._pause = 0.0
            self._sort(batch)
        if len(batch) == ACCEPT_BATCH and self._resume is None:
            # A full batch: a crowd at the door. Rest as long as it took, so that sorting it
            # never takes more than half of the loop from the clients already in (the crowd
            # waits in the backlog meanwhile, and cannot reconnect faster than it is refused).
            self._loop.remove_reader(self._sock.fileno())
            self._resume = self._loop.call_later(time.monotonic() - started, self._resume_accepting)

    def _pause_accepting(self, exc: OSError) -> None:
        self._pause = min(max(self._pause * 2, PAUSE_FIRST_SECONDS), PAUSE_MOST_SECONDS)
        name = errno.errorcode.get(exc.errno or 0, str(exc))
        self.refusals.add(f"accept paused: {name}")
        self._loop.remove_reader(self._sock.fileno())
        self._resume = self._loop.call_later(self._pause, self._resume_accepting)

    def _resume_accepting(self) -> None:
        self._resume = None
        if not self._closed:
            self._loop.add_reader(self._sock.fileno(), self._on_readable)

    # --- sorting who comes in -----------------------------------------------------------------

    def _sort(self, batch: list[socket.socket]) -> None:
        self._peers.new_batch()
        for conn in batch:
            refusal = self._refusal(conn)
            if refusal is None:
                self._let_wait(conn)
            else:
                counted_as, told = refusal
                _turn_away(conn, told, reset=not self.refusals.add(counted_as))

    def _refusal(self, conn: socket.socket) -> tuple[str, str] | None:
        """(what the log counts, what the peer is told), or None to let it wait for the token."""
        if not self.uid_checked:
            return None
        ends = endpoints(conn)
        uid = None if ends is None else self._peers.peer_uid(*ends)
        if uid is None:
            return "peer already gone", "the peer could not be identified"
        if uid != self._own_uid:
            return f"from uid {uid}", f"this port serves uid {self._own_uid} only"
        return None

    def _let_wait(self, conn: socket.socket) -> None:
        if len(self._waiting) >= MAX_WAITING:
            key, (since, oldest) = next(iter(self._waiting.items()))
            if self._loop.time() - since < EVICT_AFTER_SECONDS:
                # Everyone waiting came just now and may be about to authenticate.
                quiet = self.refusals.add(f"turned away (over {MAX_WAITING} waiting to authenticate)")  # fmt: skip
                _turn_away(conn, f"over {MAX_WAITING} connections are waiting to authenticate", reset=not quiet)  # fmt: skip
                return
            del self._waiting[key]
            oldest.cancel()
            self.refusals.add(f"evicted (over {MAX_WAITING} waiting to authenticate)")
        key = self._next_key
        self._next_key += 1
        task = self._loop.create_task(self._serve(conn, lambda: self._authenticated(key)))
        self._waiting[key] = (self._loop.time(), task)
        self._tasks.add(task)

        def forget(done: asyncio.Task[None]) -> None:
            self._tasks.discard(done)
            waiting = self._waiting.get(key)
            if waiting is not None and waiting[1] is done:
                del self._waiting[key]

        task.add_done_callback(forget)

    def _authenticated(self, key: int) -> None:
        self._waiting.pop(key, None)


def _turn_away(conn: socket.socket, told: str, *, reset: bool) -> None:
    """One ``unauthorized`` error, if the socket takes it at once, then close: nothing is read.

    ``reset`` (in a wave of refusals) closes with a reset instead of a FIN: the refusal already
    sent still arrives on loopback, and no TIME_WAIT entry is left behind for each refused
    connection (a flood leaves tens of thousands otherwise, each holding its port pair). A
    quick client may see only the reset.
    """
    refusal = incoming.error_response(
        None, incoming.INVALID_REQUEST, f"Unauthorized: {told}", CODE_UNAUTHORIZED
    )
    with contextlib.suppress(OSError):
        conn.setblocking(False)
        conn.send(framing.encode_frame(json.dumps(refusal).encode("ascii")))
        if reset:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET_ON_CLOSE)
    conn.close()

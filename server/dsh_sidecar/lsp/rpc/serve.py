"""``serve``'s three transports and how the process stops (docs/protocol.md, Transport).

- stdio: one connection; the process ends with it (status 0, or the ``exit`` status).
- TCP (127.0.0.1 only) and Unix socket: any number of connections, each with its own server
  instance (protocol, settings, session service, live sessions; only the store file is shared),
  so one client's messages, answers, settings and sessions never meet another's, and a client
  that leaves or sends ``exit`` ends only its own connection.

SIGINT and SIGTERM stop any transport cleanly: connections are released as if they had shut
down, the token file or socket is removed, and ``StoppedBySignal`` lets the command print one
line. A listener that cannot start raises ``ServeError`` with a one-line reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from dsh_sidecar.config import resolve_dsh_home
from dsh_sidecar.private_paths import peer_uid

from . import framing, incoming
from .auth import ServeError, TokenFile
from .heap import keep_freed_memory
from .tcp import Door
from .transport import (
    CODE_UNAUTHORIZED,
    Connection,
    Limits,
    ServerFactory,
    SocketStream,
    StdioStream,
)
from .unix import UnixListenerSocket

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"

__all__ = ["ServeError", "StoppedBySignal", "run", "serve_stdio", "serve_tcp", "serve_unix"]


class StoppedBySignal(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def run(main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` until it returns, or until SIGINT/SIGTERM (then raise StoppedBySignal)."""

    async def until_signal() -> int:
        loop = asyncio.get_running_loop()
        stop: asyncio.Future[int] = loop.create_future()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, _settle, stop, signum)
        work = asyncio.ensure_future(main)
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
        if work.done():
            stop.cancel()
            return work.result()
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        raise StoppedBySignal(stop.result())

    # What start-up imported and built (pygls and lsprotocol's classes, the handlers, the
    # settings table: tens of thousands of objects that live as long as the process) is moved
    # out of the collector's way, so a full collection walks only what requests made.
    gc.freeze()
    keep_freed_memory()
    return asyncio.run(until_signal())


def _settle(stop: asyncio.Future[int], signum: int) -> None:
    if not stop.done():
        stop.set_result(signum)


# --- stdio ------------------------------------------------------------------------------------


async def serve_stdio(make_server: ServerFactory, limits: Limits) -> int:
    connection = Connection(make_server, StdioStream(), limits, label="stdio")
    status = await connection.run()
    return 0 if status is None else status


# --- listeners --------------------------------------------------------------------------------


class _Clients:
    """The connection tasks of one listener, so that stopping can release every one."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        self.count = 0

    def handler(
        self,
        serve_one: Callable[[asyncio.StreamReader, asyncio.StreamWriter, str], Awaitable[None]],
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self.tasks.add(task)
            self.count += 1
            label = f"client {self.count}"
            try:
                await serve_one(reader, writer, label)
            except asyncio.CancelledError:
                # The listener is stopping and cancelled this connection's task. The task is ours
                # and ends here; re-raising would make asyncio's stream callback log the
                # cancellation as an error, with a traceback, on the way out.
                return
            except Exception:
                # One connection's failure never reaches the listener or the other clients.
                log.exception("%s: connection failed", label)
                writer.close()
            finally:
                self.tasks.discard(task)

        return handle

    async def release_all(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)


async def _listen(
    start: Callable[[Callable[..., Awaitable[None]]], Awaitable[asyncio.Server]],
    clients: _Clients,
    serve_one: Callable[[asyncio.StreamReader, asyncio.StreamWriter, str], Awaitable[None]],
    announcement: dict[str, Any],
) -> int:
    listener = await start(clients.handler(serve_one))
    _announce(announcement)
    try:
        await listener.serve_forever()
    finally:
        listener.close()
        await clients.release_all()
    return 0


def _announce(fields: dict[str, Any]) -> None:
    # One line on stdout, JSON so that a script can read it without guessing at the format.
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def serve_tcp(make_server: ServerFactory, port: int, limits: Limits) -> int:
    sock = _bind_tcp(port)
    try:
        port = int(sock.getsockname()[1])
        token = TokenFile.create(resolve_dsh_home(None), port)
    except BaseException:
        sock.close()
        raise
    clients = _Clients()
    door: Door | None = None

    async def serve_one(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, label: str
    ) -> None:
        assert door is not None
        connection = Connection(
            make_server,
            SocketStream(reader, writer),
            limits,
            auth=token,
            label=label,
            on_authenticated=authenticated.get(writer),
            on_refused=door.refusals.add,
        )
        await connection.run()

    # The door's callback for each waiting connection, found again by its writer.
    authenticated: dict[asyncio.StreamWriter, Callable[[], None]] = {}
    handle = clients.handler(serve_one)

    async def admitted(conn: socket.socket, on_authenticated: Callable[[], None]) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=conn)
        except OSError:
            conn.close()
            return
        authenticated[writer] = on_authenticated
        try:
            await handle(reader, writer)
        finally:
            authenticated.pop(writer, None)

    try:
        door = Door(sock, admitted)
        door.open()
        if not door.uid_checked:
            log.warning(
                "TCP: the peers' uids cannot be learnt here (no sock_diag, no /proc/net/tcp); only the token keeps other users out"
            )
        _announce({"transport": "tcp", "host": LOOPBACK, "port": port, "tokenFile": token.path})
        await asyncio.get_running_loop().create_future()  # until the serving task is cancelled
        return 0
    finally:
        if door is not None:
            await door.close()
        await clients.release_all()
        token.remove()
        sock.close()


def _bind_tcp(port: int) -> socket.socket:
    # Loopback only: the sidecar serves session logs and must not be reachable from the network.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # Lets a restarted server take its port back from connections still in TIME_WAIT; a
        # port another socket listens on stays refused.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        reason = (
            "address already in use"
            if exc.errno == errno.EADDRINUSE
            else (exc.strerror or str(exc))
        )
        raise ServeError(f"cannot listen on {LOOPBACK}:{port}: {reason}") from exc
    return sock


async def serve_unix(make_server: ServerFactory, path: str, limits: Limits) -> int:
    place = UnixListenerSocket(path)
    sock = place.bind()
    clients = _Clients()
    own_uid = os.geteuid()

    async def serve_one(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, label: str
    ) -> None:
        uid = peer_uid(writer.get_extra_info("socket"))
        if uid != own_uid:
            log.warning("%s: refused: peer uid %d is not %d", label, uid, own_uid)
            stream = SocketStream(reader, writer)
            refusal = incoming.error_response(
                None,
                incoming.INVALID_REQUEST,
                f"Unauthorized: this socket serves uid {own_uid} only",
                CODE_UNAUTHORIZED,
            )
            stream.write(framing.encode_frame(json.dumps(refusal).encode("ascii")))
            await stream.drain()
            await stream.close()
            return
        connection = Connection(make_server, SocketStream(reader, writer), limits, label=label)
        await connection.run()

    try:
        return await _listen(
            lambda handle: asyncio.start_unix_server(handle, sock=sock),
            clients,
            serve_one,
            {"transport": "unix", "path": place.path},
        )
    finally:
        place.remove()
        sock.close()

"""One client connection: bytes in, framed and checked messages to pygls, answers out.

The same loop serves stdio, TCP and Unix sockets (docs/protocol.md, Transport). It reads what
the stream gives, lets ``framing`` cut it into bodies, lets ``incoming`` check each body, answers
every refusal itself, and hands only well-formed top-level messages to the connection's own
``DshProtocol``. Nothing a client sends ends anything but this connection.

A connection ends on ``exit``, on end of input, on a refused authentication (TCP), or when the
serving task is cancelled (SIGINT/SIGTERM). At end of input the requests already being worked on
are given a short grace period to answer (a client may close its side and still read), then the
connection's sessions are released exactly as ``shutdown`` would release them.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import json
import logging
import os
import select
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from lsprotocol import types

from dsh_sidecar import errors

from . import framing, incoming
from .converter import describe_structure_error
from .framing import Body, FrameParser, FramingError
from .protocol import DshProtocol

log = logging.getLogger(__name__)

READ_CHUNK = 65536
# Until a TCP client has authenticated, its messages are held to this size: an initialize with
# generous settings and an editor's full client capabilities is some tens of kilobytes.
UNAUTHENTICATED_MAX_BODY_BYTES = 64 * 1024
# At end of input, how long requests already running may still finish and be answered.
END_OF_INPUT_GRACE_SECONDS = 5.0
# stdin chunks read ahead of the loop at most (each up to READ_CHUNK bytes).
QUEUED_CHUNKS = 4

# How long a TCP client has to send initialize with the token before it is closed: a client
# sends it as soon as it is connected, and a waiting connection holds a place at the door.
AUTH_TIMEOUT_SECONDS = 5.0

CODE_UNAUTHORIZED = errors.UNAUTHORIZED


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = framing.DEFAULT_MAX_BODY_BYTES
    auth_timeout_seconds: float = AUTH_TIMEOUT_SECONDS


class ByteStream(Protocol):
    async def read(self) -> bytes:
        """Up to ``READ_CHUNK`` bytes; empty at end of input."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    async def close(self) -> None: ...


class TokenCheck(Protocol):
    def accepts(self, offered: Any) -> bool: ...


class SocketStream:
    """An accepted TCP or Unix connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self) -> bytes:
        try:
            return await self._reader.read(READ_CHUNK)
        except (ConnectionError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.drain()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()


class StdioStream:
    """stdin and stdout, whatever they are (pipe, socket, terminal, regular file).

    stdin's descriptor flags are never changed (asyncio's pipe transport would make a terminal
    non-blocking for the shell too). A pipe or a socket (what an editor gives its server) is
    read on the loop when the loop says it is readable, which a blocking read then never waits
    on; anything else (a terminal, a regular file, which the loop cannot watch) is read by a
    daemon thread with blocking reads, each chunk handed to the loop with one
    ``call_soon_threadsafe``. At most ``QUEUED_CHUNKS`` wait for the connection either way
    (back-pressure). stdout is written in place, blocking, as pygls did: there is one client
    and the order of its messages is all that matters.
    """

    def __init__(self, in_fd: int = 0, out_fd: int = 1) -> None:
        self._in_fd = in_fd
        self._out_fd = out_fd
        self._chunks: collections.deque[bytes] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._broken = False
        self._watched = False  # the loop watches stdin (pipe, socket) ...
        self._ended = False
        self._room: threading.Semaphore | None = None  # ... or a thread reads it
        if _watchable(in_fd):
            try:
                self._loop.add_reader(in_fd, self._readable)
                self._watched = True
            except (OSError, ValueError, NotImplementedError):
                pass
        if not self._watched:
            self._room = threading.Semaphore(QUEUED_CHUNKS)
            threading.Thread(target=self._pump, name="dsh-stdin", daemon=True).start()

    def _readable(self) -> None:
        try:
            data = os.read(self._in_fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data or len(self._chunks) + 1 >= QUEUED_CHUNKS:
            self._stop_watching()
        self._ended = not data
        self._arrived(data)

    def _stop_watching(self) -> None:
        if self._watched:
            self._watched = False
            self._loop.remove_reader(self._in_fd)

    def _pump(self) -> None:
        assert self._room is not None
        while True:
            self._room.acquire()
            try:
                data = os.read(self._in_fd, READ_CHUNK)
            except InterruptedError:
                self._room.release()
                continue
            except OSError:
                data = b""
            try:
                self._loop.call_soon_threadsafe(self._arrived, data)
            except RuntimeError:
                return  # the loop is gone: the process is ending
            if not data:
                return

    def _arrived(self, data: bytes) -> None:
        self._chunks.append(data)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read(self) -> bytes:
        while not self._chunks:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = self._chunks.popleft()
        if self._room is not None:
            self._room.release()
        elif not self._watched and not self._ended:
            self._loop.add_reader(self._in_fd, self._readable)
            self._watched = True
        return data

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self._broken:
            try:
                written = os.write(self._out_fd, view)
            except InterruptedError:
                continue
            except BlockingIOError:
                select.select([], [self._out_fd], [])
                continue
            except OSError as exc:
                # The client closed stdout (EPIPE) or it is otherwise gone: nothing more can
                # reach it, and that is not worth a traceback.
                self._broken = True
                log.info(
                    "stdout is closed (%s); dropping output",
                    errno.errorcode.get(exc.errno or 0, exc),
                )
                return
            view = view[written:]

    async def drain(self) -> None:
        return None

    async def close(self) -> None:
        self._stop_watching()


def _watchable(fd: int) -> bool:
    """Whether the loop can tell when ``fd`` has data for a blocking read (a pipe, a socket)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class FrameWriter:
    """pygls' writer: it hands us bodies (``include_headers=False``), we add the framing."""

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream
        self.closed = False

    def write(self, body: bytes) -> None:
        if not self.closed:
            self._stream.write(framing.encode_frame(body))

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode("ascii"))

    def close(self) -> None:
        self.closed = True


class Connection:
    """One client. Its server instance is built when the client is admitted: at once, or on TCP
    only once the token has been checked, so a connection that never authenticates costs no
    more than its socket."""

    def __init__(
        self,
        make_server: ServerFactory,
        stream: ByteStream,
        limits: Limits,
        *,
        auth: TokenCheck | None = None,
        label: str = "stdio",
        on_authenticated: Callable[[], None] | None = None,
        on_refused: Callable[[str], object] | None = None,
    ) -> None:
        self._make_server = make_server
        self.server: ServedServer | None = None
        self._protocol: DshProtocol | None = None
        self.stream = stream
        self.limits = limits
        self.label = label
        self._auth = auth
        # TCP: the door is told when this connection stops waiting for its token, and counts
        # the refusals before it (one log line each would let a crowd flood the log).
        self._on_authenticated = on_authenticated
        self._on_refused = on_refused
        self._writer = FrameWriter(stream)
        self._parser = FrameParser(
            limits.max_body_bytes
            if auth is None
            else min(limits.max_body_bytes, UNAUTHENTICATED_MAX_BODY_BYTES)
        )
        self._ending = False
        self._exited = False

    @property
    def protocol(self) -> DshProtocol:
        assert self._protocol is not None, "no server before the client is admitted"
        return self._protocol

    def _admit(self) -> None:
        server = self._make_server()
        protocol = server.protocol
        assert isinstance(protocol, DshProtocol)
        protocol.set_writer(self._writer, include_headers=False)
        protocol.on_exit = self._on_exit
        self.server, self._protocol = server, protocol

    async def run(self) -> int | None:
        """Serve until the connection ends; the ``exit`` status (0 or 1) if the client sent
        ``exit``, else None."""
        log.debug("%s: connected", self.label)
        if self._auth is None:
            self._admit()
        try:
            await self._read_until_end()
            if not self._ending and self._protocol is not None:
                await self._finish_running_requests()
        finally:
            self._writer.close()
            if self.server is not None:
                await self.protocol.release()
                self.server.shutdown()  # pygls' thread pool
            await self.stream.close()
            log.debug("%s: closed", self.label)
        return self.protocol.exit_code if self._exited else None

    async def _read_until_end(self) -> None:
        deadline = asyncio.get_running_loop().time() + self.limits.auth_timeout_seconds
        while not self._ending:
            if self._auth is None:
                data = await self.stream.read()
            else:
                try:
                    remaining = deadline - asyncio.get_running_loop().time()
                    data = await asyncio.wait_for(self.stream.read(), max(remaining, 0))
                except TimeoutError:
                    reason = f"no initialize with the token within {self.limits.auth_timeout_seconds:g} s"
                    self._refuse(None, reason)
                    break
            if not data:
                if self._parser.mid_message and self._auth is not None and self._on_refused:
                    self._on_refused("input ended inside a message before authentication")
                elif self._parser.mid_message:
                    log.warning("%s: input ended inside a message", self.label)
                return
            self._parser.feed(data)
            while not self._ending and (event := self._parser.next_event()) is not None:
                self._handle(event)
            await self.stream.drain()
        await self.stream.drain()

    async def _finish_running_requests(self) -> None:
        # Our own requests to the client (workspace/configuration) will never be answered now.
        for msg_id in list(self.protocol._result_types):
            self.protocol.fail_response(msg_id, "the client's input ended")
        running = [
            asyncio.wrap_future(f) if isinstance(f, Future) else f
            for f in list(self.protocol._request_futures.values())
            if not f.done()
        ]
        if running:
            await asyncio.wait(running, timeout=END_OF_INPUT_GRACE_SECONDS)
        await self.stream.drain()

    def _on_exit(self) -> None:
        self._exited = True
        self._ending = True

    def _end_after(self, reason: str, detail: str = "") -> None:
        """End the connection; ``reason`` is a fixed phrase (refusals are counted by it),
        ``detail`` what varies."""
        if self._auth is not None and self._on_refused is not None:
            self._on_refused(reason)
        else:
            log.warning("%s: closing: %s%s", self.label, reason, f": {detail}" if detail else "")
        self._ending = True

    # --- one event --------------------------------------------------------------------------

    def _handle(self, event: Body | FramingError) -> None:
        if isinstance(event, FramingError):
            code = (
                incoming.INVALID_REQUEST
                if event.code == framing.MESSAGE_TOO_LARGE
                else incoming.PARSE_ERROR
            )
            self._writer.send(incoming.error_response(None, code, event.message, event.code))
            if self._auth is not None:
                self._end_after("framing error before authentication", event.message)
            return
        item = incoming.decode(event.data)
        if self._auth is not None:
            self._authenticate(item)
            return
        self._dispatch(item)

    def _authenticate(self, item: incoming.Incoming) -> None:
        assert self._auth is not None
        reply_id = item.id if isinstance(item, incoming.Request) else None
        if not isinstance(item, incoming.Request) or item.method != types.INITIALIZE:
            self._refuse(
                reply_id,
                "the first message must be initialize with initializationOptions.authToken",
            )
        elif self._auth.accepts(_auth_token(item.message)):
            self._auth = None
            self._parser.max_body_bytes = self.limits.max_body_bytes
            log.info("%s: authenticated", self.label)
            if self._on_authenticated is not None:
                self._on_authenticated()
            self._admit()
            self._dispatch(item)
        elif _auth_token(item.message) is None:
            self._refuse(reply_id, "initializationOptions.authToken is missing")
        else:
            self._refuse(reply_id, "initializationOptions.authToken does not match")

    def _refuse(self, reply_id: incoming.MessageId | None, reason: str) -> None:
        self._writer.send(
            incoming.error_response(
                reply_id, incoming.INVALID_REQUEST, f"Unauthorized: {reason}", CODE_UNAUTHORIZED
            )
        )
        self._end_after(f"unauthorized: {reason}")

    def _dispatch(self, item: incoming.Incoming) -> None:
        if isinstance(item, incoming.Refusal):
            self._refused(item)
        elif isinstance(item, incoming.Response):
            if item.id is None:
                log.warning("%s: a response with id null ignored", self.label)
            else:
                self.protocol.accept_response(item.message)
        else:
            self._call(item)

    def _refused(self, refusal: incoming.Refusal) -> None:
        if refusal.answer:
            self._writer.send(refusal.error_response())
        elif refusal.response_to is not None:
            self.protocol.fail_response(refusal.response_to, refusal.message)
        else:
            self._report_dropped(refusal.message)

    def _call(self, item: incoming.Request | incoming.Notification) -> None:
        is_request = isinstance(item, incoming.Request)
        message = item.message
        if item.method == types.INITIALIZE:
            message = _without_auth_token(message)
        if is_request and self.protocol.is_notification_method(item.method):
            self._answer_error(
                item,
                incoming.INVALID_REQUEST,
                f"Invalid request: {item.method} is a notification and takes no id",
                incoming.CODE_INVALID_REQUEST,
            )
            return
        if not is_request and self.protocol.is_request_method(item.method):
            self._report_dropped(f"{item.method} is a request and needs an id")
            return
        try:
            structured = self.protocol.structure_incoming(message, is_request)
        except Exception as exc:
            reason = f"{item.method}: invalid params: {describe_structure_error(exc)}"
            if is_request:
                self._answer_error(
                    item, incoming.INVALID_PARAMS, reason, incoming.CODE_INVALID_PARAMS
                )
            else:
                self._report_dropped(reason)
            return
        try:
            self.protocol.handle_message(structured)
        except Exception:
            log.exception("%s: handling %s failed", self.label, item.method)
            if is_request:
                self._answer_error(
                    item, -32603, f"Internal error handling {item.method}", errors.INTERNAL_ERROR
                )

    def _answer_error(
        self, item: incoming.Request | incoming.Notification, code: int, message: str, data: str
    ) -> None:
        assert isinstance(item, incoming.Request)
        self._writer.send(incoming.error_response(item.id, code, message, data))

    def _report_dropped(self, reason: str) -> None:
        """A notification or response that cannot be used: it has no answer, so the client
        hears about it as a log message (and so does our log)."""
        log.warning("%s: ignored: %s", self.label, reason)
        self.protocol.notify(
            types.WINDOW_LOG_MESSAGE,
            types.LogMessageParams(
                type=types.MessageType.Warning, message=f"dsh-sidecar ignored a message: {reason}"
            ),
        )


def _auth_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    return options.get("authToken") if isinstance(options, dict) else None


def _without_auth_token(message: dict[str, Any]) -> dict[str, Any]:
    """``initialize`` with ``initializationOptions.authToken`` removed: it is the transport's,
    and the settings parser would refuse it as an unknown key."""
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    if not isinstance(options, dict) or "authToken" not in options:
        return message
    assert isinstance(params, dict)
    stripped = {k: v for k, v in options.items() if k != "authToken"}
    return {**message, "params": {**params, "initializationOptions": stripped}}


class ServedServer(Protocol):
    """What a connection needs of the server it serves (``lsp/server.py``'s ``DshServer``): the
    protocol it feeds, and a shutdown of its thread pool once the connection has ended."""

    @property
    def protocol(self) -> Any: ...

    def shutdown(self) -> None: ...


ServerFactory = Callable[[], ServedServer]

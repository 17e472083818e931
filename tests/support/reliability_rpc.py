"""A small blocking JSON-RPC client for the reliability tests: the real server over stdio.

Tests here drive ``dsh-sidecar serve`` as a separate process (to fuzz it, kill it, share a store
between two of them), so the client is deliberately plain: framed JSON over pipes, a reader
thread collecting everything the server sends, and a timeout on every wait that only guards
against a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from dsh_sidecar.sessions.store import NO_FSYNC_ENV

HANG_GUARD = 60.0  # seconds; never a speed assertion
SERVE = [sys.executable, "-m", "dsh_sidecar", "serve"]


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error
        self.code = error.get("code")


class ServerGone(Exception):
    """The server closed its output (it exited or was killed)."""


class Peer:
    """The client side of one connection: framed JSON out, a reader thread collecting what comes
    back. Responses nobody waits for (id null, unknown ids) go to ``orphans``."""

    def __init__(self, write: Callable[[bytes], Any], inp: Any) -> None:
        self._write = write
        self._out = inp
        self._lock = threading.Lock()
        self._next = 0
        self._responses: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []  # every message, in order
        self.orphans: queue.Queue[dict[str, Any]] = queue.Queue()
        self.closed = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # --- transport ----------------------------------------------------------------------------

    def _read_message(self) -> dict[str, Any] | None:
        length = None
        while True:
            line = self._out.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
        assert length is not None
        body = b""
        while len(body) < length:
            chunk = self._out.read(length - len(body))
            if not chunk:
                return None
            body += chunk
        message: dict[str, Any] = json.loads(body)
        return message

    def _read_loop(self) -> None:
        while True:
            try:
                message = self._read_message()
            except (OSError, ValueError):
                message = None
            if message is None:
                self.closed.set()
                for waiting in list(self._responses.values()):
                    waiting.put({"gone": True})
                return
            self.received.append(message)
            if "method" in message:
                if "id" in message:  # a server request (workspace/configuration, ...)
                    result = self.answer_server_request(message)
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                else:
                    self.notifications.append(message)
                continue
            answered = self._responses.get(message.get("id"))  # type: ignore[arg-type]
            if answered is not None:
                answered.put(message)
            else:
                self.orphans.put(message)

    def answer_server_request(self, message: dict[str, Any]) -> Any:
        """The result sent back for a request of the server's (``workspace/configuration``):
        null unless a test says otherwise."""
        return None

    def send_raw(self, data: bytes) -> None:
        with self._lock:
            self._write(data)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def orphan(self, timeout: float = HANG_GUARD) -> dict[str, Any]:
        """The next response that no request of ours was waiting for (an error with id null)."""
        try:
            return self.orphans.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no unsolicited response within {timeout} s") from None

    # --- calls --------------------------------------------------------------------------------

    def start(self, method: str, params: Any = None) -> tuple[int, queue.Queue[dict[str, Any]]]:
        with self._lock:
            self._next += 1
            msg_id = self._next
        waiting: queue.Queue[dict[str, Any]] = queue.Queue()
        self._responses[msg_id] = waiting
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, waiting

    def expect(self, msg_id: int) -> queue.Queue[dict[str, Any]]:
        """Wait for the answer to a request sent by hand (``send``/``send_raw``) with ``msg_id``."""
        waiting: queue.Queue[dict[str, Any]] = queue.Queue()
        self._responses[msg_id] = waiting
        return waiting

    def wait(
        self, msg_id: int, waiting: queue.Queue[dict[str, Any]], timeout: float = HANG_GUARD
    ) -> Any:
        try:
            response = waiting.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer to request {msg_id} within {timeout} s") from None
        finally:
            self._responses.pop(msg_id, None)
        if response.get("gone"):
            raise ServerGone()
        if "error" in response:
            raise RpcError(response["error"])
        return response.get("result")

    def request(self, method: str, params: Any = None, timeout: float = HANG_GUARD) -> Any:
        msg_id, waiting = self.start(method, params)
        return self.wait(msg_id, waiting, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, options: dict[str, Any]) -> Any:
        result = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return result


class Server(Peer):
    """``dsh-sidecar serve`` on stdio. ``stderr`` is a file path to keep what it logs, for the
    tests that check it never writes a traceback."""

    def __init__(
        self, env: dict[str, str], argv: Sequence[str] = SERVE, stderr: str | None = None
    ) -> None:
        self.stderr_path = stderr
        err = open(stderr, "wb") if stderr is not None else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                bufsize=0,
            )
        finally:
            if stderr is not None:
                err.close()  # type: ignore[union-attr]
        assert self.proc.stdin is not None and self.proc.stdout is not None
        super().__init__(self.proc.stdin.write, self.proc.stdout)

    def stderr_text(self) -> str:
        assert self.stderr_path is not None
        with open(self.stderr_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=HANG_GUARD)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", timeout=30)
                self.notify("exit")
                self.proc.wait(timeout=30)
            except (ServerGone, TimeoutError, RpcError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=HANG_GUARD)


class SocketPeer(Peer):
    """A client on a TCP or Unix socket connection."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        super().__init__(sock.sendall, sock.makefile("rb"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def server_env(home: str, *, fsync: bool = True) -> dict[str, str]:
    """The server's environment; ``fsync=False`` for tests that are not about durability."""
    env = {k: v for k, v in os.environ.items() if k != NO_FSYNC_ENV}
    return {**env, "DSH_HOME": home, "HOME": home, **({} if fsync else {NO_FSYNC_ENV: "1"})}


def file_uri(path: str) -> str:
    return "file://" + quote(path)


def all_events(server: Server, session_id: str) -> list[dict[str, Any]]:
    """The whole raw log, page by page."""
    out: list[dict[str, Any]] = []
    after = None
    while True:
        params: dict[str, Any] = {"sessionId": session_id, "limit": 1000}
        if after is not None:
            params["afterSeq"] = after
        page = server.request("dsh/session/events", params)["events"]
        out.extend(page)
        if len(page) < 1000:
            return out
        after = page[-1]["seq"]

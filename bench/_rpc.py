"""A minimal blocking JSON-RPC client over a server subprocess's stdio.

Deliberately thin (no pygls on the client side): the client's own cost is part of every round
trip we time, so the less of it there is, the more the ratios show the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


class Client:
    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._next_id = 0
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        self.on_notification: Callable[[dict[str, Any]], None] | None = None

    # --- framing ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        self._in.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send_many(self, messages: Sequence[dict[str, Any]]) -> None:
        chunks = []
        for message in messages:
            body = json.dumps(message, separators=(",", ":")).encode("utf-8")
            chunks.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._in.write(b"".join(chunks))

    def _read_exact(self, n: int) -> bytearray:
        # Into one buffer: a pipe hands over at most 64 KiB a read, and joining the pieces one
        # by one copied a 4 MB answer (a chain 1,000 levels deep) some sixty times over.
        data = bytearray(n)
        view = memoryview(data)
        got = 0
        while got < n:
            read = os.readv(self._out.fileno(), [view[got:]])
            if not read:
                raise EOFError("server closed its stdout")
            got += read
        return data

    def receive(self) -> dict[str, Any]:
        length = None
        while True:
            line = b""
            while not line.endswith(b"\r\n"):
                byte = self._out.read(1)
                if not byte:
                    raise EOFError("server closed its stdout")
                line += byte
            if line == b"\r\n":
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
        assert length is not None
        message: dict[str, Any] = json.loads(self._read_exact(length))
        return message

    # --- requests ---------------------------------------------------------------------------

    def request_message(self, method: str, params: Any) -> dict[str, Any]:
        self._next_id += 1
        return {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}

    def exchange(self, messages: Sequence[tuple[str, Any]]) -> float:
        """Write ``messages`` at once (notifications, then the one request last) and wait for
        the request's answer; the seconds that took."""
        framed = [{"jsonrpc": "2.0", "method": m, "params": p} for m, p in messages[:-1]]
        method, params = messages[-1]
        request = self.request_message(method, params)
        start = time.perf_counter()
        self.send_many([*framed, request])
        self.wait_response(request["id"])
        return time.perf_counter() - start

    def request(self, method: str, params: Any = None) -> Any:
        message = self.request_message(method, params)
        self.send(message)
        return self.wait_response(message["id"])

    def wait_response(self, msg_id: int) -> Any:
        while True:
            message = self.receive()
            if "method" in message:
                self._handle_server_message(message)
                continue
            if message.get("id") != msg_id:
                continue
            if "error" in message:
                raise RpcError(message["error"])
            return message.get("result")

    def _handle_server_message(self, message: dict[str, Any]) -> None:
        if "id" in message:  # a server-to-client request (workspace/configuration ...)
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            return
        self.notifications.append((time.perf_counter(), message))
        if self.on_notification is not None:
            self.on_notification(message)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, options: dict[str, Any] | None = None, root: str | None = None) -> Any:
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None if root is None else "file://" + root,
                "capabilities": {},
                "initializationOptions": options or {},
            },
        )
        self.notify("initialized", {})
        return result

    def start_reader(self) -> None:
        """Read everything the server sends on a thread from now on (needed while a burst is
        written: the server blocks on a full stdout pipe if nobody reads it)."""
        import queue
        import threading

        self.responses: queue.Queue[dict[str, Any]] = queue.Queue()

        def run() -> None:
            try:
                while True:
                    message = self.receive()
                    if "method" in message:
                        self._handle_server_message(message)
                    else:
                        self.responses.put(message)
            except (EOFError, ValueError, OSError):
                return

        self._reader = threading.Thread(target=run, daemon=True)
        self._reader.start()

    def request_threaded(self, method: str, params: Any = None, timeout: float = 600) -> Any:
        """``request`` once ``start_reader`` runs."""
        message = self.request_message(method, params)
        self.send(message)
        while True:
            response = self.responses.get(timeout=timeout)
            if response.get("id") == message["id"]:
                if "error" in response:
                    raise RpcError(response["error"])
                return response.get("result")

    def close(self) -> None:
        try:
            if hasattr(self, "_reader"):
                self.request_threaded("shutdown", timeout=60)
            else:
                self.request("shutdown")
            self.notify("exit")
        except (EOFError, BrokenPipeError, RpcError, Exception):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench_server(*flags: str) -> list[str]:
    return [sys.executable, os.path.join(HERE, "bench_server.py"), *flags]


def product_server() -> list[str]:
    """The shipped server command (the CLI), as an editor starts it."""
    return [sys.executable, "-m", "dsh_sidecar", "serve"]


def file_uri(path: str) -> str:
    from urllib.parse import quote

    return "file://" + quote(path)

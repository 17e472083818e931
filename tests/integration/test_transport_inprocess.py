"""The real server and transport loop in this process, over a real socket pair, where a test must
look inside: the protocol's bookkeeping after tens of thousands of notifications, and what a
server fault looks like on the wire. Everything else about the transport is tested against
separate ``dsh-sidecar serve`` processes (tests/reliability/test_wire.py, test_transport.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import socket
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.lsp.rpc.auth import TokenFile
from dsh_sidecar.lsp.rpc.protocol import DshProtocol
from dsh_sidecar.lsp.rpc.transport import Connection, Limits, SocketStream
from dsh_sidecar.lsp.server import DshServer, build_server

HANG_GUARD = 120.0  # seconds; only against a hang, never a speed assertion


class Client:
    """A plain asyncio JSON-RPC client on one end of the socket pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            try:
                header = await self.reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            length = int(header.split(b":")[1].split(b"\r\n")[0])
            message = json.loads(await self.reader.readexactly(length))
            if "method" in message:
                if "id" in message:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                else:
                    self.notifications.append(message)
            elif message.get("id") in self.waiting:
                self.waiting.pop(message["id"]).set_result(message)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        await self.writer.drain()
        return await asyncio.wait_for(future, HANG_GUARD)

    async def result(self, method: str, params: Any = None) -> Any:
        response = await self.call(method, params)
        assert "error" not in response, response
        return response["result"]


@contextlib.asynccontextmanager
async def connected(server: DshServer) -> AsyncIterator[Client]:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    connection = Connection(lambda: server, SocketStream(reader, writer), Limits(), label="test")
    serving = asyncio.create_task(connection.run())
    client = Client(*await asyncio.open_connection(sock=theirs))
    try:
        yield client
    finally:
        client.writer.close()
        await asyncio.wait_for(serving, HANG_GUARD)
        client.task.cancel()


async def initialize(client: Client, tmp_path: Path) -> None:
    await client.result("initialize", {
        "processId": None, "rootUri": None, "capabilities": {},
        "initializationOptions": {"store": {"path": str(tmp_path / "store.sqlite3")},
                                  "instructions": {"dshHome": str(tmp_path / "home")}},
    })  # fmt: skip
    client.notify("initialized", {})


async def settled(protocol: DshProtocol) -> None:
    """Until every handler has finished (or the hang guard), then return."""
    deadline = time.monotonic() + HANG_GUARD
    while protocol._request_futures and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("batches", [3])
async def test_notifications_leave_no_bookkeeping_behind(tmp_path: Path, batches: int) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "AGENTS.md").write_text("rules\n")
    source = project / "main.py"
    source.write_text("x = 1\n")
    uri = source.as_uri()
    server = build_server()
    protocol = server.protocol
    assert isinstance(protocol, DshProtocol)
    per_batch = 10_000
    async with connected(server) as client:
        await initialize(client, tmp_path)
        opened = await client.result("dsh/session/open", {"cwd": str(project)})
        sid = opened["session"]["id"]
        document = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
        sizes = []
        for batch in range(batches):
            for i in range(per_batch // 4):
                client.notify("textDocument/didOpen", {"textDocument": document})
                client.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": i + 2},
                    "contentChanges": [{"text": f"x = {i}\n"}],
                })  # fmt: skip
                client.notify("dsh/tool/result", {
                    "sessionId": sid, "token": f"t{batch}-{i}", "name": "read",
                    "arguments": {"file_path": str(source)}, "isError": False,
                })  # fmt: skip
                client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                if i % 500 == 0:
                    await client.writer.drain()
            # Answered after every notification before it was dispatched.
            assert isinstance((await client.result("dsh/session/list", {}))["sessions"], list)
            await settled(protocol)
            sizes.append((len(protocol._request_futures), len(protocol._result_types)))
        assert sizes == [(0, 0)] * batches
        # The work itself happened: the touches reached the session.
        assert (await client.result("dsh/context/pending", {"sessionId": sid})) is not None
        await client.result("shutdown")
        client.notify("exit", None)
        await client.writer.drain()


async def test_a_server_fault_answers_internal_error_without_a_traceback(tmp_path: Path) -> None:
    server = build_server()

    @server.feature("test/boom")
    def boom(ls: DshServer, params: Any) -> None:
        raise RuntimeError("boom at /some/internal/path")

    @server.feature("test/unserializable")
    def unserializable(ls: DshServer, params: Any) -> Any:
        return {"value": object()}

    @server.feature("test/loud")
    def loud(ls: DshServer, params: Any) -> None:
        raise ValueError("a notification handler failed")

    async with connected(server) as client:
        await initialize(client, tmp_path)
        failed = await client.call("test/boom", {})
        assert failed["error"] == {
            "code": -32603,
            "message": "Internal error: RuntimeError: boom at /some/internal/path",
            "data": {"code": "internal-error"},
        }
        unanswerable = await client.call("test/unserializable", {})
        assert unanswerable["error"] == {
            "code": -32603,
            "message": "the answer could not be serialized",
            "data": {"code": "internal-error"},
        }
        client.notify("test/loud", {})
        assert isinstance((await client.result("dsh/session/list", {}))["sessions"], list)
        assert "traceback" not in json.dumps(client.notifications).lower()
        await client.result("shutdown")


async def test_end_of_input_still_answers_the_requests_in_flight(tmp_path: Path) -> None:
    server = build_server()
    release = asyncio.Event()

    @server.feature("test/slow")
    async def slow(ls: DshServer, params: Any) -> str:
        await release.wait()
        return "done"

    async with connected(server) as client:
        await initialize(client, tmp_path)
        client.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        client.waiting[client.next_id] = future
        client.send({"jsonrpc": "2.0", "id": client.next_id, "method": "test/slow", "params": {}})
        client.writer.write_eof()  # the client is done sending, still reading
        await asyncio.sleep(0.2)  # not a timing assertion: lets the server see the end first
        release.set()
        answer = await asyncio.wait_for(future, HANG_GUARD)
        assert answer["result"] == "done"


async def test_an_unauthenticated_connection_builds_no_server_and_times_out(tmp_path: Path) -> None:
    built: list[DshServer] = []

    def make() -> DshServer:
        built.append(build_server())
        return built[-1]

    token = TokenFile.create(str(tmp_path / "home"), 4321)
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    limits = Limits(auth_timeout_seconds=0.5)
    connection = Connection(make, SocketStream(reader, writer), limits, auth=token, label="t")
    serving = asyncio.create_task(connection.run())
    client_reader, client_writer = await asyncio.open_connection(sock=theirs)
    # Silence: after the deadline, one refusal and the end of the connection.
    header = await asyncio.wait_for(client_reader.readuntil(b"\r\n\r\n"), HANG_GUARD)
    body = await client_reader.readexactly(int(header.split(b":")[1].split(b"\r\n")[0]))
    assert json.loads(body) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Unauthorized: no initialize with the token within 0.5 s",
        "data": {"code": "unauthorized"},
    }}  # fmt: skip
    assert await asyncio.wait_for(client_reader.read(), HANG_GUARD) == b""
    assert await asyncio.wait_for(serving, HANG_GUARD) is None
    assert built == []
    client_writer.close()
    token.remove()


async def test_a_closed_connection_leaves_its_server_to_the_garbage_collector(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "main.py").write_text("x = 1\n")
    servers: list[weakref.ref[DshServer]] = []
    for _ in range(5):
        server = build_server()
        servers.append(weakref.ref(server))
        async with connected(server) as client:
            await initialize(client, tmp_path)
            await client.result("dsh/session/open", {"cwd": str(project)})
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": (project / "main.py").as_uri(), "languageId": "python", "version": 1,
                "text": "x = 1\n"}})  # fmt: skip
            await client.result("textDocument/hover", {
                "textDocument": {"uri": (project / "main.py").as_uri()},
                "position": {"line": 0, "character": 0}})  # fmt: skip
        del server, client
    # Timers of the document tracker (didChange coalescing) may hold a server briefly.
    await asyncio.sleep(0.5)
    gc.collect()
    assert [ref() for ref in servers] == [None] * 5

"""The wire against a live ``dsh-sidecar serve`` over stdio, in raw bytes.

Every case sends something a hostile or buggy client could send, checks the exact answer (or its
absence, for notifications), then checks that the same server still answers a well-formed
request and never wrote a traceback on stderr. The framing and message rules are in
docs/protocol.md, "Limits on messages".
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_rpc import HANG_GUARD, SERVE, RpcError, Server, server_env

from dsh_sidecar.lsp.rpc.incoming import MAX_NESTING_DEPTH
from dsh_sidecar.sessions.validation import MAX_EVENT_DEPTH


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def healthy(server: Server) -> None:
    assert isinstance(server.request("dsh/session/list", {})["sessions"], list)
    assert server.proc.poll() is None
    assert "Traceback" not in server.stderr_text()


def start(tmp: Path, *flags: str) -> Server:
    (tmp / "proj" / ".git").mkdir(parents=True, exist_ok=True)
    server = Server(
        server_env(str(tmp / "home")), argv=[*SERVE, *flags], stderr=str(tmp / "stderr.log")
    )
    server.initialize({"store": {"path": str(tmp / "store.sqlite3")}})
    return server


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    tmp = tmp_path_factory.mktemp("wire")
    server = start(tmp, "--max-message-bytes", "65536")
    sid = server.request("dsh/session/open", {"cwd": str(tmp / "proj"), "sessionId": "wire"})
    yield server, sid["session"]["id"]
    server.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Server]:
    server = start(tmp_path, "--max-message-bytes", "4096")
    yield server
    server.close()


def answer_to(server: Server, raw: bytes, msg_id: int) -> dict[str, Any]:
    waiting = server.expect(msg_id)
    server.send_raw(raw)
    try:
        server.wait(msg_id, waiting)
    except RpcError as exc:
        return exc.error
    raise AssertionError("expected an error response")


def error_body(error: dict[str, Any]) -> tuple[int, str | None]:
    return error["code"], (error.get("data") or {}).get("code")


# --- framing ------------------------------------------------------------------------------------

GOOD_LIST = b'{"jsonrpc": "2.0", "id": %d, "method": "dsh/session/list", "params": {}}'


@pytest.mark.parametrize(
    ("garbage", "message"),
    [
        (b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}", "a header block without Content-Length"),
        (b"Content-Length: abc\r\n\r\n{}", "Content-Length is not a number: 'abc'"),
        (b"Content-Length: -1\r\n\r\n{}", "Content-Length is not a number: '-1'"),
        (b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "conflicting Content-Length headers"),
        (b"X-Long: " + b"a" * 5000 + b"\r\n\r\n", "a header line is longer than 1024 bytes"),
        (b"X: 1\r\n" * 40 + b"\r\n", "more than 32 header lines"),
        (b"\x00\x01\x02 binary noise \xff\xfe", "a header line is longer than 1024 bytes"),
    ],
)  # fmt: skip
def test_unusable_headers_get_parse_error_and_the_stream_recovers(
    shared: tuple[Server, str], garbage: bytes, message: str
) -> None:
    server, _ = shared
    if garbage.startswith(b"\x00"):
        garbage += b"z" * 2000  # a line only ends (too long) once 1 KiB has come without "\n"
    waiting = server.expect(901)
    server.send_raw(garbage + frame(GOOD_LIST % 901))
    error = server.orphan()
    assert error == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message, "data": {"code": "invalid-header"}}}  # fmt: skip
    assert isinstance(server.wait(901, waiting)["sessions"], list)
    healthy(server)


def test_a_malformed_header_line_with_a_good_length_skips_exactly_its_body(
    shared: tuple[Server, str],
) -> None:
    server, _ = shared
    body = GOOD_LIST % 902
    waiting = server.expect(903)
    server.send_raw(b"Content-Length: %d\r\nnot a header\r\n\r\n" % len(body) + body + frame(GOOD_LIST % 903))  # fmt: skip
    error = server.orphan()
    assert error_body(error["error"]) == (-32700, "invalid-header")
    assert error["error"]["message"] == "malformed header line 'not a header'"
    assert isinstance(server.wait(903, waiting)["sessions"], list)
    healthy(server)


def test_lenient_spellings_of_the_header_are_accepted(shared: tuple[Server, str]) -> None:
    server, _ = shared
    body = GOOD_LIST % 904
    waiting = server.expect(904)
    server.send_raw(b"\r\ncontent-length:%d\nContent-Type: application/vscode-jsonrpc; charset=utf8\n\n" % len(body) + body)  # fmt: skip
    assert isinstance(server.wait(904, waiting)["sessions"], list)
    healthy(server)


def test_over_the_limit_is_refused_at_once_and_skipped_without_being_kept(fresh: Server) -> None:
    # The server runs with --max-message-bytes 4096.
    size = 256 * 1024 * 1024
    fresh.send_raw(b"Content-Length: %d\r\n\r\n" % size)
    # Answered before a byte of the body was sent: the size alone decides.
    assert fresh.orphan() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"Content-Length {size} is over the limit of 4096 bytes",
        "data": {"code": "message-too-large"},
    }}  # fmt: skip
    baseline = _peak_rss(fresh.proc.pid)
    chunk = b"x" * (1024 * 1024)
    for _ in range(size // len(chunk)):
        fresh.send_raw(chunk)
    # The stream is in step again right after the refused body.
    waiting = fresh.expect(905)
    fresh.send_raw(frame(GOOD_LIST % 905))
    assert isinstance(fresh.wait(905, waiting)["sessions"], list)
    # 256 MiB went through; the server never held more than a sliver of it.
    assert _peak_rss(fresh.proc.pid) - baseline < 64 * 1024 * 1024
    healthy(fresh)


def _peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_a_trillion_byte_header_is_answered_and_the_server_stays(fresh: Server) -> None:
    fresh.send_raw(b"Content-Length: 1000000000000\r\n\r\n")
    error = fresh.orphan()
    assert error_body(error["error"]) == (-32600, "message-too-large")
    assert fresh.proc.poll() is None
    assert "Traceback" not in fresh.stderr_text()
    # The client announced a terabyte: everything it sends now belongs to that body. Its own
    # connection is spoiled, the server is not: closing stdin ends it normally.
    fresh._write(b"z" * 100_000)
    fresh.proc.stdin.close()  # type: ignore[union-attr]
    assert fresh.proc.wait(timeout=HANG_GUARD) == 0
    assert "Traceback" not in fresh.stderr_text()


def test_a_body_cut_short_by_end_of_input_ends_quietly(fresh: Server) -> None:
    fresh.send_raw(b'Content-Length: 100\r\n\r\n{"jsonrpc":')
    fresh.proc.stdin.close()  # type: ignore[union-attr]
    assert fresh.proc.wait(timeout=HANG_GUARD) == 0
    assert "Traceback" not in fresh.stderr_text()


# --- bodies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "reply", "code", "data_code"),
    [
        (b'{"jsonrpc": "2.0", "id": 10, "method": "dsh/session/list", "params": {"q": "\xff"}}', None, -32700, "parse-error"),
        (b'{"jsonrpc": "2.0", "id": 11, "method": "dsh/session/list"', None, -32700, "parse-error"),
        (b'{"jsonrpc": "2.0", "id": 12, "method": "dsh/session/list", "params": {"limit": NaN}}', None, -32700, "parse-error"),
        (b'[{"jsonrpc": "2.0", "id": 13, "method": "dsh/session/list"}]', None, -32600, "invalid-request"),
        (b'"just a string"', None, -32600, "invalid-request"),
        (b'{"jsonrpc": "1.0", "id": 14, "method": "dsh/session/list"}', 14, -32600, "invalid-request"),
        (b'{"id": 15, "method": "dsh/session/list"}', 15, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": 16, "method": 16}', 16, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": 17.5, "method": "dsh/session/list"}', None, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": false, "method": "dsh/session/list"}', None, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "dsh/session/list"}', None, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": 18, "method": "dsh/session/list", "params": "all"}', 18, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": 19, "method": "textDocument/didSave", "params": {}}', 19, -32600, "invalid-request"),
        (b'{"jsonrpc": "2.0", "id": 20, "method": "textDocument/hover", "params": {"textDocument": 5}}', 20, -32602, "invalid-params"),
        (b'{"jsonrpc": "2.0", "id": 21, "method": "dsh/session/list", "params": {"q": "\\udc00"}}', 21, -32602, "invalid-params"),
        (b'{"jsonrpc": "2.0", "id": 22, "method": "dsh/session/list", "params": {"limit": 9007199254740993}}', 22, -32602, "invalid-params"),
        (b'{"jsonrpc": "2.0", "id": 23, "method": "no/such/method", "params": {}}', 23, -32601, None),
    ],
)  # fmt: skip
def test_bad_bodies_get_the_json_rpc_error_and_nothing_else(
    shared: tuple[Server, str], body: bytes, reply: int | None, code: int, data_code: str | None
) -> None:
    server, _ = shared
    if reply is None:
        server.send_raw(frame(body))
        response = server.orphan()
    else:
        response = {"error": answer_to(server, frame(body), reply)}
    assert error_body(response["error"]) == (code, data_code)
    assert "traceback" not in json.dumps(response).lower()
    healthy(server)


def test_bad_notifications_and_responses_get_no_answer(shared: tuple[Server, str]) -> None:
    server, _ = shared
    before = len(server.notifications)
    for body in [
        b'{"jsonrpc": "1.0", "method": "initialized"}',
        b'{"jsonrpc": "2.0", "method": "dsh/tool/result", "params": {"name": "\\ud800"}}',
        b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 1}}',
        b'{"jsonrpc": "2.0", "method": "dsh/session/list", "params": {}}',
        b'{"jsonrpc": "2.0", "id": "no-such-request", "result": 1}',
        b'{"jsonrpc": "2.0", "id": "x", "result": 1, "error": {"code": 1, "message": "m"}}',
    ]:
        server.send_raw(frame(body))
    healthy(server)
    assert server.orphans.empty()
    # The client learns about the ones it can be told about as log messages.
    warnings = [n["params"]["message"] for n in server.notifications[before:] if n["method"] == "window/logMessage"]  # fmt: skip
    assert any("params.name: lone surrogate" in w for w in warnings), warnings
    assert any("dsh/session/list is a request" in w for w in warnings), warnings
    assert any("textDocument/didOpen: invalid params" in w for w in warnings), warnings


def test_unrepresentable_values_name_their_field_and_write_nothing(
    shared: tuple[Server, str],
) -> None:
    server, sid = shared
    before = server.request("dsh/session/events", {"sessionId": sid})["events"]
    text = '{"type": "text", "text": "ok \\ud800"}'
    body = (
        (
            '{"jsonrpc": "2.0", "id": 30, "method": "dsh/session/append", "params": {"sessionId": "SID",'
            ' "events": [{"type": "assistant/message", "data": {"turn": 1, "step": 1, "message":'
            ' {"id": "m", "role": "assistant", "content": [TEXT], "source": {"kind": "model"}}}}]}}'
        )
        .replace("SID", sid)
        .replace("TEXT", text)
    )
    error = answer_to(server, frame(body.encode()), 30)
    assert error["code"] == -32602 and error["data"] == {"code": "invalid-params"}
    assert error["message"] == (
        "Invalid params: params.events[0].data.message.content[0].text:"
        " lone surrogate \\ud800 at character 3 is not Unicode"
    )
    big = body.replace(text, '{"type": "text", "text": "ok"}').replace('"turn": 1', '"turn": 9007199254740992')  # fmt: skip
    error = answer_to(server, frame(big.replace('"id": 30', '"id": 31').encode()), 31)
    assert error["message"].startswith("Invalid params: params.events[0].data.turn: the number 9007199254740992")  # fmt: skip
    assert server.request("dsh/session/events", {"sessionId": sid})["events"] == before
    healthy(server)


def test_nested_json_rpc_objects_round_trip_byte_for_byte(shared: tuple[Server, str]) -> None:
    server, sid = shared
    mcp_call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "search", "arguments": {"jsonrpc": "2.0", "method": "x", "params": [1, {"jsonrpc": "2.0", "id": "r", "result": None}]},
    }}  # fmt: skip
    mcp_reply = {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "nope", "data": {"jsonrpc": "2.0"}}}  # fmt: skip
    events = [
        {"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": {
            "id": "a1", "role": "assistant", "source": {"kind": "model", "raw": mcp_reply},
            "content": [{"type": "tool_use", "id": "c1", "name": "mcp", "input": mcp_call}],
        }}},
        {"type": "tool/result", "data": {"turn": 1, "step": 1, "message": {
            "id": "t1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
            "content": [{"type": "tool_result", "content": [mcp_reply, mcp_call]}],
        }}},
    ]  # fmt: skip
    seqs = server.request("dsh/session/append", {"sessionId": sid, "events": events})["seqs"]
    found = server.request("dsh/session/events", {"sessionId": sid, "afterSeq": seqs[0] - 1})
    stored = [e["data"] for e in found["events"] if e["seq"] in seqs]
    # The same bytes, key order included, as the client sent.
    assert json.dumps(stored) == json.dumps([e["data"] for e in events])
    healthy(server)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_deep_messages_are_refused_not_crashed_on(shared: tuple[Server, str]) -> None:
    server, _ = shared
    deep = {"jsonrpc": "2.0", "id": 40, "method": "dsh/session/list", "params": {"q": nested(MAX_NESTING_DEPTH)}}  # fmt: skip
    error = answer_to(server, frame(json.dumps(deep).encode()), 40)
    assert error_body(error) == (-32600, "nested-too-deeply")
    # Far deeper than Python's json can parse (its RecursionError): still one answer, id null.
    server.send_raw(frame(b'{"jsonrpc": "2.0", "id": 41, "method": "dsh/session/list", "params": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"))  # fmt: skip
    assert error_body(server.orphan()["error"]) == (-32600, "nested-too-deeply")
    healthy(server)


def _event_of_depth(depth: int) -> dict[str, Any]:
    # event (1) > data (2) > message (3) > content (4) > block (5) > "deep" ...
    return {"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": {
        "id": f"deep-{depth}", "role": "assistant", "source": {"kind": "model"},
        "content": [{"type": "nested", "deep": nested(depth - 5)}],
    }}}  # fmt: skip


def test_the_deepest_allowed_event_is_stored_and_read_back(shared: tuple[Server, str]) -> None:
    server, sid = shared
    before = server.request("dsh/session/events", {"sessionId": sid})["events"]
    with pytest.raises(RpcError) as refused:
        server.request("dsh/session/append", {"sessionId": sid, "events": [_event_of_depth(MAX_EVENT_DEPTH + 1)]})  # fmt: skip
    assert refused.value.error["data"] == {"code": "invalid-event", "index": 0}
    assert refused.value.error["message"] == f"events[0]: nested deeper than {MAX_EVENT_DEPTH} levels"  # fmt: skip
    assert server.request("dsh/session/events", {"sessionId": sid})["events"] == before

    deepest = _event_of_depth(MAX_EVENT_DEPTH)
    (seq,) = server.request("dsh/session/append", {"sessionId": sid, "events": [deepest]})["seqs"]
    events = server.request("dsh/session/events", {"sessionId": sid, "afterSeq": seq - 1})["events"]
    assert events[0]["data"] == deepest["data"]
    surface = server.request("dsh/session/surface", {"sessionId": sid})["events"]
    assert surface[-1]["data"] == deepest["data"]
    healthy(server)


# --- the lifecycle --------------------------------------------------------------------------------


def test_requests_before_initialize_get_server_not_initialized(tmp_path: Path) -> None:
    server = Server(server_env(str(tmp_path / "home")), stderr=str(tmp_path / "stderr.log"))
    try:
        with pytest.raises(RpcError) as early:
            server.request("dsh/session/list", {})
        assert error_body(early.value.error) == (-32002, "not-initialized")
        server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///x", "languageId": "t", "version": 1, "text": ""}})  # fmt: skip
        server.initialize({"store": {"path": str(tmp_path / "s.sqlite3")}})
        healthy(server)
    finally:
        server.close()


def test_an_auth_token_on_stdio_is_ignored_not_read_as_a_setting(tmp_path: Path) -> None:
    server = Server(server_env(str(tmp_path / "home")), stderr=str(tmp_path / "stderr.log"))
    try:
        server.initialize({"authToken": "anything", "store": {"path": str(tmp_path / "s.sqlite3")}})
        (tmp_path / "proj").mkdir()
        server.request("dsh/session/open", {"cwd": str(tmp_path / "proj")})
        healthy(server)
    finally:
        server.close()


def test_a_second_initialize_is_refused_and_the_first_session_lives_on(tmp_path: Path) -> None:
    server = Server(server_env(str(tmp_path / "home")), stderr=str(tmp_path / "stderr.log"))
    try:
        server.initialize({"store": {"path": str(tmp_path / "s.sqlite3")}})
        (tmp_path / "proj").mkdir()
        server.request("dsh/session/open", {"cwd": str(tmp_path / "proj"), "sessionId": "live"})
        with pytest.raises(RpcError) as again:
            server.request("initialize", {"capabilities": {}})
        assert error_body(again.value.error) == (-32600, "already-initialized")
        # The first initialize's service, and its live session, are untouched.
        assert server.request("dsh/context/pending", {"sessionId": "live"}) == {"messages": []}
        healthy(server)
    finally:
        server.close()


def test_after_shutdown_requests_get_invalid_request_and_exit_is_0(fresh: Server) -> None:
    assert fresh.request("shutdown") is None
    with pytest.raises(RpcError) as late:
        fresh.request("dsh/session/list", {})
    assert error_body(late.value.error) == (-32600, "shutting-down")
    assert late.value.error["message"] == "dsh/session/list: the server is shutting down (only exit is accepted)"  # fmt: skip
    fresh.notify("textDocument/didClose", {"textDocument": {"uri": "file:///x"}})
    fresh.notify("exit")
    assert fresh.proc.wait(timeout=HANG_GUARD) == 0
    assert "Traceback" not in fresh.stderr_text()


def test_exit_without_shutdown_is_status_1(fresh: Server) -> None:
    fresh.notify("exit")
    assert fresh.proc.wait(timeout=HANG_GUARD) == 1
    assert "Traceback" not in fresh.stderr_text()


def test_sigint_and_sigterm_stop_with_one_line(tmp_path: Path) -> None:
    for signum, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
        server = start(tmp_path / name)
        server.request("dsh/session/open", {"cwd": str(tmp_path / name / "proj")})
        server.proc.send_signal(signum)
        assert server.proc.wait(timeout=HANG_GUARD) == 128 + signum
        err = server.stderr_text()
        assert "Traceback" not in err
        assert err.endswith(f"dsh-sidecar: stopped by {name}\n"), err


def test_a_request_pipelined_behind_initialize_gets_data_code(tmp_path: Path) -> None:
    """initialize starts the session service in the background; a request sent in the same
    write, before that is done, is refused with -32002 like any early request: with data.code."""
    server = Server(server_env(str(tmp_path / "home")), stderr=str(tmp_path / "stderr.log"))
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": {"store": {"path": str(tmp_path / "s.sqlite3")}}}}  # fmt: skip
        ids = range(2, 12)
        listed = [{"jsonrpc": "2.0", "id": i, "method": "dsh/session/list", "params": {}} for i in ids]  # fmt: skip
        waiting = {i: server.expect(i) for i in (1, *ids)}
        server.send_raw(b"".join(frame(json.dumps(m).encode()) for m in (init, *listed)))
        server.wait(1, waiting[1])
        refused = []
        for i in ids:
            try:
                server.wait(i, waiting[i])
            except RpcError as exc:
                refused.append(exc.error)
        # Whether any came too early depends on scheduling; every one that did names its code.
        for error in refused:
            assert error_body(error) == (-32002, "not-initialized"), error
        server.notify("initialized", {})
        healthy(server)
    finally:
        server.close()


@pytest.mark.parametrize(
    "params", [{"id": []}, {"id": {}}, {}, {"id": None}, {"id": [1, 2]}, [], {"id": 1.5}]
)
def test_cancel_request_with_bad_params_is_dropped_without_a_traceback(
    tmp_path: Path, params: Any
) -> None:
    server = start(tmp_path)
    try:
        # A request in flight when the cancel arrives (both in one write, so the request is
        # still pending): pygls looks the id up among running requests, and an unhashable id
        # made that lookup raise.
        listed = {"jsonrpc": "2.0", "id": 77, "method": "dsh/session/list", "params": {}}
        cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": params}
        waiting = server.expect(77)
        server.send_raw(frame(json.dumps(listed).encode()) + frame(json.dumps(cancel).encode()))
        with contextlib.suppress(RpcError):  # answered, or cancelled if the id happened to fit
            server.wait(77, waiting)
        healthy(server)
        assert "unhashable" not in server.stderr_text()
    finally:
        server.close()

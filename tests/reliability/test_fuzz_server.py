"""Hypothesis against a live server: random params for every dsh/ method and the standard
document notifications, and random bytes on the wire itself. The server never crashes (it
answers ``dsh/session/list`` after every case), never writes a traceback on stderr, each request
gets a JSON-RPC error or a result, and a rejected call changes neither the log nor the inbox of
the session it named."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.support.property_budget import examples
from tests.support.reliability_rpc import SERVE, RpcError, Server, file_uri, server_env

from dsh_sidecar.protocol import methods

LONG = os.environ.get("DSH_LONG_TESTS") == "1"
EXAMPLES = 1500 if LONG else examples(60)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "sessionId",
    "cwd",
    "title",
    "query",
    "limit",
    "afterSeq",
    "events",
    "start",
    "end",
    "summary",
    "compactionId",
    "turn",
    "step",
    "prompt",
    "reason",
    "uri",
    "token",
    "parentToken",
    "name",
    "arguments",
    "isError",
    "aborted",
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, Path]]:
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("rule\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule\n")
    server = Server(server_env(str(base / "home"), fsync=False), stderr=str(base / "stderr.log"))
    server.initialize({"store": {"path": str(base / "fuzz.sqlite3")}})
    sid = server.request("dsh/session/open", {"cwd": str(root), "sessionId": "fuzz-target"})
    yield server, sid["session"]["id"], root
    server.close()


def params_for(sid: str, root: Path) -> st.SearchStrategy[Any]:
    """Mostly objects with the real field names (some pointing at the live session), sometimes
    anything at all."""
    near = st.sampled_from(
        [sid, "no-such-session", str(root), file_uri(str(root / "pkg" / "x.py"))]
    )
    field_value = st.one_of(near, json_value)
    shaped = st.dictionaries(st.sampled_from(FIELDS), field_value, max_size=6)
    return st.one_of(shaped, shaped.map(lambda d: {**d, "sessionId": sid}), json_value)


def is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


def snapshot(server: Server, sid: str) -> tuple[Any, Any]:
    events = server.request("dsh/session/events", {"sessionId": sid, "limit": 100000})
    pending = server.request("dsh/context/pending", {"sessionId": sid})
    return events, pending


NOTIFICATIONS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "textDocument/didClose",
    "workspace/didCreateFiles",
    "workspace/didRenameFiles",
    "workspace/didDeleteFiles",
    methods.TOOL_RESULT,
]


def notification_params(root: Path) -> st.SearchStrategy[Any]:
    uri = st.one_of(
        st.sampled_from(
            [file_uri(str(root / "pkg" / "x.py")), "untitled:1", "file:///", "file://host/x"]
        ),
        st.text(max_size=40).map(lambda t: "file:///" + t),
        st.text(max_size=20),
    )
    document = st.fixed_dictionaries(
        {"uri": uri},
        optional={
            "languageId": st.text(max_size=5),
            "version": st.integers(),
            "text": st.text(max_size=50),
        },
    )
    shaped = st.fixed_dictionaries(
        {"textDocument": document},
        optional={
            "contentChanges": st.lists(
                st.fixed_dictionaries({"text": st.text(max_size=10)}), max_size=2
            ),
            "files": st.lists(
                st.fixed_dictionaries({"uri": uri}, optional={"oldUri": uri, "newUri": uri}),
                max_size=3,
            ),
        },
    )
    return st.one_of(shaped, json_value)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_requests_never_crash_and_rejections_write_nothing(
    live: tuple[Server, str, Path], data: st.DataObject
) -> None:
    server, sid, root = live
    method = data.draw(st.sampled_from(methods.REQUESTS), label="method")
    params = data.draw(params_for(sid, root), label="params")
    before = snapshot(server, sid)
    if not is_json(params):
        # Infinity is not JSON: the body cannot be parsed, so its id cannot be read either, and
        # the answer is a parse error with id null (JSON-RPC 2.0), with nothing written.
        server.send({"jsonrpc": "2.0", "id": "not-json", "method": method, "params": params})
        error = server.orphan()["error"]
        assert (error["code"], error["data"]["code"]) == (-32700, "parse-error"), error
        assert snapshot(server, sid) == before
        return
    try:
        result = server.request(method, params)
    except RpcError as exc:
        assert isinstance(exc.code, int) and isinstance(exc.error.get("message"), str)
        if method != methods.SESSION_CLOSE:
            assert snapshot(server, sid) == before, f"{method} was rejected but wrote"
    else:
        assert result is None or isinstance(result, dict)
        if (
            method in (methods.SESSION_CLOSE, methods.SESSION_DELETE)
            and isinstance(params, dict)
            and params.get("sessionId") == sid
        ):
            # The live target was closed (resumed here) or deleted (opened anew under its id):
            # the next example needs it live again.
            server.request("dsh/session/open", {"cwd": str(root), "sessionId": sid})
    assert isinstance(server.request("dsh/session/list", {})["sessions"], list)
    assert "Traceback" not in server.stderr_text()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_notifications_never_crash(
    live: tuple[Server, str, Path], data: st.DataObject
) -> None:
    server, sid, root = live
    method = data.draw(st.sampled_from(NOTIFICATIONS), label="method")
    params = data.draw(
        params_for(sid, root) if method == methods.TOOL_RESULT else notification_params(root),
        label="params",
    )
    server.notify(method, params)
    assert isinstance(server.request("dsh/session/list", {})["sessions"], list)
    assert server.proc.poll() is None
    assert "Traceback" not in server.stderr_text()


# --- the wire itself ------------------------------------------------------------------------------

CAP = 4096  # the framing server's --max-message-bytes
HEADER_LINE = 1024  # docs/protocol.md, "Limits on messages"


header_name = st.one_of(
    st.sampled_from(
        [
            "Content-Length",
            "content-length",
            "CONTENT-LENGTH",
            "Content-Type",
            "Content-Length ",
            "Content Length",
            "X-Junk",
            "",
        ]
    ),
    st.text(max_size=16),
)
header_value = st.one_of(
    st.integers(-5, 2 * CAP).map(str),
    st.sampled_from(
        [
            "",
            " 12",
            "12abc",
            "0x10",
            "1e3",
            "application/vscode-jsonrpc; charset=latin-1",
            "application/vscode-jsonrpc; charset=utf-8",
        ]
    ),
    st.text(max_size=12),
)
line_end = st.sampled_from(["\r\n", "\n", "\r", ""])
header_block = st.lists(
    st.tuples(header_name, st.sampled_from([": ", ":", " : ", ""]), header_value, line_end).map(
        "".join
    ),
    max_size=6,
).map(lambda lines: ("".join(lines) + "\r\n").encode("utf-8", "surrogatepass"))
garbage_id = st.one_of(
    st.integers(-(2**60), 2**60),
    st.text(max_size=8).map(lambda t: "g" + t),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
)
message_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
        "id": garbage_id,
        "method": st.one_of(
            st.sampled_from(
                [
                    "dsh/session/list",
                    "dsh/context/preview",
                    "textDocument/hover",
                    "textDocument/didOpen",
                    "$/cancelRequest",
                    "dsh/tool/result",
                    "nope/x",
                ]
            ),
            st.text(max_size=10),
            st.integers(),
        ),
        "params": json_value,
        "result": json_value,
        "error": json_value,
    },
)
body = st.one_of(
    st.binary(max_size=200),
    json_value.map(lambda v: json.dumps(v).encode()),
    message_like.map(lambda m: json.dumps(m).encode()),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
    st.just(
        b'{"jsonrpc": "2.0", "id": 1, "method": "dsh/session/list", "params": {"q": "\\ud800"}}'
    ),
)


def _framed(payload: bytes, delta: int) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % max(0, len(payload) + delta) + payload


piece = st.one_of(
    st.binary(max_size=300),
    st.tuples(header_block, body).map(lambda hb: hb[0] + hb[1]),
    st.tuples(body, st.sampled_from([0, 0, 0, -3, -1, 1, 5])).map(lambda bd: _framed(*bd)),
)


def filler_for(garbage: bytes) -> bytes | None:
    """Bytes that bring the parser back to a header boundary whatever state ``garbage`` left it
    in, or None when that would take too many (a huge Content-Length is honoured, by design).

    The parser may be inside a header block, waiting for a body of at most CAP bytes, skipping a
    refused body of any announced size, or dropping bytes until a header. An empty line ends the
    block; then enough bytes for the largest number the garbage could have announced; then a
    line too long to be a header, after which the parser looks for the next "Content-Length:".
    """
    runs = re.findall(rb"[0-9]+", garbage)
    if any(len(run) > 6 for run in runs):
        return None
    largest = max([CAP, *(int(run) for run in runs)])
    if largest > 64 * 1024:
        return None
    return b"\n" + b"x" * (largest + 2 * HEADER_LINE + 1)


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("wire-fuzz")
    server = Server(
        server_env(str(base / "home")),
        argv=[*SERVE, "--max-message-bytes", str(CAP)],
        stderr=str(base / "stderr.log"),
    )
    server.initialize({"store": {"path": str(base / "wire.sqlite3")}})
    yield server
    server.close()


_final = iter(range(10**9))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(pieces=st.lists(piece, min_size=1, max_size=6))
def test_garbled_framing_never_crashes_and_the_stream_recovers(
    wire: Server, pieces: list[bytes]
) -> None:
    filler = filler_for(b"".join(pieces))
    assume(filler is not None)
    assert filler is not None
    for chunk in pieces:
        wire.send_raw(chunk)
    wire.send_raw(filler)
    msg_id = f"final-{next(_final)}"
    waiting = wire.expect(msg_id)  # type: ignore[arg-type]
    request = {"jsonrpc": "2.0", "id": msg_id, "method": "dsh/session/list", "params": {}}
    wire.send_raw(_framed(json.dumps(request).encode(), 0))
    assert isinstance(wire.wait(msg_id, waiting)["sessions"], list)  # type: ignore[arg-type]
    assert wire.proc.poll() is None
    assert "Traceback" not in wire.stderr_text()
    while not wire.orphans.empty():
        answer = wire.orphans.get_nowait()
        # Every unsolicited answer is a well-formed JSON-RPC error without a traceback.
        assert answer["jsonrpc"] == "2.0" and isinstance(answer["error"]["code"], int)
        assert "traceback" not in json.dumps(answer).lower()

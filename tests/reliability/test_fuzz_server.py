"""Hypothesis against a live server: random params for every dsh/ method and the standard
document notifications. The server never crashes (it answers ``dsh/session/list`` after every
call), each request gets a JSON-RPC error or a result, and a rejected call changes neither the
log nor the inbox of the session it named."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_rpc import RpcError, Server, file_uri, server_env
from tests.property_budget import examples

from dsh_sidecar.protocol import methods

LONG = os.environ.get("DSH_LONG_TESTS") == "1"
EXAMPLES = 1500 if LONG else examples(60)

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.floats(allow_nan=False),
    st.text(max_size=30),
)  # fmt: skip
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = ["sessionId", "cwd", "title", "query", "limit", "afterSeq", "events", "start", "end",
          "summary", "compactionId", "turn", "step", "prompt", "reason", "uri", "token",
          "parentToken", "name", "arguments", "isError", "aborted"]  # fmt: skip


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, Path]]:
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("rule\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule\n")
    server = Server(server_env(str(base / "home"), fsync=False))
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


def snapshot(server: Server, sid: str) -> tuple[Any, Any]:
    events = server.request("dsh/session/events", {"sessionId": sid, "limit": 100000})
    pending = server.request("dsh/context/pending", {"sessionId": sid})
    return events, pending


NOTIFICATIONS = [
    "textDocument/didOpen", "textDocument/didChange", "textDocument/didSave",
    "textDocument/didClose", "workspace/didCreateFiles", "workspace/didRenameFiles",
    "workspace/didDeleteFiles", methods.TOOL_RESULT,
]  # fmt: skip


def notification_params(root: Path) -> st.SearchStrategy[Any]:
    uri = st.one_of(
        st.sampled_from([file_uri(str(root / "pkg" / "x.py")), "untitled:1", "file:///", "file://host/x"]),
        st.text(max_size=40).map(lambda t: "file:///" + t),
        st.text(max_size=20),
    )  # fmt: skip
    document = st.fixed_dictionaries(
        {"uri": uri}, optional={"languageId": st.text(max_size=5), "version": st.integers(), "text": st.text(max_size=50)}
    )  # fmt: skip
    shaped = st.fixed_dictionaries({"textDocument": document}, optional={
        "contentChanges": st.lists(st.fixed_dictionaries({"text": st.text(max_size=10)}), max_size=2),
        "files": st.lists(st.fixed_dictionaries({"uri": uri}, optional={"oldUri": uri, "newUri": uri}), max_size=3),
    })  # fmt: skip
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
    try:
        result = server.request(method, params)
    except RpcError as exc:
        assert isinstance(exc.code, int) and isinstance(exc.error.get("message"), str)
        if method != methods.SESSION_CLOSE:
            assert snapshot(server, sid) == before, f"{method} was rejected but wrote"
    else:
        assert result is None or isinstance(result, dict)
        if (
            method == methods.SESSION_CLOSE
            and isinstance(params, dict)
            and params.get("sessionId") == sid
        ):
            server.request("dsh/session/open", {"cwd": str(root), "sessionId": sid})
    assert isinstance(server.request("dsh/session/list", {})["sessions"], list)


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

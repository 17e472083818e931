"""Bad input to every method gets InvalidParams with a stable data.code; the server keeps going."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods

from .conftest import Workspace, as_dict, call, start

BAD_CALLS: list[tuple[str, Any, str]] = [
    (methods.SESSION_OPEN, {"cwd": 5}, "invalid-params"),
    (methods.SESSION_OPEN, {"cwd": "relative/dir"}, "invalid-cwd"),
    (methods.SESSION_OPEN, {"cwd": "/definitely/not/here"}, "invalid-cwd"),
    (methods.SESSION_OPEN, None, "invalid-params"),
    (methods.SESSION_CLOSE, {"sessionId": "nope"}, "unknown-session"),
    (methods.SESSION_DELETE, {"sessionId": "nope"}, "unknown-session"),
    (methods.SESSION_LIST, {"limit": 0}, "invalid-params"),
    (methods.SESSION_LIST, {"limit": "10"}, "invalid-params"),
    (methods.SESSION_SURFACE, {"sessionId": "nope"}, "unknown-session"),
    (methods.SESSION_SURFACE, {}, "invalid-params"),
    (methods.SESSION_EVENTS, {"sessionId": "$SID", "afterSeq": "x"}, "invalid-params"),
    (
        methods.SESSION_APPEND,
        {"sessionId": "$SID", "events": [{"type": "turn/start", "data": {"turn": 1}}]},
        "invalid-event",
    ),
    (methods.SESSION_APPEND, {"sessionId": "$SID", "events": []}, "invalid-event"),
    (
        methods.SESSION_COMPACT,
        {"sessionId": "$SID", "start": 3, "end": 9, "summary": "s"},
        "invalid-event",
    ),
    (methods.SESSION_COMPACT, {"sessionId": "$SID", "start": 0, "end": 0}, "invalid-params"),
    (methods.STEP_PREPARE, {"sessionId": "$SID", "turn": 0, "step": 1}, "invalid-params"),
    (methods.STEP_PREPARE, {"sessionId": "$SID", "turn": 1, "step": True}, "invalid-params"),
    (methods.STEP_PREPARE, {"sessionId": "$SID", "turn": 1, "step": 0}, "invalid-params"),
    (methods.STEP_PREPARE, {"sessionId": "$SID", "turn": -1, "step": 1}, "invalid-params"),
    (methods.STEP_PREPARE, {"sessionId": "$SID", "turn": 1, "step": "2"}, "invalid-params"),
    (methods.STEP_END, {"sessionId": "$SID", "turn": 1, "step": 0}, "invalid-params"),
    (methods.TURN_END, {"sessionId": "$SID", "turn": 0, "reason": "done"}, "invalid-params"),
    (
        methods.SESSION_COMPACT,
        {"sessionId": "$SID", "start": -1, "end": 0, "summary": "s"},
        "invalid-params",
    ),
    (methods.SESSION_EVENTS, {"sessionId": "$SID", "limit": 0}, "invalid-params"),
    (
        methods.STEP_PREPARE,
        {
            "sessionId": "$SID",
            "turn": 1,
            "step": 1,
            "prompt": {"text": "hi", "clientTimeZone": "+08:00"},
        },
        "invalid-time-zone",
    ),
    (
        methods.STEP_PREPARE,
        {"sessionId": "$SID", "turn": 1, "step": 1, "prompt": {"text": "see dsh-session:IiJ"}},
        "SESSION_REFERENCE_INVALID_REFERENCE",
    ),
    (methods.STEP_END, {"sessionId": "nope", "turn": 1, "step": 1}, "unknown-session"),
    (methods.TURN_END, {"sessionId": "$SID", "turn": 1}, "invalid-params"),
    (methods.CONTEXT_PENDING, {"sessionId": 1}, "invalid-params"),
    (methods.CONTEXT_DISCARD, {"sessionId": "$SID", "messageId": "nope"}, "unknown-message"),
    (methods.CONTEXT_DISCARD, {"sessionId": "$SID"}, "invalid-params"),
    (methods.CONTEXT_PREVIEW, {"cwd": "/definitely/not/here"}, "invalid-cwd"),
    (methods.SCOPES, {"uri": "untitled:Untitled-1"}, "invalid-uri"),
    (methods.EXPLAIN, {"uri": "untitled:Untitled-1"}, "invalid-uri"),
    (methods.EXPLAIN, {"uri": "/definitely/not/here/x.py"}, "invalid-uri"),
    (methods.EXPLAIN, {"uri": "/", "cwd": "/definitely/not/here"}, "invalid-uri"),
    (methods.EXPLAIN, {"uri": "/etc/hostname", "cwd": "/definitely/not/here"}, "invalid-cwd"),
    (methods.EXPLAIN, {"cwd": "/"}, "invalid-params"),
    (methods.SESSION_REFERENCE_CANDIDATES, {"sessionId": "nope"}, "unknown-session"),
    (methods.SESSION_REFERENCE_CANDIDATES, {"sessionId": "$SID", "query": 3}, "invalid-params"),
]


def substitute(params: Any, sid: str) -> Any:
    if isinstance(params, dict):
        return {k: substitute(v, sid) for k, v in params.items()}
    return sid if params == "$SID" else params


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_every_method_rejects_bad_params_and_keeps_serving(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write({"AGENTS.md": "rules\n"})
    await start(client, ws)
    sid = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))["session"][
        "id"
    ]
    before = as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))["events"]
    covered = set()
    for method, params, code in BAD_CALLS:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await call(client, method, substitute(params, sid))
        assert caught.value.code == -32602
        assert caught.value.data["code"] == code, (method, params, caught.value.message)
        covered.add(method)
        # The server answers the next request normally.
        assert as_dict(await call(client, methods.SESSION_LIST, {}))["sessions"]
    assert covered == set(methods.REQUESTS)
    # No rejected call wrote anything or queued anything.
    assert (
        as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))["events"] == before
    )
    assert (
        as_dict(await call(client, methods.CONTEXT_PENDING, {"sessionId": sid}))["messages"] == []
    )


@pytest.mark.parametrize("client", ["neovim"], indirect=True)
async def test_bad_tool_result_notification_is_logged_not_fatal(
    client: LanguageClient, ws: Workspace
) -> None:
    await start(client, ws)
    sid = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))["session"][
        "id"
    ]
    waiter = client.wait_for_notification("window/logMessage")
    client.protocol.notify(methods.TOOL_RESULT, {"sessionId": sid, "token": 7, "name": "read"})
    logged = await waiter
    assert "dsh/tool/result ignored" in logged.message
    assert as_dict(await call(client, methods.SESSION_LIST, {}))["sessions"]


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_invalid_settings_fall_back_per_key_and_are_reported_until_fixed(
    client: LanguageClient, ws: Workspace
) -> None:
    """A bad key at start keeps its default and the rest applies; `dsh/settings/didCheck` names
    it; a change fixing it applies without a restart and sends an empty report."""
    from lsprotocol import types
    from pytest_lsp import client_capabilities

    pulled: dict[str, Any] = {}
    client.set_configuration(pulled, section="dsh")  # answers the server's pull, read live

    first = client.wait_for_notification(methods.SETTINGS_DID_CHECK)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=ws.project.as_uri(),
        initialization_options={
            **ws.options(),
            "timeContext": {"enabled": True, "timeZone": "Mars/Olympus"},
            "hover": {"otherFiles": "always"},
        },
    ))  # fmt: skip
    client.dsh_initialized = True  # type: ignore[attr-defined]
    report = as_dict(await first)
    assert [(r["key"], r["value"]) for r in report["refused"]] == [
        ("timeContext.timeZone", "Mars/Olympus")
    ]
    assert 'such as "Europe/Paris"' in report["refused"][0]["message"]
    # Everything else runs: sessions open, the other keys applied.
    assert as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))["session"]

    # Another bad value on a change keeps the previous one and is reported again.
    pulled.update({**ws.options(), "timeContext": {"enabled": True, "timeZone": 7}})
    again = client.wait_for_notification(methods.SETTINGS_DID_CHECK)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert [r["key"] for r in as_dict(await again)["refused"]] == ["timeContext.timeZone"]

    # Fixed: applied, and the report is empty so the client takes its message down.
    pulled["timeContext"] = {"enabled": True, "timeZone": "Asia/Tokyo"}
    cleared = client.wait_for_notification(methods.SETTINGS_DID_CHECK)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert as_dict(await cleared) == {"refused": []}
    sid = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))["session"][
        "id"
    ]
    prepared = as_dict(await call(client, methods.STEP_PREPARE, {
        "sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "what time is it"},
    }))  # fmt: skip
    rendered = "\n".join(
        b.get("text", "") for m in prepared["messages"] for b in m["content"] if isinstance(b, dict)
    )
    assert "Asia/Tokyo" in rendered or "+09:00" in rendered, rendered


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_unopenable_store_fails_initialize_naming_the_file(
    client: LanguageClient, ws: Workspace
) -> None:
    from lsprotocol import types
    from pytest_lsp import client_capabilities

    blocker = ws.base / "not-a-dir"
    blocker.write_text("a file where the store's directory should be")
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"store": {"path": str(blocker / "sessions.sqlite3")}},
        ))  # fmt: skip
    assert str(blocker / "sessions.sqlite3") in caught.value.message
    assert caught.value.data == {"code": "invalid-config", "key": "store.path"}
    client.dsh_initialized = True  # type: ignore[attr-defined]

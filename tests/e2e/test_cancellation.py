"""A cancelled prepare writes nothing and leaves the inbox as it was."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods

from .conftest import Workspace, as_dict, call, start


async def test_cancelled_prepare_leaves_log_and_inbox_unchanged(
    client: LanguageClient, ws: Workspace
) -> None:
    # Enough instruction text that the baseline read is still running when the cancel arrives.
    big = ("rule " * 200_000)[:1_000_000]
    deep = "/".join(f"d{i}" for i in range(12))
    (ws.project / deep).mkdir(parents=True, exist_ok=True)
    for i in range(12):
        part = "/".join(f"d{j}" for j in range(i + 1))
        (ws.project / part / "AGENTS.md").write_text(big + str(i))
    await start(client, ws, maxBytes=64_000_000)
    opened = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project / deep)}))
    sid = opened["session"]["id"]
    before = as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))["events"]
    inbox_before = as_dict(await call(client, methods.CONTEXT_PENDING, {"sessionId": sid}))[
        "messages"
    ]

    future = client.protocol.send_request(
        methods.STEP_PREPARE,
        {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "x"}},
        msg_id="prepare-to-cancel",
    )
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="prepare-to-cancel"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(future), 30)
    # Ask something else, then check that the cancelled step left no trace.
    await call(client, methods.SESSION_LIST, {})
    after = as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))["events"]
    assert after == before
    assert (
        as_dict(await call(client, methods.CONTEXT_PENDING, {"sessionId": sid}))["messages"]
        == inbox_before
    )
    # The session still works afterwards.
    step = as_dict(
        await call(
            client,
            methods.STEP_PREPARE,
            {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "y"}},
        )
    )
    assert step["messages"][0]["content"][0]["text"] == "y"

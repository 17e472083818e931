"""The event loop never blocks: a store locked by another process, FIFOs, sessions churning.

Each test drives the real sidecar over stdio. "Answers at once" is shown without a clock: the
request completes while the other process still holds the lock (it releases only when the test
says so), which a server blocking its loop on SQLite could not do.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from dsh_sidecar.protocol import methods

from .conftest import Workspace, as_dict, call, did_open

HOLD_LOCK = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
    """
)


async def start_with(client: LanguageClient, ws: Workspace, **sections: Any) -> None:
    options = ws.options()
    for name, values in sections.items():
        options[name] = {**options.get(name, {}), **values}
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=ws.project.as_uri(),
            initialization_options=options,
        )
    )
    client.dsh_initialized = True  # type: ignore[attr-defined]


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_a_locked_store_fails_writes_cleanly_and_nothing_else_waits(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write({"AGENTS.md": "root rules\n", "pkg/AGENTS.md": "pkg rules\n", "pkg/x.py": ""})
    await start_with(client, ws, store={"busyTimeoutMs": 300})
    sid = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))["session"][
        "id"
    ]
    before = as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))["events"]

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(ws.store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        # Requests that do not write answer while the lock is held...
        scopes = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("pkg/x.py")}))
        assert [f["displayPath"] for f in scopes["files"]] == ["AGENTS.md", "pkg/AGENTS.md"]
        preview = as_dict(await call(client, methods.CONTEXT_PREVIEW, {"cwd": str(ws.project)}))
        assert "Instructions from: AGENTS.md" in preview["text"]
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=ws.uri("AGENTS.md")),
                position=types.Position(line=0, character=0),
            )
        )
        assert hover is not None
        # ...and so do reads of the log: WAL readers never wait for a writer.
        events = as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))
        assert events["events"] == before
        assert as_dict(await call(client, methods.SESSION_LIST, {}))["sessions"]
        # A write waits out the busy timeout, then fails cleanly: nothing written, no traceback.
        with pytest.raises(JsonRpcException) as caught:
            await call(
                client,
                methods.STEP_PREPARE,
                {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
            )
        assert caught.value.code == -32803
        assert caught.value.data == {"code": "store-busy", "path": str(ws.store)}
        assert "busy" in caught.value.message and "Traceback" not in caught.value.message
        assert holder.poll() is None  # the lock was held the whole time
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert (
        as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": sid}))["events"] == before
    )
    # Once the lock is free the same step goes through.
    prepared = as_dict(
        await call(
            client,
            methods.STEP_PREPARE,
            {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
        )
    )
    assert "Instructions from: AGENTS.md" in prepared["messages"][1]["content"][0]["text"]


@pytest.mark.parametrize("client", ["neovim"], indirect=True)
async def test_fifos_named_like_instruction_files_never_block(
    client: LanguageClient, ws: Workspace
) -> None:
    # More FIFOs than there are worker threads: a blocking open() would starve every request.
    ws.write({"AGENTS.md": "root rules\n"})
    fifos = [f"d{i}/AGENTS.md" for i in range(12)]
    for rel in fifos:
        (ws.project / rel).parent.mkdir()
        os.mkfifo(ws.project / rel)
    await start_with(client, ws)
    sid = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))["session"][
        "id"
    ]
    for rel in fifos:
        did_open(client, ws.uri(rel), "")
    scopes = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("d11/AGENTS.md")}))
    assert [f["displayPath"] for f in scopes["files"]] == ["AGENTS.md"]
    prepared = as_dict(
        await call(
            client,
            methods.STEP_PREPARE,
            {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
        )
    )
    texts = [m["content"][0]["text"] for m in prepared["messages"]]
    assert any("Instructions from: AGENTS.md" in t for t in texts)
    assert not any("d3/AGENTS.md" in t for t in texts)


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_scopes_and_hover_while_sessions_open_and_close(
    client: LanguageClient, ws: Workspace
) -> None:
    # Reports used to iterate the live sessions in a worker thread while the loop changed them
    # ("dictionary changed size during iteration"); they now read a frozen snapshot.
    ws.write({"AGENTS.md": "root rules\n", "pkg/AGENTS.md": "pkg rules\n", "pkg/x.py": ""})
    await start_with(client, ws)

    async def churn(n: int) -> None:
        for i in range(n):
            opened = await call(
                client, methods.SESSION_OPEN, {"cwd": str(ws.project), "sessionId": f"s{i}"}
            )
            await call(
                client, methods.SESSION_CLOSE, {"sessionId": as_dict(opened)["session"]["id"]}
            )

    async def report(n: int) -> None:
        for _ in range(n):
            scopes = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("pkg/x.py")}))
            assert len(scopes["files"]) == 2

    await asyncio.gather(churn(60), report(60), report(60))

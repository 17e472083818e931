"""The real server over an old store (migrated, then served) and over a newer one (refused)."""

from __future__ import annotations

import sqlite3

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods
from dsh_sidecar.sessions.store import Store
from tests.fixtures import schema_1_rows, schema_1_store

from .conftest import Workspace, as_dict, call, start


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_old_store_is_migrated_and_its_sessions_served(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.store.parent.mkdir(parents=True)
    schema_1_store(ws.store)
    before = schema_1_rows(ws.store)
    await start(client, ws)
    surface = as_dict(await call(client, methods.SESSION_SURFACE, {"sessionId": "session-b"}))
    assert surface["capturedThroughSeq"] == 6
    texts = [e["data"]["content"][0]["text"] for e in surface["events"]]
    assert texts[0] == "see @first"  # the prompt, its mention rewritten
    assert texts[1].startswith("## Referenced sessions\n")
    events = as_dict(await call(client, methods.SESSION_EVENTS, {"sessionId": "session-a"}))
    assert [e["seq"] for e in events["events"]] == list(range(23))
    assert schema_1_rows(ws.store) == before
    db = sqlite3.connect(ws.store)
    try:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)
    finally:
        db.close()


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
async def test_newer_store_fails_initialize_naming_the_file_and_both_versions(
    client: LanguageClient, ws: Workspace
) -> None:
    from lsprotocol import types
    from pytest_lsp import client_capabilities

    ws.store.parent.mkdir(parents=True)
    Store(str(ws.store), durable=False).close()
    db = sqlite3.connect(ws.store)
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                initialization_options=ws.options(),
            )
        )
    assert caught.value.message == (
        f"dsh-sidecar cannot open its session store {ws.store}: {ws.store} has session store"
        " schema version 4, newer than this dsh-sidecar supports (3): upgrade dsh-sidecar, or"
        " point store.path at another file"
    )
    assert caught.value.data == {"code": "invalid-config", "key": "store.path"}
    client.dsh_initialized = True  # type: ignore[attr-defined]  # let teardown shut it down

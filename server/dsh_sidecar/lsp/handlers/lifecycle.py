"""``initialize``, ``initialized``, ``shutdown`` and settings changes."""

from __future__ import annotations

import sqlite3
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from dsh_sidecar import errors
from dsh_sidecar.config import Settings, parse_settings_leniently
from dsh_sidecar.errors import DshError

from ..rpc.error_mapping import to_jsonrpc
from .base import Server


def register(server: Server) -> None:
    @server.feature(types.INITIALIZE)
    async def initialize(ls: Server, params: types.InitializeParams) -> None:
        if ls.started:
            # A second initialize would start a second service and orphan the first one's live
            # sessions and store; LSP allows one per connection. (A failed one may be retried.)
            raise JsonRpcInvalidRequest(
                "initialize was already answered on this connection",
                data={"code": errors.ALREADY_INITIALIZED},
            )
        # A refused key keeps its default; it is reported once the client is initialized.
        settings, ls.setting_problems = parse_settings_leniently(
            params.initialization_options, Settings()
        )
        try:
            await ls.start_service(settings)
        except DshError as exc:  # the store stayed locked by another process
            raise to_jsonrpc(exc) from exc
        except (OSError, sqlite3.Error) as exc:
            path = settings.store_path()
            raise JsonRpcInvalidParams(
                f"dsh-sidecar cannot open its session store {path}: {exc}",
                data={"code": errors.INVALID_CONFIG, "key": "store.path"},
            ) from exc

    @server.feature(types.INITIALIZED)
    def initialized(ls: Server, *_: Any) -> None:
        problems, ls.setting_problems = ls.setting_problems, ()
        ls.report_setting_problems(problems)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: Server, *_: Any) -> None:
        await ls.stop_service()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: Server, params: types.DidChangeConfigurationParams
    ) -> None:
        raw = params.settings
        workspace_caps = ls.client_capabilities.workspace if ls.client_capabilities else None
        if workspace_caps is not None and workspace_caps.configuration:
            pulled = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="dsh")])
            )
            # A client with no `dsh` section at all answers null: then the payload is all there is.
            raw = pulled[0] if pulled and pulled[0] is not None else raw
        # A refused key keeps its previous value; every other key applies.
        settings, problems = parse_settings_leniently(raw, ls.settings)
        ls.report_setting_problems(problems)
        if settings.store != ls.settings.store:
            ls.log_warning("dsh-sidecar: store.path changes take effect after a restart")
        ls.settings = settings
        ls.service.update_settings(settings)
        ls.refresh_diagnostics()

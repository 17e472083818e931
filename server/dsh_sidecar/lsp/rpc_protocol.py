"""The protocol subclass that knows our custom methods.

Custom messages are structured with ``params`` kept as raw JSON, so that a malformed ``params``
object reaches our handler (which answers InvalidParams with a stable ``data.code``) instead of
failing inside pygls' deserializer, where a request would get no answer at all.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import attrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method

from dsh_sidecar.protocol import methods


# ``jsonrpc`` has no default on purpose: the converter omits fields equal to their default.
@attrs.define
class DshRequestMessage:
    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class DshNotificationMessage:
    method: str
    jsonrpc: str
    params: Any = None


_CLIENT_METHODS = frozenset(methods.REQUESTS) | frozenset(methods.NOTIFICATIONS)


class DshProtocol(LanguageServerProtocol):
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in methods.REQUESTS:
            return DshRequestMessage
        if method in _CLIENT_METHODS or method in methods.SERVER_NOTIFICATIONS:
            return DshNotificationMessage
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in _CLIENT_METHODS:
            return None
        return super().get_result_type(method)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        # Clients check what we offer here rather than probing methods one by one.
        result.capabilities.experimental = {
            "dsh": {
                "protocolVersion": methods.PROTOCOL_VERSION,
                "methods": list(methods.ALL_METHODS),
            }
        }
        return result

"""What a handler may use of the server: a small protocol, not the concrete ``DshServer``.

Each handler module registers its methods on a ``Server`` and reaches the session service and
the queries through it; ``lsp/server.py`` builds the one concrete server and calls every
module's ``register``. ``request`` wraps a typed request handler: params structured with the
one converter, domain errors turned into InvalidParams with a stable ``data.code``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

from lsprotocol import types
from pygls.workspace import Workspace

from dsh_sidecar.config import SettingProblem, Settings
from dsh_sidecar.errors import DshError
from dsh_sidecar.protocol.requests import Request
from dsh_sidecar.queries.desk import Queries
from dsh_sidecar.sessions.service import SessionService

from ..rpc.error_mapping import to_jsonrpc

P = TypeVar("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


class Server(Protocol):
    settings: Settings
    # The keys refused by the last settings read; reported until a read finds none.
    setting_problems: tuple[SettingProblem, ...]
    # Each request's handler by method name, as ``request`` registered it.
    registered: dict[str, Callable[..., Awaitable[Any]]]

    @property
    def started(self) -> bool:
        """Whether ``initialize`` has started the session service."""
        ...

    @property
    def service(self) -> SessionService: ...

    @property
    def queries(self) -> Queries: ...

    async def start_service(self, settings: Settings) -> None: ...

    async def stop_service(self) -> None: ...

    def structure(self, raw: Any, kind: type[P]) -> P: ...

    def log_warning(self, message: str) -> None: ...

    def report_setting_problems(self, problems: tuple[SettingProblem, ...]) -> None: ...

    def refresh_diagnostics(self) -> None:
        """Publish the diagnostics of every open instruction document again."""
        ...

    def convert(self, raw: Any, kind: type[P]) -> P:
        """``raw`` (JSON) structured with the protocol's converter (no params checks)."""
        ...

    # pygls' own, as ``LanguageServer`` has them.
    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...

    async def workspace_configuration_async(
        self, params: types.ConfigurationParams
    ) -> Sequence[Any | None]: ...


def request(server: Server, method: Request[P, R], handler: Callable[[P], Awaitable[R]]) -> None:
    """Register ``handler`` for ``method``: params structured as its params type, and an answer
    of its result type (``mypy`` checks the handler's; a wrong one at run time is a fault)."""

    async def run(ls: Server, raw: Any) -> R:
        params = ls.structure(raw, method.params)
        try:
            result = await handler(params)
        except DshError as exc:
            raise to_jsonrpc(exc) from exc
        if not isinstance(result, method.result):
            raise TypeError(f"{method.name} answered {type(result).__name__}")
        return result

    run.__name__ = method.name.replace("/", "_")
    server.registered[method.name] = handler
    server.feature(method.name)(run)


class Background:
    """Tasks run in the background (a touch, a publication), each held until it finishes."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Future[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

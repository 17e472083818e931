"""The language server: one ``DshServer`` per connection, every method registered by the
handler modules (``handlers/``), which see it through the small ``handlers.base.Server``
protocol. ``main.py`` starts the transports that build these.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer

import dsh_sidecar
from dsh_sidecar import errors
from dsh_sidecar.config import SettingProblem, Settings
from dsh_sidecar.protocol import methods, requests
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.queries.desk import Queries
from dsh_sidecar.sessions.service import SessionService

from .handlers import context, documents, hover, lifecycle, links, loop, sessions
from .handlers.diagnostics import Diagnostics
from .rpc.converter import describe_structure_error, make_converter
from .rpc.error_mapping import invalid_params
from .rpc.protocol import DshProtocol

P = TypeVar("P")


class DshServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "dsh-sidecar",
            dsh_sidecar.__version__,
            protocol_cls=DshProtocol,
            converter_factory=make_converter,
        )
        self.settings = Settings()
        # The keys refused by the last settings read; reported until a read finds none.
        self.setting_problems: tuple[SettingProblem, ...] = ()
        self._service: SessionService | None = None
        self._queries: Queries | None = None
        self.diagnostics = Diagnostics(self)
        self.registered: dict[str, Callable[..., Awaitable[Any]]] = {}

    @property
    def started(self) -> bool:
        return self._service is not None

    @property
    def service(self) -> SessionService:
        if self._service is None:
            # A request pipelined right behind initialize, before the service has started.
            raise JsonRpcServerNotInitialized(
                "the server is still initializing (wait for the initialize answer)",
                data={"code": errors.NOT_INITIALIZED},
            )
        return self._service

    @property
    def queries(self) -> Queries:
        self.service  # noqa: B018  (refused the same way before initialize has finished)
        assert self._queries is not None
        return self._queries

    async def start_service(self, settings: Settings) -> None:
        self.settings = settings
        self._service = await SessionService.start(
            settings,
            on_inbox_changed=self.notify_context_changed,
            on_warning=self.log_warning,
            tmux_pid=self.tmux_pid,
        )
        self._queries = Queries(self._service)

    async def stop_service(self) -> None:
        if self._service is not None:
            await self._service.shutdown()
            self._service = self._queries = None

    def tmux_pid(self) -> int:
        if self.settings.tmux_context.use_client_process and self.process_id:
            return self.process_id
        return os.getpid()

    def notify_context_changed(self, session_id: str, pending_count: int) -> None:
        self.protocol.notify(
            methods.CONTEXT_DID_CHANGE, wt.ContextDidChangeParams(session_id, pending_count)
        )

    def report_setting_problems(self, problems: tuple[SettingProblem, ...]) -> None:
        """Tell the client which keys were refused (and, with an empty list, that none are any
        more); each refusal is also a log warning for clients that do not know the notification."""
        if not problems and not self.setting_problems:
            return
        self.setting_problems = problems
        for problem in problems:
            self.log_warning(
                f"dsh-sidecar: setting refused, using the previous value: {problem.message}"
            )
        self.protocol.notify(
            methods.SETTINGS_DID_CHECK, {"refused": [p.to_json() for p in problems]}
        )

    def log_warning(self, message: str) -> None:
        self.window_log_message(
            types.LogMessageParams(type=types.MessageType.Warning, message=message)
        )

    def refresh_diagnostics(self) -> None:
        self.diagnostics.refresh_all()

    def convert(self, raw: Any, kind: type[P]) -> P:
        converted: P = self.protocol._converter.structure(raw, kind)
        return converted

    def structure(self, raw: Any, kind: type[P]) -> P:
        try:
            return self.protocol._converter.structure({} if raw is None else raw, kind)
        except Exception as exc:
            raise invalid_params(f"invalid params: {describe_structure_error(exc)}") from exc


def build_server() -> DshServer:
    server = DshServer()
    for area in (lifecycle, sessions, loop, context, hover, links):
        area.register(server)
    documents.register(server, server.diagnostics)
    missing = [r.name for r in requests.ALL if r.name not in server.registered]
    assert not missing, f"requests without a handler: {missing}"
    return server

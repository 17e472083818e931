"""The language server: every LSP method wired here, each a thin call into the session service.

Handlers convert params with the one converter, call ``SessionService``, convert back. Domain
errors become InvalidParams with a stable ``data.code`` (lsp/error_mapping.py); anything unexpected is an
InternalError that pygls logs. No handler can take the server down.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer

import dsh_sidecar
from dsh_sidecar import errors
from dsh_sidecar.config import SettingProblem, Settings, parse_settings_leniently
from dsh_sidecar.errors import DshError
from dsh_sidecar.protocol import mapping as wire
from dsh_sidecar.protocol import methods
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.queries.desk import Queries
from dsh_sidecar.sessions.service import Prompt, SessionService

from . import transport_serve
from .converter import describe_structure_error, make_converter
from .documents import DocumentTracker
from .error_mapping import invalid_params, to_jsonrpc
from .framing import DEFAULT_MAX_BODY_BYTES
from .rpc_protocol import DshProtocol
from .transport import Limits

log = logging.getLogger(__name__)
P = TypeVar("P")
DEFAULT_TCP_PORT = 2087


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
        self.documents = DocumentTracker(self)

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

    def structure(self, raw: Any, kind: type[P]) -> P:
        try:
            return self.protocol._converter.structure({} if raw is None else raw, kind)
        except Exception as exc:
            raise invalid_params(f"invalid params: {describe_structure_error(exc)}") from exc


def parse_settings(raw: Any, base: Settings | None = None) -> Settings:
    """The ``dsh`` tree, accepting it bare or wrapped as ``{"dsh": {...}}``."""
    if isinstance(raw, dict) and set(raw) == {"dsh"}:
        raw = raw["dsh"]
    return Settings.from_json(raw, base)


def _register_request(
    server: DshServer, method: str, kind: type[P], handler: Callable[[P], Awaitable[Any]]
) -> None:
    async def run(ls: DshServer, raw: Any) -> Any:
        params = ls.structure(raw, kind)
        try:
            return await handler(params)
        except DshError as exc:
            raise to_jsonrpc(exc) from exc

    run.__name__ = method.replace("/", "_")
    server.feature(method)(run)


def build_server() -> DshServer:
    server = DshServer()
    _register_lifecycle(server)
    _register_sessions(server)
    _register_loop(server)
    _register_context(server)
    server.documents.register()
    return server


def _register_lifecycle(server: DshServer) -> None:
    @server.feature(types.INITIALIZE)
    async def initialize(ls: DshServer, params: types.InitializeParams) -> None:
        if ls._service is not None:
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
    def initialized(ls: DshServer, *_: Any) -> None:
        problems, ls.setting_problems = ls.setting_problems, ()
        ls.report_setting_problems(problems)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: DshServer, *_: Any) -> None:
        if ls._service is not None:
            await ls._service.shutdown()
            ls._service = ls._queries = None

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: DshServer, params: types.DidChangeConfigurationParams
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
        ls.documents.refresh_all()


def _register_sessions(server: DshServer) -> None:
    async def open_(p: wt.SessionOpenParams) -> wt.SessionOpenResult:
        header, resumed = await server.service.open_session(p.cwd, p.session_id, p.title)
        return wt.SessionOpenResult(wire.header(header), resumed)

    async def close(p: wt.SessionIdParams) -> None:
        await server.service.close_session(p.session_id)

    async def list_(p: wt.SessionListParams) -> wt.SessionListResult:
        headers = await server.service.list_sessions(p.query, p.limit)
        return wt.SessionListResult([wire.header(h) for h in headers])

    async def surface(p: wt.SessionIdParams) -> wt.SurfaceResult:
        snap = await server.service.surface(p.session_id)
        return wt.SurfaceResult(
            wire.header(snap.session), snap.captured_through_seq, [e.to_json() for e in snap.events]
        )

    async def events(p: wt.SessionEventsParams) -> wt.EventsResult:
        found = await server.service.events(p.session_id, p.after_seq, p.limit)
        return wt.EventsResult([e.to_json() for e in found])

    async def append(p: wt.SessionAppendParams) -> wt.AppendResult:
        return wt.AppendResult(await server.service.append(p.session_id, p.events))

    async def compact(p: wt.SessionCompactParams) -> wt.CompactResult:
        seq = await server.service.compact(p.session_id, p.start, p.end, p.summary, p.compaction_id)
        return wt.CompactResult(seq)

    _register_request(server, methods.SESSION_OPEN, wt.SessionOpenParams, open_)
    _register_request(server, methods.SESSION_CLOSE, wt.SessionIdParams, close)
    _register_request(server, methods.SESSION_LIST, wt.SessionListParams, list_)
    _register_request(server, methods.SESSION_SURFACE, wt.SessionIdParams, surface)
    _register_request(server, methods.SESSION_EVENTS, wt.SessionEventsParams, events)
    _register_request(server, methods.SESSION_APPEND, wt.SessionAppendParams, append)
    _register_request(server, methods.SESSION_COMPACT, wt.SessionCompactParams, compact)

    async def delete(p: wt.SessionIdParams) -> None:
        await server.service.delete_session(p.session_id)

    _register_request(server, methods.SESSION_DELETE, wt.SessionIdParams, delete)


def _register_loop(server: DshServer) -> None:
    async def prepare(p: wt.StepPrepareParams) -> wt.PrepareResult:
        prompt = None
        if p.prompt is not None:
            prompt = Prompt(p.prompt.text, p.prompt.client_time_zone, p.prompt.rpc_id)
        prepared = await server.service.prepare_step(p.session_id, p.turn, p.step, prompt)
        return wt.PrepareResult([m.to_json() for m in prepared.messages], list(prepared.seqs))

    async def end_step(p: wt.StepEndParams) -> None:
        await server.service.end_step(p.session_id, p.turn, p.step)

    async def end_turn(p: wt.TurnEndParams) -> None:
        await server.service.end_turn(p.session_id, p.turn, p.reason)

    _register_request(server, methods.STEP_PREPARE, wt.StepPrepareParams, prepare)
    _register_request(server, methods.STEP_END, wt.StepEndParams, end_step)
    _register_request(server, methods.TURN_END, wt.TurnEndParams, end_turn)

    @server.feature(methods.TOOL_RESULT)
    def tool_result(ls: DshServer, raw: Any) -> None:
        # A notification has no reply: a bad one is reported in the log, never fatal.
        try:
            p = ls.structure(raw, wt.ToolResultParams)
            ls.service.tool_result(
                p.session_id, p.token, p.parent_token, p.name, p.arguments, p.is_error, p.aborted
            )
        except (JsonRpcException, DshError) as exc:
            ls.log_warning(f"dsh/tool/result ignored: {getattr(exc, 'message', exc)}")


def _register_context(server: DshServer) -> None:
    async def pending(p: wt.SessionIdParams) -> wt.PendingResult:
        messages = await server.service.pending(p.session_id)
        return wt.PendingResult([m.to_json() for m in messages])

    async def discard(p: wt.ContextDiscardParams) -> wt.PendingResult:
        messages = await server.service.discard(p.session_id, p.message_id, p.scopes)
        return wt.PendingResult([m.to_json() for m in messages])

    async def preview(p: wt.ContextPreviewParams) -> wt.PreviewResult:
        load, not_read = await server.queries.preview(p.cwd)
        return wire.preview_result(load, not_read)

    async def scopes(p: wt.ScopesParams) -> wt.ScopesResult:
        return await server.queries.scopes_result(p.uri)

    async def explain_(p: wt.ExplainParams) -> wt.ExplainResult:
        found = await server.queries.explain(p.uri, p.cwd)
        # Structured from its JSON form, so the request and `explain --json` share one mapping.
        return server.protocol._converter.structure(found.to_json(), wt.ExplainResult)

    async def candidates(p: wt.CandidatesParams) -> wt.CandidatesResult:
        found = await server.queries.candidates(p.session_id, p.query)
        return wt.CandidatesResult([wire.candidate(c) for c in found])

    _register_request(server, methods.CONTEXT_PENDING, wt.SessionIdParams, pending)
    _register_request(server, methods.CONTEXT_DISCARD, wt.ContextDiscardParams, discard)
    _register_request(server, methods.CONTEXT_PREVIEW, wt.ContextPreviewParams, preview)
    _register_request(server, methods.SCOPES, wt.ScopesParams, scopes)
    _register_request(server, methods.EXPLAIN, wt.ExplainParams, explain_)
    _register_request(server, methods.SESSION_REFERENCE_CANDIDATES, wt.CandidatesParams, candidates)


class _QuietBadParams(logging.Filter):
    """pygls logs every error response with a traceback; bad client input is not a server fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcInvalidParams)


def configure_logging(log_file: str | None, verbose: bool) -> None:
    handler: logging.Handler = (
        logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]  # stdout is the protocol channel: never log there
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    if not verbose:
        logging.getLogger("pygls").setLevel(logging.WARNING)
        handler.addFilter(_QuietBadParams())


def serve(
    tcp: bool = False,
    port: int | None = None,
    log_file: str | None = None,
    verbose: bool = False,
    socket_path: str | None = None,
    max_message_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> int:
    """Run until the transport ends: stdio (the default), TCP on 127.0.0.1, or a Unix socket.

    Raises ``ServeError`` when a listener cannot start and ``StoppedBySignal`` on SIGINT or
    SIGTERM; the command turns both into one line on stderr.
    """
    configure_logging(log_file, verbose)
    limits = Limits(max_message_bytes)
    if tcp:
        return transport_serve.run(
            transport_serve.serve_tcp(
                build_server, DEFAULT_TCP_PORT if port is None else port, limits
            )
        )
    if socket_path is not None:
        return transport_serve.run(transport_serve.serve_unix(build_server, socket_path, limits))
    return transport_serve.run(transport_serve.serve_stdio(build_server, limits))

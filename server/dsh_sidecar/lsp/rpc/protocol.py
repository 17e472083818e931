"""The protocol subclass that knows our custom methods, and the fixes to pygls' bookkeeping.

Custom messages are structured with ``params`` kept as raw JSON, so that a malformed ``params``
object reaches our handler (which answers InvalidParams with a stable ``data.code``) instead of
failing inside pygls' deserializer.

What this class changes in pygls' JSON-RPC handling, and why:

- a handler's future is forgotten when it finishes: pygls files the future of every coroutine,
  thread and generator handler under an id and removes only those of requests, so each
  notification (``didChange``, ``dsh/tool/result``) used to leave one behind for good;
- the LSP lifecycle is enforced: before ``initialize`` a request gets ServerNotInitialized and a
  notification is dropped; after ``shutdown`` a request gets InvalidRequest;
- ``exit`` ends the connection it arrived on, through ``on_exit``, never the process (pygls
  calls ``sys.exit``, which on a socket transport would take every other client down too);
- no error response carries a traceback (pygls puts one in ``error.data`` of InternalError);
  failures of client input are logged in one line, server faults with their traceback;
- a result that cannot be serialized is answered with InternalError instead of nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any
from urllib.parse import unquote

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from dsh_sidecar import errors
from dsh_sidecar.identity_memo import IdentityMemo
from dsh_sidecar.protocol import methods
from dsh_sidecar.protocol import types as wire_types
from dsh_sidecar.protocol.encode import spliced

from . import incoming

log = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
CODE_NOT_INITIALIZED = errors.NOT_INITIALIZED
CODE_SHUTTING_DOWN = errors.SHUTTING_DOWN
CODE_INTERNAL = errors.INTERNAL_ERROR


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
    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        # Set by the connection: called once ``exit`` has been handled.
        self.on_exit: Callable[[], None] | None = None
        self.exit_code: int | None = None
        self._initialize_received = False

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in methods.REQUESTS:
            return DshRequestMessage
        if method in _CLIENT_METHODS or method in methods.SERVER_NOTIFICATIONS:
            return DshNotificationMessage
        # Not super(): pygls caches these per (instance, method) in a class-wide lru_cache,
        # which would keep the servers of closed connections alive.
        kind: type[Any] | None = types.METHOD_TO_TYPES.get(method, (None,))[0]
        return kind

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in _CLIENT_METHODS:
            return None
        kind: type[Any] | None = types.METHOD_TO_TYPES.get(method, (None, None))[1]
        return kind

    # --- incoming messages ------------------------------------------------------------------

    def is_notification_method(self, method: str) -> bool:
        """Whether ``method`` is only ever a notification (so a request for it is refused)."""
        kind = self.get_message_type(method)
        return kind is not None and not any(a.name == "id" for a in attrs.fields(kind))

    def is_request_method(self, method: str) -> bool:
        kind = self.get_message_type(method)
        return kind is not None and any(a.name == "id" for a in attrs.fields(kind))

    def structure_incoming(self, message: dict[str, Any], is_request: bool) -> Any:
        """The pygls message object for one checked top-level message; nothing below it is
        re-parsed. Raises whatever the converter raises for bad params."""
        kind = self.get_message_type(message["method"])
        if kind is None:
            kind = JsonRPCRequestMessage if is_request else JsonRPCNotification
            message = {"params": None, **message}
        structured = self._converter.structure(message, kind)
        if isinstance(structured, types.CancelNotification) and not _usable_id(
            structured.params.id
        ):
            # lsprotocol's converter passes any JSON value through as the id, and pygls looks
            # it up in a dict: a list or object there raised TypeError (unhashable) in pygls.
            raise ValueError("params.id must be an integer or a string")
        return structured

    def accept_response(self, message: dict[str, Any]) -> None:
        """A client's response to one of our requests (``workspace/configuration``)."""
        msg_id = message["id"]
        if "error" in message:
            error = message["error"]
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                self.fail_response(msg_id, "malformed error object")
                return
            response_error = types.ResponseError(
                code=error["code"], message=str(error.get("message", "")), data=error.get("data")
            )
            self._handle_response(msg_id, None, response_error)
            return
        result_type = self._result_types.pop(msg_id, None)
        result = message["result"]
        if result_type is not None:
            try:
                result = self._converter.structure(message, result_type).result
            except Exception as exc:
                self.fail_response(msg_id, f"malformed result: {exc}")
                return
        self._handle_response(msg_id, result)

    def fail_response(self, msg_id: incoming.MessageId | None, reason: str) -> None:
        """Fail the waiter of our request ``msg_id`` (if any) because its answer is unusable."""
        log.warning("response to %r refused: %s", msg_id, reason)
        if msg_id is None:
            return
        self._result_types.pop(msg_id, None)
        error = types.ResponseError(code=incoming.INVALID_REQUEST, message=reason)
        self._handle_response(msg_id, None, error)

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        is_request = hasattr(message, "id") and method is not None
        if method == types.EXIT:
            super().handle_message(message)
            return
        if not self._initialize_received and method != types.INITIALIZE:
            if is_request:
                self._send_error(
                    message.id,
                    SERVER_NOT_INITIALIZED,
                    f"{method}: the server is not initialized (send initialize first)",
                    CODE_NOT_INITIALIZED,
                )
            elif method is not None:
                log.info("dropped %s: it came before initialize", method)
            return
        if self._shutdown:
            if is_request:
                self._send_error(
                    message.id,
                    incoming.INVALID_REQUEST,
                    f"{method}: the server is shutting down (only exit is accepted)",
                    CODE_SHUTTING_DOWN,
                )
            elif method is not None:
                log.info("dropped %s: it came after shutdown", method)
            return
        if method == types.INITIALIZE:
            self._initialize_received = True
        # pygls' handle_message tells a request from a notification with isinstance checks
        # against runtime-checkable Protocols, which cost more than a whole no-op round trip's
        # Python; here the transport has classified the message already (a request has an id),
        # so it goes straight to pygls' handler, in a context of its own as pygls runs each.
        if method is None:  # not a request or notification: whatever pygls makes of it
            super().handle_message(message)
            return
        context = contextvars.copy_context()
        if is_request:
            context.run(self._handle_request, message.id, method, message.params)
        else:
            context.run(self._handle_notification, method, message.params)

    # --- handler futures --------------------------------------------------------------------

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        def forget_then(future: Future[Any] | asyncio.Future[Any]) -> None:
            # Only this handler's own entry: a client may reuse an id once its request is done.
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, forget_then, args, kwargs)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        if future.cancelled():
            self._send_error(
                msg_id, REQUEST_CANCELLED, f'Request with id "{msg_id}" is canceled', None
            )
            return
        exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
        elif isinstance(exc, JsonRpcException):
            # Bad input or a refused call: the client hears why; it is not a server fault.
            log.debug("request %r answered with error %s: %s", msg_id, exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
        else:
            log.error("request %r failed", msg_id, exc_info=exc)
            self._send_error(msg_id, INTERNAL_ERROR, _describe(exc), CODE_INTERNAL)

    def _check_handler_result(self, future: Any) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            return
        if isinstance(exc, JsonRpcException):
            log.warning("notification ignored: %s", exc.message)
            return
        log.error("notification handler failed", exc_info=exc)
        self._server._report_server_error(exc, JsonRpcException)

    # --- lifecycle --------------------------------------------------------------------------

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

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        # pygls' own loop walks the live dict, which a finished future now leaves as it is
        # cancelled: walk a copy.
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        # LSP: exit status 0 after shutdown, 1 without it (meaningful on stdio only).
        self.exit_code = 0 if self._shutdown else 1
        if self.on_exit is not None:
            self.on_exit()

    # --- documents: the client's mistakes are logged, never raised ----------------------------

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        # pygls raises KeyError for a document that was never opened, and may raise for a
        # range outside the text. The sidecar reads files from disk, never buffer text, so
        # such a change is only reported.
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            log.warning("didChange for %s, which is not open: ignored", uri)
            return
        try:
            for change in params.content_changes:
                self.workspace.update_text_document(params.text_document, change)
        except Exception as exc:
            log.warning("didChange for %s does not apply to the open text: %s", uri, exc)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(
        self, params: types.DidChangeNotebookDocumentParams
    ) -> Generator[Any, Any, None]:
        uri = params.notebook_document.uri
        if unquote(uri) not in self.workspace.notebook_documents:
            log.warning("notebookDocument/didChange for %s, which is not open: ignored", uri)
            return
        try:
            self.workspace.update_notebook_document(params)
        except Exception as exc:
            log.warning("notebookDocument/didChange for %s does not apply: %s", uri, exc)
        if (user_handler := self.fm.features.get(types.NOTEBOOK_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    # --- lifecycle, continued -----------------------------------------------------------------

    async def release(self) -> None:
        """The connection is gone: cancel in-flight work and run the shutdown handler (closing
        the session service and its store) unless the client already asked for shutdown."""
        for future in list(self._request_futures.values()):
            if not future.done():
                future.cancel()
        if self._shutdown:
            return
        self._shutdown = True
        handler = self.fm.features.get(types.SHUTDOWN)
        if handler is None:
            return
        try:
            outcome = handler(None)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            log.exception("releasing the connection's sessions failed")

    # --- outgoing messages ------------------------------------------------------------------

    def _send_error(self, msg_id: Any, code: int, message: str, data_code: str | None) -> None:
        data = None if data_code is None else {"code": data_code}
        self._send_response(
            msg_id, error=types.ResponseError(code=code, message=message, data=data)
        )

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            error = types.ResponseError(code=error.code, message=error.message, data=None)
        if error is not None and error.code == SERVER_NOT_INITIALIZED and not _has_code(error):
            # Whoever raised it (pygls, or a handler reached while initialize is still starting
            # the session service), a client tells this refusal apart by data.code.
            error = types.ResponseError(
                code=error.code, message=error.message, data={"code": CODE_NOT_INITIALIZED}
            )
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        if self.writer is None:
            log.error("cannot send %s: no connection", type(data).__name__)
            return
        try:
            if type(data) is JsonRPCResponseMessage:
                body = self._response_body(data)
            else:
                body = json.dumps(data, default=self._serialize_message)
        except Exception as exc:  # TypeError, ValueError, RecursionError, or the default hook's
            msg_id = getattr(data, "id", None)
            log.error("cannot serialize %s %r: %s", type(data).__name__, msg_id, exc)
            if hasattr(data, "result") or hasattr(data, "error"):
                body = json.dumps(
                    incoming.error_response(
                        msg_id, INTERNAL_ERROR, "the answer could not be serialized", CODE_INTERNAL
                    )
                )
            else:
                return
        # ensure_ascii (json's default) keeps the body ASCII, so a lone surrogate in outgoing
        # data becomes an escape sequence rather than bytes that are not UTF-8.
        self.writer.write(body.encode("ascii"))

    def _response_body(self, response: JsonRPCResponseMessage) -> str:
        """``json.dumps`` of the response as pygls' converter unstructures it (``id``,
        ``jsonrpc``, then ``result``), written out directly: the envelope is always those three
        keys, and a result that carries its parts' encoding (``encode.spliced``) is not encoded
        again."""
        result = response.result
        if _encoded_once(type(result)):
            text = _SENT.get(result)
            if text is None:
                text = spliced(result) or self._json(result)
                _SENT.put(result, text)
        else:
            text = self._json(result)
        head = json.dumps(self._converter.unstructure(response.id))
        # One join: a chain of ``+`` copies a result of megabytes (a deep chain's) twice.
        return "".join(
            (
                '{"id": ',
                head,
                ', "jsonrpc": ',
                json.dumps(response.jsonrpc),
                ', "result": ',
                text,
                "}",
            )
        )

    def _json(self, value: Any) -> str:
        return json.dumps(self._converter.unstructure(value), default=self._serialize_message)


# The JSON text of each wire result sent, while that result lives. A kept answer (a whole
# ``dsh/scopes`` result, kept while what it saw holds) is sent again and again as the same
# object; a result is never changed once it has been answered (a kept one is shared by every
# request that reuses it).
_SENT: IdentityMemo[str] = IdentityMemo()


def _has_code(error: types.ResponseError) -> bool:
    return isinstance(error.data, dict) and isinstance(error.data.get("code"), str)


def _encoded_once(cls: type) -> bool:
    """Our wire results, and hovers (the hover handler answers a kept hover text with the same
    ``Hover`` each time, and nothing changes one after it is made)."""
    return cls.__module__ == wire_types.__name__ or cls is types.Hover


def _usable_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _describe(exc: BaseException) -> str:
    return f"Internal error: {type(exc).__name__}: {exc}".splitlines()[0]

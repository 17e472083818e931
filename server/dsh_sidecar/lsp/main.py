"""``dsh-sidecar serve``: logging set up, then a transport (stdio, TCP, a Unix socket) that
builds one ``DshServer`` per connection."""

from __future__ import annotations

import logging
import sys

from pygls.exceptions import JsonRpcInvalidParams

from dsh_sidecar.config.secrets import hidden

from .rpc import serve as transports
from .rpc.framing import DEFAULT_MAX_BODY_BYTES
from .rpc.transport import Limits
from .server import build_server

DEFAULT_TCP_PORT = 2087


class _QuietBadParams(logging.Filter):
    """pygls logs every error response with a traceback; bad client input is not a server fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcInvalidParams)


class _HiddenSecrets(logging.Filter):
    """Every record's arguments with secret-named values hidden (``config.secrets``) before they
    are formatted: with ``-v``, pygls logs whole messages (``initialize``'s params, the
    ``workspace/configuration`` answer, each notification sent), where a client may have put a
    token among its settings."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(hidden(arg) for arg in record.args)
        elif record.args:
            record.args = hidden(record.args)
        if not isinstance(record.msg, str):
            record.msg = hidden(record.msg)
        return True


def configure_logging(log_file: str | None, verbose: bool) -> None:
    handler: logging.Handler = (
        logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_HiddenSecrets())
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
        return transports.run(
            transports.serve_tcp(build_server, DEFAULT_TCP_PORT if port is None else port, limits)
        )
    if socket_path is not None:
        return transports.run(transports.serve_unix(build_server, socket_path, limits))
    return transports.run(transports.serve_stdio(build_server, limits))

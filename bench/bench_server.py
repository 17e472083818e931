"""The product server plus bench-only methods, for the transport baselines of the benchmarks.

Run as ``python bench/bench_server.py [--noop-only | --pygls-bookkeeping]``. It is the real
``build_server()`` (every product handler unchanged) on the product's own stdio transport, with
one hidden request, ``bench/noop``, that answers ``null`` at once: the cost of a round trip with
no work at all. ``--noop-only`` is a bare pygls server (pygls' own stdio loop) whose
``textDocument/didOpen`` does nothing and which also answers ``bench/noop``: what draining a
burst of notifications costs with no sidecar behind it. ``--pygls-bookkeeping`` is the product
server with pygls' own handler bookkeeping put back (every notification's future kept for good),
the baseline of ``bench/notification_rss.py``.

These methods exist only here: the product server has no hidden methods.
"""

from __future__ import annotations

import sys
from typing import Any

NOOP = "bench/noop"


def product_server() -> Any:
    from dsh_sidecar.lsp.server import build_server, configure_logging

    configure_logging(None, False)
    server = build_server()

    @server.feature(NOOP)
    def noop(ls: Any, params: Any) -> None:
        return None

    return server


def noop_server() -> Any:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("bench-noop", "0")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: types.DidOpenTextDocumentParams) -> None:
        return None

    @server.feature(NOOP)
    def noop(ls: Any, params: Any) -> None:
        return None

    return server


def restore_pygls_bookkeeping() -> None:
    from pygls.protocol.json_rpc import JsonRPCProtocol

    from dsh_sidecar.lsp.rpc_protocol import DshProtocol

    DshProtocol._execute_handler = JsonRPCProtocol._execute_handler  # type: ignore[method-assign]
    DshProtocol._send_handler_result = JsonRPCProtocol._send_handler_result  # type: ignore[method-assign]


def serve_product(server: Any) -> None:
    from dsh_sidecar.lsp.framing import DEFAULT_MAX_BODY_BYTES
    from dsh_sidecar.lsp.transport import Limits
    from dsh_sidecar.lsp.transport_serve import run, serve_stdio

    run(serve_stdio(lambda: server, Limits(DEFAULT_MAX_BODY_BYTES)))


def main() -> None:
    if "--noop-only" in sys.argv:
        noop_server().start_io()
        return
    if "--pygls-bookkeeping" in sys.argv:
        restore_pygls_bookkeeping()
    serve_product(product_server())


if __name__ == "__main__":
    main()

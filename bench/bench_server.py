"""The product server plus bench-only methods, for the transport baselines of the benchmarks.

Run as ``python bench/bench_server.py [--noop-only | --pygls-bookkeeping]``. It is the real
``build_server()`` (every product handler unchanged) on the product's own stdio transport, with
hidden methods that do no work, so that a benchmark can put every product figure next to the
floor it stands on, in the same run:

* ``bench/noop``    a request answered ``null`` at once: a round trip with no work at all;
* ``bench/notify``  a notification that does nothing: written together with ``bench/noop``, the
  floor of a two-message exchange (a touch and ``dsh/context/pending``);
* ``bench/hop``     a request whose coroutine awaits one no-op call in the service's filesystem
  worker pool: the floor of any answer that must look at the filesystem (the event loop never
  does; docs/architecture.md).

``--noop-only`` is a bare pygls server (pygls' own stdio loop) whose ``textDocument/didOpen``
and ``textDocument/hover`` do nothing and which also answers ``bench/noop``: what draining a
burst of notifications costs with no sidecar behind it, and the hover of
``bench/editor_roundtrip.py``'s baseline. ``--pygls-bookkeeping`` is the product server with pygls' own handler
bookkeeping put back (every notification's future kept for good), the baseline of
``bench/notification_rss.py``.

These methods exist only here: the product server has no hidden methods.
"""

from __future__ import annotations

import sys
from typing import Any

NOOP = "bench/noop"
NOTIFY = "bench/notify"
HOP = "bench/hop"


def product_server() -> Any:
    from dsh_sidecar.lsp.main import configure_logging
    from dsh_sidecar.lsp.server import build_server

    configure_logging(None, False)
    server = build_server()

    @server.feature(NOOP)
    def noop(ls: Any, params: Any) -> None:
        return None

    @server.feature(NOTIFY)
    def notify(ls: Any, params: Any) -> None:
        return None

    @server.feature(HOP)
    async def hop(ls: Any, params: Any) -> None:
        await ls.service.workers.fs(lambda: None)

    return server


def noop_server() -> Any:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("bench-noop", "0")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: types.DidOpenTextDocumentParams) -> None:
        return None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: Any, params: types.HoverParams) -> None:
        return None

    @server.feature(NOOP)
    def noop(ls: Any, params: Any) -> None:
        return None

    return server


def restore_pygls_bookkeeping() -> None:
    from pygls.protocol.json_rpc import JsonRPCProtocol

    from dsh_sidecar.lsp.rpc.protocol import DshProtocol

    DshProtocol._execute_handler = JsonRPCProtocol._execute_handler  # type: ignore[method-assign]
    DshProtocol._send_handler_result = JsonRPCProtocol._send_handler_result  # type: ignore[method-assign]


def serve_product(server: Any) -> None:
    from dsh_sidecar.lsp.rpc.framing import DEFAULT_MAX_BODY_BYTES
    from dsh_sidecar.lsp.rpc.serve import run, serve_stdio
    from dsh_sidecar.lsp.rpc.transport import Limits

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

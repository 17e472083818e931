"""The product server plus bench-only methods, for the transport baselines of the benchmarks.

Run as ``python bench/bench_server.py [--noop-only]``. It is the real ``build_server()`` (every
product handler unchanged) with one hidden request, ``bench/noop``, that answers ``null`` at once:
the cost of a round trip through pygls on this transport with no work at all. ``--noop-only`` is
a bare pygls server whose ``textDocument/didOpen`` does nothing and which also answers
``bench/noop``: what draining a burst of notifications costs with no sidecar behind it.

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


def main() -> None:
    server = noop_server() if "--noop-only" in sys.argv else product_server()
    server.start_io()


if __name__ == "__main__":
    main()

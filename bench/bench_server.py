"""The product server plus bench-only methods, for the transport baselines of the benchmarks.

Run as ``python bench/bench_server.py [--noop-only]``. It is the real ``build_server()`` (every
product handler unchanged) with hidden methods that do no work, so that a benchmark can put
every product figure next to the floor it stands on, in the same run:

* ``bench/noop``    a request answered ``null`` at once: a round trip through pygls on this
  transport (pygls reads each message with three hops to a reader thread);
* ``bench/notify``  a notification that does nothing: written together with ``bench/noop``, the
  floor of a two-message exchange (a touch and ``dsh/context/pending``);
* ``bench/hop``     a request whose coroutine awaits one no-op call in the service's filesystem
  worker pool: the floor of any answer that must look at the filesystem (the event loop never
  does; docs/architecture.md).

``--noop-only`` is a bare pygls server whose ``textDocument/didOpen`` does nothing and which also
answers ``bench/noop``: what draining a burst of notifications costs with no sidecar behind it.

These methods exist only here: the product server has no hidden methods.
"""

from __future__ import annotations

import sys
from typing import Any

NOOP = "bench/noop"
NOTIFY = "bench/notify"
HOP = "bench/hop"


def product_server() -> Any:
    from dsh_sidecar.lsp.server import build_server, configure_logging

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

    @server.feature(NOOP)
    def noop(ls: Any, params: Any) -> None:
        return None

    return server


def main() -> None:
    server = noop_server() if "--noop-only" in sys.argv else product_server()
    server.start_io()


if __name__ == "__main__":
    main()

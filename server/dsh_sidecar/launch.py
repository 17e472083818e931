"""The ``dsh-sidecar`` console script: ``hook`` goes straight to ``hooks.resident_client``.

An agent runs a hook on every tool call, so its start-up cost counts: this keeps it from loading
the command line's other commands (the server mapping, explain's output) before it can answer.
Everything else is ``dsh_sidecar.cli.main``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        # The thin client: the resident engine answers, or hooks.main in this process.
        from dsh_sidecar.hooks.resident_client import main as hook_main

        return hook_main(args[1:])
    from dsh_sidecar.cli import main as cli_main

    return cli_main(args)

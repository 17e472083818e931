"""The seam to the Codex shell-command parser (``shell_commands``, written separately).

Until that module is present the seam finds no touches in a shell command, so a Codex session
still gets its baseline and prompt-time context, and nothing is guessed from the raw string.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import attrs


@attrs.frozen
class NoTouches:
    reads: Sequence[str] = ()
    writes: Sequence[str] = ()


def shell_touches(command: str, cwd: str) -> Any:
    try:
        module = importlib.import_module("dsh_sidecar.hooks.shell_commands")
    except ImportError:
        return NoTouches()
    return module.shell_touches(command, cwd)

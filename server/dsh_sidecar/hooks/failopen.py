"""A hook never breaks or stalls its agent: any failure is one line in ``$DSH_HOME/log/hooks.log``
and the hook exits 0 having printed nothing."""

from __future__ import annotations

import os
import time


class HandedBack(Exception):
    """The event went back to its hook process, which answers it itself (a resident engine's
    client gave up waiting): nothing was lost, so it is not a failure for ``hooks.log``."""


def log_line(dsh_home: str | None, agent: str, what: str) -> None:
    """Append one line; a log that cannot be written is given up on silently (fail-open)."""
    if not dsh_home:
        return
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {agent} {one_line(what)}\n"
    try:
        directory = os.path.join(dsh_home, "log")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(
            os.path.join(directory, "hooks.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
        )
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def one_line(text: str, limit: int = 500) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

"""The TCP listener under a local flood: does the owner get in, what does it cost the server.

For each attack (2,000 idle connections, 1,100 idle connections, 600 partial bodies of 1 MiB,
all from the uid ``nobody``) it starts ``serve --tcp`` with ``ulimit -n`` 1024, starts the
flooder, then times the owner's client: connect, initialize with the token, open a session,
touch ``pkg/x.py`` and get ``pkg/AGENTS.md`` at the next step. It prints, per attack, that time
(or the failure), the server's VmRSS before and during, its open descriptors, and how many lines
the server logged ("none" is the owner's time without a flood, on the same machine).

    sudo .venv/bin/python bench/tcp_flood.py            # this checkout
    PYTHONPATH=/path/to/old/server sudo -E .venv/bin/python bench/tcp_flood.py   # another

Needs root (to run the flooder as ``nobody`` through setpriv). Not a test: the figures go to
docs/benchmarks.md with the command that made them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, for tests.support

from tests.support.flood import Flood, Limited, owner_touch_is_delivered

ATTACKS = [
    ("none", 0, 0),
    ("2000 idle", 2000, 0),
    ("1100 idle", 1100, 0),
    ("600 x 1 MiB partial", 600, 1024 * 1024 - 1),
]
# After the flooder has made its connections, the server gets this long to take in what it will
# (an attacker is in no hurry) before the owner's client tries.
SETTLE_SECONDS = 5.0
OWNER_TIMEOUT = 30.0


def project(base: Path) -> Path:
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule: keep the flood out\n")
    (root / "pkg" / "x.py").write_text("x = 1\n")
    return root


def run(name: str, count: int, body: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = project(base)
        server = Limited(base)
        try:
            before = server.rss_mib()
            flood = Flood(server.info["port"], count, body, as_nobody=True)
            time.sleep(SETTLE_SECONDS)
            during = server.rss_mib()
            fds = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
            started = time.monotonic()
            try:
                owner_touch_is_delivered(server, base, root)
                owner = f"{time.monotonic() - started:.2f} s"
            except Exception as exc:  # the figure is the failure itself
                owner = f"failed after {time.monotonic() - started:.1f} s ({type(exc).__name__})"
            peak = max(during, server.rss_mib())
            totals = flood.stop()
            log = server.stderr()
        finally:
            server.kill()
    return {
        "attack": name,
        "owner touch delivered": owner,
        "rss MiB before/during": f"{before:.0f}/{peak:.0f}",
        "server fds": fds,
        "flood connects": totals["done"]["connects"],
        "server log lines": log.count("\n"),
        "EMFILE lines": log.count("Too many open files"),
    }


def main() -> None:
    for name, count, body in ATTACKS:
        print(json.dumps(run(name, count, body)), flush=True)


if __name__ == "__main__":
    main()

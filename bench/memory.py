"""Resident memory with 100 live sessions x 1,000 loaded scopes (ISSUE 8 target 5).

A project of 1,000 directories, each with its own AGENTS.md. The real server
(``python -m dsh_sidecar serve``) opens 100 sessions at the root; each enters its baseline; then
the editor opens one file in every directory (a touch for all 100 sessions), and each session
runs a step that enters the 1,000 ``set`` changes and a second one that reconciles them. Every
session then has 1,000 active scopes in its log and 1,000 entries in its version cache. We read
the server's VmRSS (and its peak, VmHWM) from /proc, and the same of a server that only
initialized, for reference.

The budget is raised (``maxBytes`` 4 MiB) so one update can carry all 1,000 files.
Target: VmRSS <= 150 MB.

    .venv/bin/python bench/memory.py [--sessions 100] [--scopes 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import report
from _rpc import Client, file_uri, product_server


def rss(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in bytes."""
    values = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) * 1024
    return values["VmRSS"], values["VmHWM"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--scopes", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root = os.path.join(base, "proj")
        os.makedirs(os.path.join(root, ".git"))
        sources = []
        for i in range(args.scopes):
            directory = os.path.join(root, f"area{i // 100:02d}", f"dir{i % 100:02d}")
            os.makedirs(directory)
            with open(os.path.join(directory, "AGENTS.md"), "w", encoding="utf-8") as fh:
                fh.write(f"Rules for directory {i}: keep it small.\n")
            source = os.path.join(directory, "main.py")
            with open(source, "w", encoding="utf-8") as fh:
                fh.write("x = 1\n")
            sources.append(source)
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        options = {
            "store": {"path": os.path.join(base, "s.sqlite3")},
            "instructions": {"maxBytes": 4 * 1024 * 1024},
        }

        idle = Client(product_server(), env=env)
        idle.initialize(options, root)
        idle_rss = rss(idle.proc.pid)
        idle.close()

        client = Client(product_server(), env=env)
        try:
            client.initialize(options, root)
            sids = []
            for _ in range(args.sessions):
                sid = client.request("dsh/session/open", {"cwd": root})["session"]["id"]
                client.request(
                    "dsh/step/prepare",
                    {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
                )
                client.request("dsh/step/end", {"sessionId": sid, "turn": 1, "step": 1})
                sids.append(sid)
            client.start_reader()
            for source in sources:
                client.notify(
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": file_uri(source),
                            "languageId": "python",
                            "version": 1,
                            "text": "x = 1\n",
                        }
                    },
                )
            loaded = 0
            for sid in sids:
                for step in (2, 3):
                    prepared = client.request_threaded(
                        "dsh/step/prepare", {"sessionId": sid, "turn": 1, "step": step}
                    )
                    client.request_threaded(
                        "dsh/step/end", {"sessionId": sid, "turn": 1, "step": step}
                    )
                    if step == 2:
                        sets = [
                            c
                            for m in prepared["messages"]
                            for c in m["source"].get("changes", [])
                            if c["action"] == "set"
                        ]
                        assert len(sets) == args.scopes, (len(sets), args.scopes)
                        loaded += len(sets)
            live_rss = rss(client.proc.pid)
        finally:
            client.close()
    mb = 1024 * 1024
    report(
        "memory",
        [
            (
                "live sessions x loaded scopes",
                f"{args.sessions} x {args.scopes} ({loaded:,} in all)",
            ),
            (
                "server RSS after loading",
                f"{live_rss[0] / mb:.1f} MB (peak {live_rss[1] / mb:.1f} MB)",
            ),
            ("idle server RSS", f"{idle_rss[0] / mb:.1f} MB"),
            ("target", "RSS <= 150 MB"),
        ],
        {
            "sessions": args.sessions,
            "scopes": args.scopes,
            "rss_bytes": live_rss[0],
            "hwm_bytes": live_rss[1],
            "idle_rss_bytes": idle_rss[0],
        },
    )


if __name__ == "__main__":
    main()

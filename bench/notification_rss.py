"""Resident memory per notification: the product server against pygls' own bookkeeping.

pygls files the future of every coroutine, generator and thread handler under an id and removes
only those of requests, so each notification used to leave one or two behind for good
(docs/benchmarks.md, section 6). Two servers run side by side in this invocation, over stdio,
each with a live session on a small project:

- product: ``bench/bench_server.py`` (``build_server()`` on the product transport);
- baseline: the same with pygls' handler bookkeeping put back (``--pygls-bookkeeping``).

Each gets a warm-up, then ``--batches`` batches of ``--per-batch`` notifications, the two
servers alternating batch by batch so machine drift hits both alike. A batch cycles
``didOpen``, ``didChange``, ``dsh/tool/result`` and ``didClose`` of one file (the document is
closed again, so pygls' open-document table does not grow by design). After each batch a
request makes sure everything before it was dispatched, a pause lets the touches finish, and
VmRSS is read from /proc. Growth is (last RSS - RSS after warm-up) / notifications sent.

    .venv/bin/python bench/notification_rss.py [--batches 4] [--per-batch 20000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import report
from _rpc import Client, bench_server, file_uri

SETTLE_SECONDS = 1.0


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def notifications(sid: str, path: str, count: int, batch: int) -> list[dict[str, Any]]:
    uri = file_uri(path)
    out: list[dict[str, Any]] = []
    for i in range(count // 4):
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "python",
                        "version": 1,
                        "text": "x = 1\n",
                    }
                },
            }
        )
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": 2},
                    "contentChanges": [{"text": f"x = {i}\n"}],
                },
            }
        )
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "dsh/tool/result",
                "params": {
                    "sessionId": sid,
                    "token": f"b{batch}-{i}",
                    "name": "read",
                    "arguments": {"file_path": path},
                    "isError": False,
                },
            }
        )
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didClose",
                "params": {"textDocument": {"uri": uri}},
            }
        )
    return out


class Measured:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], base: str) -> None:
        self.name = name
        self.client = Client(argv, env=env)
        self.client.initialize({"store": {"path": os.path.join(base, f"{name}.sqlite3")}})
        project = os.path.join(base, "proj")
        self.sid = self.client.request("dsh/session/open", {"cwd": project})["session"]["id"]
        self.source = os.path.join(project, "main.py")
        self.client.start_reader()
        self.samples: list[int] = []
        self.sent = 0

    def batch(self, count: int, number: int, record: bool = True) -> None:
        messages = notifications(self.sid, self.source, count, number)
        for start in range(0, len(messages), 1000):
            self.client.send_many(messages[start : start + 1000])
        self.client.request_threaded("dsh/session/list", {})
        time.sleep(SETTLE_SECONDS)
        self.client.request_threaded("dsh/session/list", {})
        if record:
            self.sent += len(messages)
            self.samples.append(rss(self.client.proc.pid))
        else:
            self.samples = [rss(self.client.proc.pid)]

    def per_notification(self) -> float:
        return (self.samples[-1] - self.samples[0]) / self.sent

    def close(self) -> None:
        self.client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--per-batch", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        project = os.path.join(base, "proj")
        os.makedirs(os.path.join(project, ".git"))
        with open(os.path.join(project, "AGENTS.md"), "w", encoding="utf-8") as fh:
            fh.write("rules\n")
        with open(os.path.join(project, "main.py"), "w", encoding="utf-8") as fh:
            fh.write("x = 1\n")
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        servers = [
            Measured("product", bench_server(), env, base),
            Measured("baseline", bench_server("--pygls-bookkeeping"), env, base),
        ]
        try:
            for server in servers:
                server.batch(2_000, 0, record=False)  # warm-up: caches, arenas, first touches
            for number in range(1, args.batches + 1):
                for server in servers:
                    server.batch(args.per_batch, number)
            growth = {s.name: s.per_notification() for s in servers}
            curves = {
                s.name: [round((r - s.samples[0]) / 1024) for r in s.samples] for s in servers
            }
        finally:
            for server in servers:
                server.close()
    product, baseline = growth["product"], growth["baseline"]
    ratio = product / baseline if baseline else float("nan")
    total = args.batches * args.per_batch
    report(
        "notification_rss",
        [
            ("notifications per server", f"{total:,} ({args.batches} x {args.per_batch:,})"),
            (
                "product growth",
                f"{product:,.1f} B per notification; KiB after each batch {curves['product']}",
            ),
            (
                "pygls bookkeeping growth",
                f"{baseline:,.1f} B per notification; KiB after each batch {curves['baseline']}",
            ),
            ("product / baseline", f"{ratio:.3f}"),
        ],
        {
            "notifications": total,
            "product_bytes_per_notification": product,
            "baseline_bytes_per_notification": baseline,
            "ratio": ratio,
            "curves_kib": curves,
        },
    )


if __name__ == "__main__":
    main()

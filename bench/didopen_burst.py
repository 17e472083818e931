"""A burst of 10,000 didOpen over 2,000 directories, against a no-op server (ISSUE 8 target 3).

A project of 2,000 directories (40 packages of 50 modules), five source files in each, and an
AGENTS.md in every 20th directory (100 of them, plus one at the root). One live session at the
root has entered its baseline. We write all 10,000 ``textDocument/didOpen`` notifications as fast
as the pipe takes them and time, from the first byte written:

* ``sidecar``  the product server (``python -m dsh_sidecar serve``) until the last
  ``dsh/context/didChange`` of the burst: every touch projected, the inbox final;
* ``noop``     a bare pygls server with a no-op didOpen (``bench/bench_server.py --noop-only``)
  until it answers a request sent right after the burst: the cost of only reading and
  dispatching the same 10,000 messages on the same transport.

The pending message after the burst must name every nested AGENTS.md (a check that the touches
really were projected). Target: sidecar <= 2x noop.

    .venv/bin/python bench/didopen_burst.py [--files 10000] [--dirs 2000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, report
from _rpc import Client, bench_server, file_uri, product_server

QUIET_SECONDS = 3.0


def build_project(base: str, dirs: int, files: int) -> tuple[str, list[str], int]:
    root = os.path.join(base, "proj")
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, ".gitignore"), "w", encoding="utf-8") as fh:
        fh.write("node_modules/\n")
    with open(os.path.join(root, "AGENTS.md"), "w", encoding="utf-8") as fh:
        fh.write("root rule\n")
    per_dir = files // dirs
    opened: list[str] = []
    nested = 0
    for i in range(dirs):
        directory = os.path.join(root, f"pkg{i // 50:02d}", f"mod{i % 50:02d}")
        os.makedirs(directory)
        if i % 20 == 0:
            nested += 1
            with open(os.path.join(directory, "AGENTS.md"), "w", encoding="utf-8") as fh:
                fh.write(f"Rules for module {i}: small functions, tests beside the code.\n")
        for j in range(per_dir):
            path = os.path.join(directory, f"file{j}.py")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(f"VALUE = {j}\n")
            opened.append(path)
    return root, opened, nested


def did_open(path: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {
            "textDocument": {
                "uri": file_uri(path),
                "languageId": "python",
                "version": 1,
                "text": open(path, encoding="utf-8").read(),
            }
        },
    }


def send_burst(client: Client, burst: list[dict[str, object]]) -> float:
    start = time.perf_counter()
    for i in range(0, len(burst), 200):
        client.send_many(burst[i : i + 200])
    return start


def run_noop(burst: list[dict[str, object]], env: dict[str, str]) -> float:
    client = Client(bench_server("--noop-only"), env=env)
    try:
        client.initialize()
        client.start_reader()
        client.request_threaded("bench/noop")
        start = send_burst(client, burst)
        client.request_threaded("bench/noop")
        return time.perf_counter() - start
    finally:
        client.close()


def run_sidecar(
    burst: list[dict[str, object]], env: dict[str, str], root: str, base: str, nested: int
) -> tuple[float, int]:
    client = Client(product_server(), env=env)
    try:
        client.initialize({"store": {"path": os.path.join(base, "burst.sqlite3")}}, root)
        sid = client.request("dsh/session/open", {"cwd": root})["session"]["id"]
        client.request(
            "dsh/step/prepare", {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}}
        )
        client.request("dsh/step/end", {"sessionId": sid, "turn": 1, "step": 1})
        client.start_reader()
        client.notifications.clear()
        start = send_burst(client, burst)
        # ``pending`` waits for the queued projections; then the stream must stay quiet.
        pending = client.request_threaded("dsh/context/pending", {"sessionId": sid})
        while True:
            seen = len(client.notifications)
            time.sleep(QUIET_SECONDS)
            if len(client.notifications) == seen:
                break
        pending = client.request_threaded("dsh/context/pending", {"sessionId": sid})
        changes = [c for m in pending["messages"] for c in m["source"].get("changes", [])]
        paths = {c["path"] for c in changes if c["action"] == "set"}
        assert len(paths) == nested, (len(paths), nested)
        did_change = [t for t, m in client.notifications if m["method"] == "dsh/context/didChange"]
        assert did_change, "no dsh/context/didChange during the burst"
        return did_change[-1] - start, len(did_change)
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--dirs", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the median is used")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root, opened, nested = build_project(base, args.dirs, args.files)
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        burst = [did_open(p) for p in opened]
        noop_times, sidecar_times, notes = [], [], 0
        for run in range(args.repeat):
            noop_times.append(run_noop(burst, env))
            elapsed, notes = run_sidecar(burst, env, root, os.path.join(base, f"r{run}"), nested)
            sidecar_times.append(elapsed)
    noop = sorted(noop_times)[len(noop_times) // 2]
    sidecar = sorted(sidecar_times)[len(sidecar_times) // 2]
    ratio = sidecar / noop
    report(
        "didopen_burst",
        [
            (
                "burst",
                f"{len(opened)} didOpen over {args.dirs} directories, {nested} nested AGENTS.md",
            ),
            ("no-op server drain", f"{ms(noop)}  (runs: {', '.join(ms(t) for t in noop_times)})"),
            (
                "sidecar, last didChange",
                f"{ms(sidecar)}  (runs: {', '.join(ms(t) for t in sidecar_times)})",
            ),
            ("didChange notifications", str(notes)),
            ("sidecar / noop", f"{ratio:.2f}x  (target <= 2.0)"),
        ],
        {
            "files": len(opened),
            "dirs": args.dirs,
            "nested": nested,
            "noop_s": noop,
            "sidecar_s": sidecar,
            "ratio": ratio,
            "did_change": notes,
            "repeat": args.repeat,
        },
    )


if __name__ == "__main__":
    main()

"""textDocument/hover and dsh/scopes round trips against a no-op handler (ISSUE 8 target 2).

One real server subprocess over stdio (``bench/bench_server.py``: the product ``build_server()``
plus the bench-only ``bench/noop`` request, which answers null at once). A project with an
instruction chain five directories deep (AGENTS.md and CLAUDE.md at every level, a .gitignore)
and two live sessions. Then, interleaved and sequential (one request in flight), we time
``bench/noop``, ``textDocument/hover`` on the deepest AGENTS.md, and ``dsh/scopes`` for a source
file beside it, and report p50 and p99 of each and their ratios to the no-op's.

Target: hover and scopes p50 and p99 <= 1.3x the no-op's.

    .venv/bin/python bench/roundtrip.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import time

from _common import ms, percentile, report
from _rpc import Client, bench_server, file_uri

DEPTH = 5


def build_project(base: str) -> tuple[str, str, str]:
    root = os.path.join(base, "proj")
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, ".gitignore"), "w", encoding="utf-8") as fh:
        fh.write("node_modules/\n")
    directory = root
    for level in range(DEPTH + 1):
        if level:
            directory = os.path.join(directory, f"pkg{level}")
            os.makedirs(directory)
        for name in ("AGENTS.md", "CLAUDE.md"):
            with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
                fh.write(f"# {name} level {level}\n" + "- keep it tidy\n" * 100)
    source = os.path.join(directory, "main.py")
    with open(source, "w", encoding="utf-8") as fh:
        fh.write("print('hi')\n")
    return root, os.path.join(directory, "AGENTS.md"), source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root, agents, source = build_project(base)
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        client = Client(bench_server(), env=env)
        try:
            client.initialize({"store": {"path": os.path.join(base, "s.sqlite3")}}, root)
            for _ in range(2):
                client.request("dsh/session/open", {"cwd": root})
            with open(agents, encoding="utf-8") as fh:
                text = fh.read()
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": file_uri(agents), "languageId": "markdown", "version": 1, "text": text,
            }})  # fmt: skip
            hover = {
                "textDocument": {"uri": file_uri(agents)},
                "position": {"line": 0, "character": 1},
            }
            scopes = {"uri": file_uri(source)}
            calls = {
                "noop": ("bench/noop", None),
                "hover": ("textDocument/hover", hover),
                "scopes": ("dsh/scopes", scopes),
            }
            result = client.request("textDocument/hover", hover)
            assert result and "contents" in result, result
            result = client.request("dsh/scopes", scopes)
            assert len(result["files"]) >= 2 * (DEPTH + 1), result
            samples: dict[str, list[float]] = {name: [] for name in calls}
            for round_ in range(args.rounds + 100):
                for name, (method, params) in calls.items():
                    start = time.perf_counter()
                    client.request(method, params)
                    if round_ >= 100:  # the first hundred warm up caches and the allocator
                        samples[name].append(time.perf_counter() - start)
        finally:
            client.close()
    stats = {n: (percentile(v, 50), percentile(v, 99)) for n, v in samples.items()}
    noop50, noop99 = stats["noop"]
    rows = [("rounds", str(args.rounds))]
    result_json: dict[str, float | int] = {"rounds": args.rounds}
    for name, (p50, p99) in stats.items():
        rows.append((f"{name} p50 / p99", f"{ms(p50)} / {ms(p99)}"))
        result_json[f"{name}_p50_s"] = p50
        result_json[f"{name}_p99_s"] = p99
    for name in ("hover", "scopes"):
        r50, r99 = stats[name][0] / noop50, stats[name][1] / noop99
        rows.append((f"{name} / noop", f"p50 {r50:.2f}x, p99 {r99:.2f}x  (target <= 1.3)"))
        result_json[f"{name}_p50_ratio"] = r50
        result_json[f"{name}_p99_ratio"] = r99
    report("roundtrip", rows, result_json)


if __name__ == "__main__":
    main()

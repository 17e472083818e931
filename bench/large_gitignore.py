"""A 1 MiB root .gitignore of 40,000 patterns: one parse per version of it (issue 14 target 3).

The real server (``bench/bench_server.py``) with one live session at the root of a project
whose touched file sits four directories down (AGENTS.md at each level). Each run writes a new
version of the root ``.gitignore`` (1 MiB, 40,000 patterns of the usual kinds: directories,
extensions, anchored and ``**`` paths, negations), then times:

* ``first_touch``   ``textDocument/didOpen`` of the deep file plus ``dsh/context/pending``: the
  first decision that needs the new .gitignore;
* ``again_touch``   the same, a second time (the parse is kept);
* ``scopes``        ``dsh/scopes`` of the deep file;
* ``hover``         ``textDocument/hover`` on the deep AGENTS.md (scopes plus what the other
  agents load);

and, in this process between the runs, ``parse``: one ``pathspec.GitIgnoreSpec.from_lines`` of
the same lines (what parsing the file once costs at least). Target: ``first_touch`` within about
one parse (ratio near 1, never several parses), the others far below one parse.

    .venv/bin/python bench/large_gitignore.py [--patterns 40000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pathspec

from _common import ms, report
from _rpc import Client, bench_server, file_uri

DEPTH = 4
TARGET_BYTES = 1024 * 1024


def gitignore_text(patterns: int, version: int) -> str:
    kinds = (
        "build-{i:06d}/",
        "*.generated{i}",
        "/vendor/library-{i:06d}/**",
        "docs/**/draft-{i:06d}.md",
        "!keep-{i:06d}.txt",
        "tmp/cache-{i:06d}-*",
    )
    lines = [f"# version {version}"]
    for i in range(patterns):
        lines.append(kinds[i % len(kinds)].format(i=i))
    text = "\n".join(lines) + "\n"
    pad = max(0, TARGET_BYTES - len(text.encode()))
    return text + "#" * max(0, pad - 1) + "\n" if pad else text


def build_project(base: str) -> tuple[str, str, str]:
    root = os.path.join(base, "proj")
    os.makedirs(os.path.join(root, ".git"))
    directory = root
    for level in range(DEPTH + 1):
        if level:
            directory = os.path.join(directory, f"src{level}")
            os.mkdir(directory)
        with open(os.path.join(directory, "AGENTS.md"), "w", encoding="utf-8") as fh:
            fh.write(f"level {level} rule\n")
    source = os.path.join(directory, "main.py")
    with open(source, "w", encoding="utf-8") as fh:
        fh.write("x = 1\n")
    return root, source, os.path.join(directory, "AGENTS.md")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        samples.setdefault(name, []).append(seconds)

    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root, source, agents = build_project(base)
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        client = Client(bench_server(), env=env)
        try:
            client.initialize({"store": {"path": os.path.join(base, "s.sqlite3")}}, root)
            sid = client.request("dsh/session/open", {"cwd": root})["session"]["id"]
            step = {"sessionId": sid, "turn": 1, "step": 1}
            client.request("dsh/step/prepare", {**step, "prompt": {"text": "hi"}})
            client.request("dsh/step/end", step)
            opened = (
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
            pending = ("dsh/context/pending", {"sessionId": sid})
            hover = (
                "textDocument/hover",
                {
                    "textDocument": {"uri": file_uri(agents)},
                    "position": {"line": 0, "character": 0},
                },
            )
            size = 0
            for run in range(args.repeat):
                text = gitignore_text(args.patterns, run)
                size = len(text.encode())
                with open(os.path.join(root, ".gitignore"), "w", encoding="utf-8") as fh:
                    fh.write(text)
                start = time.perf_counter()
                spec = pathspec.GitIgnoreSpec.from_lines(text.split("\n"))
                add("parse", time.perf_counter() - start)
                assert len(spec.patterns) > args.patterns
                add("first_touch", client.exchange([opened, pending]))
                found = client.request(*pending)["messages"]
                assert len(found) == 1 and len(found[0]["source"]["changes"]) == DEPTH, found
                add("again_touch", client.exchange([opened, pending]))
                add("scopes", client.exchange([("dsh/scopes", {"uri": file_uri(source)})]))
                add("hover", client.exchange([hover]))
        finally:
            client.close()
    t = {name: statistics.median(values) for name, values in samples.items()}
    parse = t["parse"]
    rows = [(".gitignore", f"{size:,} bytes, {args.patterns:,} patterns; {args.repeat} versions")]
    out: dict[str, object] = {"patterns": args.patterns, "bytes": size, "repeat": args.repeat}
    for name, values in samples.items():
        runs = ", ".join(ms(v) for v in values)
        rows.append((name, f"{ms(t[name])}  ({t[name] / parse:.2f}x one parse; runs {runs})"))
        out[f"{name}_s"] = t[name]
        out[f"{name}_over_parse"] = t[name] / parse
    rows.append(("target", "first_touch about 1x one parse; the others far below it"))
    report("large_gitignore", rows, out)


if __name__ == "__main__":
    main()

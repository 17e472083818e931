"""``dsh/explain`` beside 3 × 500 rule files whose globs have 64 brace alternatives (issue 30,
finding 8), against ``dsh/explain`` of the same tree without its rule files.

Two projects side by side, identical but for the rule folders: ``rules/`` holds 500 rule files
in each of ``.github/instructions`` (``applyTo``), ``.claude/rules`` (``paths``) and
``.cursor/rules`` (``globs``), each with one glob of ``--alternatives`` brace alternatives (64,
the most a glob may have) that does not match the explained file but ends as it does
(``**/{m0,…,m63}-<i>/**/*.py``), so no rule is ruled out by its literal ends and every
alternative is really tried; ``bare/`` has no rule folders. Each is within the documented
limits (docs/protocol.md, "Repository text in linear time"): one glob per rule, 64
alternatives, patterns far under 512 characters, 500 files per folder (explain's listing reads
500 per folder; the sidecar's own chain reads the first 500 of all three together and says so).

One real server (``bench/bench_server.py``: the product's ``build_server()``) on stdio, with
the three rule sets on, answers ``dsh/explain`` for a new file four directories down in each
project in turn (the order alternating between rounds); the file is new each round, so no kept
explanation answers. Printed: the first request beside the rules (it compiles every glob; later
ones find them compiled), the median of the rounds after it, the median of the bare tree's, and
the ratios ``rules / bare`` of both.

    .venv/bin/python bench/explain_rules.py [--rules 500] [--alternatives 64] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, report
from _rpc import Client, bench_server, file_uri

FOLDERS = {
    ".github/instructions": ("{i}.instructions.md", 'applyTo: "{glob}"'),
    ".claude/rules": ("{i}.md", 'paths: ["{glob}"]'),
    ".cursor/rules": ("{i}.mdc", "globs: {glob}"),
}
DEEP = ("a", "b", "c", "d")


def build(root: str, rules: int, alternatives: int) -> str:
    """A project at ``root`` (with ``rules`` files per rule folder when ``rules`` > 0); returns
    the directory of the files explained."""
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, "AGENTS.md"), "w") as fh:
        fh.write("Root.\n")
    for folder, (name, front) in FOLDERS.items() if rules else ():
        os.makedirs(os.path.join(root, folder))
        for i in range(rules):
            options = ",".join(f"m{j}" for j in range(alternatives))
            glob = f"**/{{{options}}}-{i}/**/*.py"
            with open(os.path.join(root, folder, name.format(i=i)), "w") as fh:
                fh.write(f"---\n{front.format(glob=glob)}\n---\nRule {i}.\n")
    deep = os.path.join(root, *DEEP)
    os.makedirs(deep)
    return deep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=500)
    parser.add_argument("--alternatives", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (the first request, then the rest)")
    base = tempfile.mkdtemp(prefix="dsh-bench-")
    client = None
    try:
        dirs = {
            "rules": build(os.path.join(base, "rules"), args.rules, args.alternatives),
            "bare": build(os.path.join(base, "bare"), 0, args.alternatives),
        }
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "HOME": home, "DSH_HOME": home}
        client = Client(bench_server(), env=env)
        client.initialize(
            {
                "store": {"path": os.path.join(base, "store.sqlite3")},
                "instructions": {"ruleSets": ["copilot", "claude", "cursor"]},
            }
        )
        times: dict[str, list[float]] = {name: [] for name in dirs}
        for round_ in range(args.rounds):
            order = list(dirs) if round_ % 2 == 0 else list(reversed(dirs))
            for name in order:
                target = os.path.join(dirs[name], f"x{round_}.py")
                with open(target, "w"):
                    pass
                started = time.perf_counter()
                result = client.request("dsh/explain", {"uri": file_uri(target)})
                times[name].append(time.perf_counter() - started)
                assert result["file"] == target, result["file"]
        first = times["rules"][0]
        later = statistics.median(times["rules"][1:])
        bare = statistics.median(times["bare"])
        label = f"3 x {args.rules} rules, {args.alternatives} alternatives"
        report(
            "explain_rules",
            [
                (f"dsh/explain, {label}: first request", ms(first)),
                (f"  the {args.rounds - 1} after it (median)", ms(later)),
                (f"dsh/explain, same tree without rules (median of {args.rounds})", ms(bare)),
                ("rules / bare: first, after", f"{first / bare:.1f}x, {later / bare:.1f}x"),
                ("rounds, rules", " ".join(ms(t) for t in times["rules"])),
                ("rounds, bare", " ".join(ms(t) for t in times["bare"])),
            ],
            {
                "rules_per_set": args.rules,
                "alternatives": args.alternatives,
                "first_s": first,
                "later_s": later,
                "bare_s": bare,
                "first_ratio": first / bare,
                "later_ratio": later / bare,
            },
        )
    finally:
        if client is not None:
            client.close()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

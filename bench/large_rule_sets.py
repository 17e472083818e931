"""Repository-sized rule lists (issue 24 item 4): ``explain`` over 3 × 500 rule files, and a
Copilot rule whose ``applyTo`` lists 20,000 globs.

Builds a project with 500 rule files in each of ``.github/instructions``, ``.claude/rules`` and
``.cursor/rules`` (each with a few globs that do not match the explained file), then times, in
this process:

* ``explain``        ``explain_file`` of a file four directories down, every agent, the
  ``copilot``/``claude``/``cursor`` rule sets on (what ``dsh/explain`` and ``dsh-sidecar
  explain`` run); target: under 1 s;
* ``huge_rule``      reading the frontmatter of one Copilot rule with 20,000 globs and matching
  a path against it (``applicability`` + ``matches``; was about 20 s per step);

    .venv/bin/python bench/large_rule_sets.py [--rules 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, report
from dsh_sidecar.config import parse_settings
from dsh_sidecar.explain import explain_file
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions.rules import applicability


def build(base: str, rules: int) -> str:
    root = os.path.join(base, "proj")
    os.makedirs(os.path.join(root, ".git"))
    folders = {
        ".github/instructions": ("{i}.instructions.md", 'applyTo: "lib{i}/**, **/*.x{i}"'),
        ".claude/rules": ("{i}.md", 'paths: ["lib{i}/**", "**/*.x{i}"]'),
        ".cursor/rules": ("{i}.mdc", "globs: lib{i}/**, **/*.x{i}"),
    }
    for folder, (name, front) in folders.items():
        os.makedirs(os.path.join(root, folder))
        for i in range(rules):
            with open(os.path.join(root, folder, name.format(i=i)), "w") as fh:
                fh.write(f"---\n{front.format(i=i)}\n---\nRule {i}.\n")
    deep = os.path.join(root, "a", "b", "c", "d")
    os.makedirs(deep)
    with open(os.path.join(deep, "x.py"), "w") as fh:
        fh.write("")
    with open(os.path.join(root, "AGENTS.md"), "w") as fh:
        fh.write("Root.\n")
    return os.path.join(deep, "x.py")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=500)
    parser.add_argument("--globs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    settings = parse_settings(
        {"instructions": {"ruleSets": ["copilot", "claude", "cursor"]}}
    ).instructions
    with tempfile.TemporaryDirectory() as base:
        target = build(base, args.rules)
        home = os.path.join(base, "home")
        os.makedirs(home)
        explain_times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            explain_file(target, settings, LOCAL_FS, dsh_home=home, home=home, env={})
            explain_times.append(time.perf_counter() - started)
    globs = ", ".join(f"lib{i}/**/*.py" for i in range(args.globs))
    text = f'---\napplyTo: "{globs}"\n---\nHuge.\n'
    huge_times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        applies = applicability(RULE_SETS["copilot"], text)
        applies.matches("a/b/c/d/x.py", "/proj")
        huge_times.append(time.perf_counter() - started)
    explain_median = statistics.median(explain_times)
    huge_median = statistics.median(huge_times)
    report(
        "large_rule_sets",
        [
            (f"explain, 3 x {args.rules} rules (median of {args.repeat})", ms(explain_median)),
            (f"one rule of {args.globs:,} globs: read + match", ms(huge_median)),
        ],
        {
            "rules_per_set": args.rules,
            "explain_s": explain_median,
            "globs": args.globs,
            "huge_rule_s": huge_median,
        },
    )


if __name__ == "__main__":
    main()

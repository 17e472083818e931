"""``scripts/conformance --generated N --seed S [--cli claude,codex,gemini,copilot,qwen] [--exclude F,..]
[--save [--xfail CAUSE]]``: run N generated trees (generate.py) through each CLI, print every disagreement with
the features its tree was built from, and, with ``--save``, shrink each disagreeing tree to a
minimal one and save it in found/ (replayed by the fixed suite, test_conformance.py)."""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import time
from pathlib import Path

from tests.support.agent_cli import ALL_AGENTS, Agent

from .check import check_tree
from .generate import Found, generate, save_found, shrink
from .trees import Tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/conformance")
    parser.add_argument("--generated", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--cli", default=",".join(ALL_AGENTS))
    parser.add_argument("--exclude", default="")
    parser.add_argument("--save", action="store_true")
    # With --save: the cause, not fixed yet, each saved tree is marked xfail(strict) with.
    parser.add_argument("--xfail", default=None)
    args = parser.parse_args(argv)
    clis: list[Agent] = [c for c in ALL_AGENTS if c in args.cli.split(",")]
    exclude = [f for f in args.exclude.split(",") if f]
    work = Path(tempfile.mkdtemp(prefix="dsh-conformance-"))
    total = 0
    for cli in clis:
        spent = 0.0
        bad = 0
        for index in range(args.start, args.start + args.generated):
            generated = generate(args.seed, index, exclude)
            tree = generated.tree
            began = time.monotonic()
            checked = check_tree(cli, tree, work / f"{cli}-{index}", f"{index}{cli[0]}")
            spent += time.monotonic() - began
            if not checked.found:
                # An agreeing tree is not kept: a Copilot CLI run unpacks its ~190 MB runtime
                # into the tree's HOME, so forty kept trees filled the disk.
                shutil.rmtree(work / f"{cli}-{index}", ignore_errors=True)
                continue
            bad += 1
            print(f"== {cli} {tree.name} ({tree.note})")
            for line in checked.found:
                print("  ", line)
            if args.save:
                first = _shape(checked.found[0])
                still = _Still(cli, work / f"shrink-{cli}-{index}", first)
                small = shrink(tree, still)
                path = save_found(
                    Found(
                        cli,
                        small,
                        cause=f"found by seed {args.seed} index {index}: {first}",
                        xfail=args.xfail,
                    ),
                    f"{cli}-{args.seed}-{index}",
                )
                print(f"   shrunk to {len(small.files)} files, {len(small.symlinks)} links: {path}")
        total += bad
        print(
            f"{cli}: {args.generated} trees (seed {args.seed}), {bad} disagreeing, "
            f"{spent / max(args.generated, 1):.1f} s per tree"
        )
    return 1 if total else 0


class _Still:
    """Whether a smaller tree still shows the disagreement ``first`` (a fresh base per try)."""

    def __init__(self, cli: Agent, work: Path, first: str) -> None:
        self.cli, self.work, self.first, self.tries = cli, work, first, 0

    def __call__(self, candidate: Tree) -> bool:
        self.tries += 1
        tag = f"s{self.tries}{self.cli[0]}"
        again = check_tree(self.cli, candidate, self.work / str(self.tries), tag)
        shutil.rmtree(self.work / str(self.tries), ignore_errors=True)
        return any(_shape(line) == self.first for line in again.found)


def _shape(line: str) -> str:
    """A disagreement without the tree's name and with byte counts left out, so the same one is
    recognised in a smaller tree."""
    _, _, rest = line.partition(": ")
    return re.sub(r"\d+", "N", rest) if "bytes" in rest or "sentBytes" in rest else rest


if __name__ == "__main__":
    raise SystemExit(main())

"""The parser attacks of issue 24 (items 1 and 4), timed in this process: what one hostile file
costs each parser of repository text.

* ``code_spans``     ``import_spans`` of a 20 KB AGENTS.md: code spans around a run of N
  backticks (issue: 400 backticks, about 50 s before);
* ``frontmatter``    ``read_frontmatter`` of a rule whose value holds N spaces (issue: 60 KB,
  13-20 s before);
* ``gitignore``      one ``.gitignore`` line ``*a*a*a*a*b/`` checked against a directory name
  of N ``a``\\ s (pathspec's regex backtracks);
* ``huge_rule``      a Copilot rule with N globs: frontmatter read, globs compiled, one path
  matched (issue: 20,000 globs, about 20 s per step before).

Each at two sizes, so the ratio shows the growth (linear: the size ratio). Runs against the
checkout on ``PYTHONPATH`` too, which gives the "before" figures from an older tree:

    .venv/bin/python bench/hostile_text.py [--timeout 60]
    PYTHONPATH=<old checkout>/server .venv/bin/python bench/hostile_text.py
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import report


def code_spans(n: int) -> None:
    from dsh_sidecar.sources.agent_instructions.import_syntax import import_spans

    text = "a `b` " * 1000 + "`" * n + " c `d` " * 1000
    import_spans(text, "/p", "/h")


def frontmatter(n: int) -> None:
    from dsh_sidecar.sources.agent_instructions.frontmatter import read_frontmatter

    read_frontmatter("---\nglobs: a" + " " * n + "b\n---\n")


def gitignore(n: int) -> None:
    from dsh_sidecar.sources.agent_instructions.gitignore import _parse_gitignore

    _parse_gitignore("*a*a*a*a*b/\n").check_file("a" * n + "/")


def huge_rule(n: int) -> None:
    from dsh_sidecar.rule_sets import RULE_SETS
    from dsh_sidecar.sources.agent_instructions.rules import applicability

    globs = ", ".join(f"lib{i}/**/*.py" for i in range(n))
    applies = applicability(RULE_SETS["copilot"], f'---\napplyTo: "{globs}"\n---\nHuge.\n')
    applies.matches("a/b/c/d/x.py")


ATTACKS: dict[str, tuple[Callable[[int], None], tuple[int, int]]] = {
    "code_spans": (code_spans, (200, 400)),
    "frontmatter": (frontmatter, (30_000, 60_000)),
    "gitignore": (gitignore, (120, 240)),
    "huge_rule": (huge_rule, (10_000, 20_000)),
}


def _timed(name: str, size: int, out: multiprocessing.Queue[float]) -> None:
    fn = ATTACKS[name][0]
    started = time.perf_counter()
    fn(size)
    out.put(time.perf_counter() - started)


def measure(name: str, size: int, timeout: float) -> float | None:
    """Seconds, or None when it ran past ``timeout`` (then it is stopped)."""
    out: multiprocessing.Queue[float] = multiprocessing.Queue()
    child = multiprocessing.Process(target=_timed, args=(name, size, out))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return out.get() if not out.empty() else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    rows = []
    result: dict[str, object] = {}
    for name, (_, sizes) in ATTACKS.items():
        figures = [measure(name, size, args.timeout) for size in sizes]
        shown = [
            f"{f * 1e3:,.1f} ms" if f is not None else f"> {args.timeout:.0f} s" for f in figures
        ]
        rows.append((f"{name} (N = {sizes[0]:,} / {sizes[1]:,})", " / ".join(shown)))
        result[name] = {"sizes": sizes, "seconds": figures}
    report("hostile_text", rows, result)


if __name__ == "__main__":
    main()

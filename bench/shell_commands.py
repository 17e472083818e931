"""How the Codex shell-command parser's time grows with the command's length.

``shell_touches`` reads commands that come from the model (and so from repository text), up to
megabytes for an ``apply_patch`` here-document. Target: linear time. For each shape of command
we time it at 100 KB and at 1 MB, interleaved, and print the ratio (10× the input should cost
about 10×). ``shlex`` on the same long quoted word is the reference that is not linear.

    .venv/bin/python bench/shell_commands.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import functools
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import interleaved, median, ms, report
from dsh_sidecar.hooks.shell_commands import shell_touches


def shapes(size: int) -> dict[str, str]:
    lines = "\n".join(f"+line {i} don't" for i in range(size // 16))
    return {
        "one quoted word": "cat '" + "x" * size + "' y",
        "many words": "cat " + " ".join(f"f{i % 997}" for i in range(size // 6)),
        "apply_patch heredoc": f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n{lines}\nEOF",
        "bash -lc script": "bash -lc " + shlex.quote("; ".join(["cat a b"] * (size // 9))),
        "unbalanced $(": "cat " + "$(" * (size // 2),
        # Issue 30: wrappers used to recurse on a copy of the remaining words (quadratic), and
        # brackets in double quotes to recurse per level.
        "nice wrappers": "nice " * (size // 5) + "cat x",
        "mixed wrappers": _MIXED_WRAPPERS * (size // len(_MIXED_WRAPPERS)) + "cat x",
        'nested "$(': 'cat "$(' * (size // 9) + ')"' * (size // 9) + " x",
    }


_MIXED_WRAPPERS = "timeout -s KILL 5 sudo -u me -- env -u A C=1 nice -n 5 stdbuf -oL command "


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    small, large = shapes(100_000), shapes(1_000_000)
    rows: list[tuple[str, str]] = []
    result: dict[str, object] = {}
    for name in small:
        samples = interleaved(
            {
                "small": functools.partial(shell_touches, small[name], "/p"),
                "large": functools.partial(shell_touches, large[name], "/p"),
            },
            args.rounds,
        )
        a, b = median(samples["small"]), median(samples["large"])
        rows.append((f"{name}: 100 KB / 1 MB", f"{ms(a)} / {ms(b)}  ratio {b / a:.1f}x"))
        result[name] = {"small_s": a, "large_s": b, "ratio": b / a}
    word = "cat '" + "x" * 100_000 + "'"
    word4 = "cat '" + "x" * 400_000 + "'"
    samples = interleaved({"a": lambda: shlex.split(word), "b": lambda: shlex.split(word4)}, 2)
    a, b = median(samples["a"]), median(samples["b"])
    rows.append(
        ("shlex, one quoted word: 100 KB / 400 KB", f"{ms(a)} / {ms(b)}  ratio {b / a:.1f}x")
    )
    result["shlex"] = {"small_s": a, "large_s": b, "ratio": b / a}
    report("shell_commands", rows, result)


if __name__ == "__main__":
    main()

"""GitHub Copilot CLI's @path syntax (explain/copilot_imports.py), case by case as its runtime
was seen to read it:
docs/reference/agent-models.md, GitHub Copilot CLI 1.0.102
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support.instrkit import write_tree

from dsh_sidecar.explain.copilot_imports import copilot_imports

BASE = "/p"
THERE = {"/p/a.md", "/p/_a.md", "/p/9a.md", "/p/a.mdx", "/p/.a.md"}


def names(text: str) -> list[str]:
    def is_file(path: str) -> bool:
        return os.path.normpath(path) in THERE

    return [i.path.removeprefix(BASE + "/") for i in copilot_imports(text, BASE, is_file)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("@a.md\n", ["a.md"]),
        ("see @a.md for more\n", ["a.md"]),
        # Trailing punctuation is not part of the path.
        ("@a.md.\n", ["a.md"]),
        ("(@a.md).\n", ["a.md"]),
        ("@a.md, @a.md; @a.md: @a.md! @a.md? [@a.md] {@docs/b.md}\n", ["a.md"] * 6 + ["docs/b.md"]),
        # Quotes and angle brackets end it; so does a backtick.
        ("'@a.md' \"@a.md\" <@a.md>\n", ["a.md"] * 3),
        # Any first character.
        ("@_a.md @9a.md @.a.md\n", ["_a.md", "9a.md", ".a.md"]),
        ("@./a.md @../up.md\n", ["a.md", "../up.md"]),
        # Not after a letter, digit or one of %+-._ (an address), but after other punctuation.
        ("x@a.md _@a.md -@a.md .@a.md +@a.md %@a.md\n", []),
        ("/@a.md :@a.md é@a.md @@a.md\n", ["a.md"] * 4),
        # A bare name needs a dot and must be there; a path with a slash need not.
        ("@a @missing.md @a.md#part *@a.md*\n", []),
        ("@docs/missing.md\n", ["docs/missing.md"]),
        # The scan goes on inside a name that was no reference.
        ("@missing.md:@a.md\n", ["a.md"]),
        # No home directory, no absolute path.
        ("@~/a.md @/p/a.md @C:/a.md\n", []),
        # A NUL names no file (and is never asked of the filesystem).
        ("@docs/x\x00y.md @a\x00.md @a.md\n", ["a.md"]),
    ],
)
def test_copilot_cli_reference_syntax(text: str, found: list[str]) -> None:
    assert names(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("`@a.md` ``x`@a.md`` @9a.md\n", ["9a.md"]),
        # An unclosed span hides the rest of its line only.
        ("`@a.md\n@9a.md\n", ["9a.md"]),
        ("`x\n@a.md\ny`\n", ["a.md"]),
        # Fences: three backticks or tildes at any indentation, closed by the same character.
        ("```\n@a.md\n~~~\n@_a.md\n```\n@9a.md\n", ["9a.md"]),
        ("        ~~~\n@a.md\n~~~~\n@9a.md\n", ["9a.md"]),
        ("````\n@a.md\n```\n@9a.md\n````\n@_a.md\n", ["9a.md"]),
        ("> ```\n@a.md\n", ["a.md"]),
        # Indented blocks and HTML comments hide nothing.
        ("\n    @a.md\n<!-- @9a.md -->\n", ["a.md", "9a.md"]),
    ],
)
def test_copilot_cli_skips_code_spans_and_fences(text: str, found: list[str]) -> None:
    assert names(text) == found


def test_copilot_cli_keeps_a_path_that_only_tidies_into_a_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.md": "a\n", "d/x": ""})
    base = str(tmp_path)

    # os.path.isfile, as the agent's open: "a.md/" is no file.
    found = copilot_imports("@a.md/ @missing/../a.md @d/../a.md\n", base, os.path.isfile)
    assert [i.path for i in found] == [
        f"{base}/a.md/",
        f"{base}/missing/../a.md",
        f"{base}/a.md",
    ]

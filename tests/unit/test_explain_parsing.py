"""The small readers explain needs: glob patterns, rule frontmatter, @imports."""

from __future__ import annotations

import time

import pytest

from dsh_sidecar.explain.frontmatter import read_frontmatter
from dsh_sidecar.explain.globs import compile_glob, glob_matches, split_patterns
from dsh_sidecar.explain.imports import import_paths, outside_code


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("*.py", "c.py", True),
        ("*.py", "a/c.py", False),  # no slash, no subdirectories
        ("src/**", "src/a/b.ts", True),
        ("src/**", "src", False),
        ("src/**/*.{ts,tsx}", "src/x/y.tsx", True),
        ("src/**/*.{ts,tsx}", "src/y.ts", True),
        ("src/**/*.{ts,tsx}", "src/y.js", False),
        ("{a,b/{c,d}}/x", "b/d/x", True),
        ("**", "anything/at/all", True),
        ("docs/[!_]*.md", "docs/a.md", True),
        ("docs/[!_]*.md", "docs/_a.md", False),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("./src/*.py", "src/x.py", True),
        ("/src/*.py", "src/x.py", True),
        ("{unclosed", "{unclosed", True),
        ("a[b", "a[b", True),
        ("*.(py)", "x.(py)", True),  # regex characters are literal
    ],
)
def test_globs(pattern: str, path: str, matches: bool) -> None:
    assert glob_matches(pattern, path) is matches


def test_patterns_that_are_empty_or_too_complex_match_nothing() -> None:
    assert compile_glob("") is None and compile_glob("  ") is None
    assert compile_glob("a" * 600) is None
    assert compile_glob("{a,b}" * 7) is None  # 128 alternatives
    assert compile_glob("{a,b}" * 6) is not None  # 64


def test_matching_never_backtracks() -> None:
    # A backtracking matcher needs about n**8 steps here and never returns.
    started = time.monotonic()
    assert not glob_matches("*a*a*a*a*a*a*a*a*b", "a" * 2000)
    assert not glob_matches("**/" * 40 + "x", "a/" * 1000 + "y")
    assert glob_matches("*a*a*a*a*a*a*a*a*b", "a" * 2000 + "b")
    assert time.monotonic() - started < 30  # it returns at all: not a timing threshold


def test_comma_separated_patterns_keep_braces_whole() -> None:
    assert split_patterns("**/*.ts, **/*.{ts,tsx} ,a,,") == ["**/*.ts", "**/*.{ts,tsx}", "a"]


def test_frontmatter_values() -> None:
    text = (
        "---\n"
        'description: "Keys # not a comment"\n'
        "globs: **/*.js, **/*.ts # a comment\n"
        "alwaysApply: false\n"
        "paths:\n"
        '  - "src/**"\n'
        "  - lib/** # trailing\n"
        "applyTo: ['a/**', \"{b,c}/*\"]\n"
        "empty:\n"
        "quoted: 'true'\n"
        "---\n"
        "body: not frontmatter\n"
    )
    assert read_frontmatter(text) == {
        "description": "Keys # not a comment",
        "globs": "**/*.js, **/*.ts",
        "alwaysApply": False,
        "paths": ["src/**", "lib/**"],
        "applyTo": ["a/**", "{b,c}/*"],
        "empty": None,
        "quoted": "true",
    }


@pytest.mark.parametrize(
    "text",
    ["no frontmatter\n", "---\nglobs: a\n", "\n---\nglobs: a\n---\n", "---" + "\nx: y" * 300],
)
def test_missing_or_unclosed_frontmatter_is_none(text: str) -> None:
    assert read_frontmatter(text) is None


def test_frontmatter_after_a_byte_order_mark_and_with_crlf() -> None:
    assert read_frontmatter("\ufeff---\r\nalwaysApply: true\r\n---\r\n") == {"alwaysApply": True}


def test_imports_outside_code_relative_home_and_absolute() -> None:
    text = (
        "See @README.md, and @./docs/a.md.\n"
        "Mail me at me@example.com, not (@in/parens.md), or @~/notes.md)\n"
        "Absolute: @/etc/team.md\n"
        "`@in/span.md` and ``@double `span` .md``\n"
        "```\n@in/fence.md\n```\n"
        "~~~md\n@in/tilde.md\n~~~\n"
        "Again @README.md\n"
    )
    assert import_paths(text, "/p/src", "/home/u") == [
        "/p/src/README.md",
        "/p/src/docs/a.md",
        "/home/u/notes.md",
        "/etc/team.md",
    ]


def test_code_is_blanked_but_lines_are_kept() -> None:
    text = "a\n```\n@x\n```\nb `@y` c\n"
    assert outside_code(text).split("\n") == ["a", "", "", "", "b      c", ""]

"""Every parser of repository text works in time linear in its input (issue 24 item 1).

Each test doubles an adversarial input several times and checks how the work grows. The
hand-written scanners count their own steps (``Steps``, ``globs.counting``), so their tests compare
counts, which no machine load can disturb: doubling the input may at most double the steps
(plus a constant). The parsers built on string methods and the few remaining regexes are timed
instead, in this process, and compared as ratios: quadrupling the input must cost less than 11
times as much (linear gives 4, quadratic 16), taking the best of several runs and measuring a
bad ratio again, so a busy machine cannot fake a trend. Neither is a speed threshold.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions import globs
from dsh_sidecar.sources.agent_instructions.escaping import escape_frame_tags
from dsh_sidecar.sources.agent_instructions.frontmatter import read_frontmatter
from dsh_sidecar.sources.agent_instructions.gitignore import _parse_gitignore
from dsh_sidecar.sources.agent_instructions.globs import compile_glob, compile_vscode_glob
from dsh_sidecar.sources.agent_instructions.ignore_patterns import (
    LinearIgnorePattern,
    automaton_of,
    linear_spec,
    safe_for_re,
)
from dsh_sidecar.sources.agent_instructions.import_syntax import import_paths, import_spans
from dsh_sidecar.sources.agent_instructions.markdown_code import Steps, blank_code
from dsh_sidecar.sources.agent_instructions.rules import applicability, body_start

SIZES = (1_000, 2_000, 4_000, 8_000, 16_000)


def assert_steps_linear(make: Callable[[int], str], count: Callable[[str], int]) -> None:
    """Doubling the input at most doubles the steps (a constant of slack for tiny inputs)."""
    counts = [count(make(n)) for n in SIZES]
    for smaller, larger in itertools.pairwise(counts):
        assert larger <= 2 * smaller + 64, counts


def best_time(fn: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def assert_time_linear(make: Callable[[int], str], parse: Callable[[str], object]) -> None:
    """Quadrupling the input costs less than 11 times as much (linear gives 4, quadratic 16),
    best of seven runs; a ratio past that is measured again (three tries) before it counts, so
    a burst of load on a shared machine cannot fail it, while a quadratic parser fails every
    time."""
    small, large = make(100_000), make(400_000)
    parse(small)  # warm
    ratios = []
    for _ in range(3):
        ratio = best_time(lambda: parse(large), 7) / max(best_time(lambda: parse(small), 7), 1e-6)
        ratios.append(ratio)
        if ratio < 11:
            return
    raise AssertionError(f"time grew {ratios} times for 4 times the input")


# --- code spans and fences ---------------------------------------------------------------------

CODE_ATTACKS: dict[str, Callable[[int], str]] = {
    "a run of backticks": lambda n: "`" * n,
    "runs of growing length": lambda n: " ".join("`" * k for k in range(1, int((2 * n) ** 0.5))),
    "a run amid spans": lambda n: "a `b` " * (n // 12) + "`" * (n // 2) + " c `d` " * (n // 14),
    "unclosed openers": lambda n: "`x " * (n // 3),
    "nested openers": lambda n: "``" * (n // 4) + "`" * (n // 2),
    "a long line of spaces": lambda n: "`" + " " * n + "``",
    "fence openers": lambda n: "````\n" * (n // 5),
    "an unclosed fence": lambda n: "~~~~\n" + "```\n" * (n // 4),
    "indented fences": lambda n: "   ```` `\n" * (n // 10),
    "blank lines": lambda n: "`a\n\n" * (n // 4),
}


@pytest.mark.parametrize("attack", CODE_ATTACKS)
def test_code_scanning_steps_grow_linearly(attack: str) -> None:
    make = CODE_ATTACKS[attack]

    def count(text: str) -> int:
        steps = Steps()
        blank_code(text, keep_offsets=True, steps=steps)
        return steps.count

    assert_steps_linear(make, count)


@pytest.mark.parametrize("attack", ["a run amid spans", "a run of backticks", "unclosed openers"])
def test_import_scanning_is_linear_in_time(attack: str) -> None:
    make = CODE_ATTACKS[attack]
    assert_time_linear(lambda n: make(n) + " @x.md", lambda t: import_spans(t, "/p", "/h"))


@settings(max_examples=examples(200))
@given(st.text(alphabet="`~ \na@x.\t", max_size=60))
def test_blanking_keeps_offsets_and_every_non_code_character(text: str) -> None:
    blanked = blank_code(text, keep_offsets=True)
    assert len(blanked) == len(text)
    for before, after in zip(text, blanked, strict=True):
        assert after == before or after == " "


def test_a_longer_fence_is_not_closed_by_a_shorter_one() -> None:
    # CommonMark: the closing fence is at least as long as the opening one, of the same
    # character; an @path inside the block is code, not an import.
    text = "````\n```\n@inside.md\n```\n````\n@after.md\n"
    assert import_paths(text, "/p", "/h") == ["/p/after.md"]
    assert import_paths("~~~\n```\n@inside.md\n~~~\n", "/p", "/h") == []
    # A fence never closed runs to the end.
    assert import_paths("````\n@a.md\n```\n@b.md\n", "/p", "/h") == []
    # A backtick fence's info string holds no backtick: that line is a span, not a fence.
    assert import_paths("``` x ` y\n@a.md\n", "/p", "/h") == ["/p/a.md"]
    # Indented four spaces is not a fence.
    assert import_paths("    ```\n@a.md\n", "/p", "/h") == ["/p/a.md"]


def test_code_spans_follow_commonmark() -> None:
    # Closed only by a run of exactly the same length, within the paragraph.
    assert import_paths("``a ` @x.md ``", "/p", "/h") == []
    assert import_paths("``a``` @x.md", "/p", "/h") == ["/p/x.md"]
    assert import_paths("`a\n\n@x.md `", "/p", "/h") == ["/p/x.md"]
    assert import_paths("`a\n@x.md `", "/p", "/h") == []


# --- frontmatter and rule headers ---------------------------------------------------------------

FRONT_ATTACKS: dict[str, Callable[[int], str]] = {
    "spaces inside a value": lambda n: "---\nglobs: a" + " " * n + "b\n---\n",
    "spaces after a key": lambda n: "---\nglobs" + " " * n + "x\n---\n",
    "spaces in an item": lambda n: "---\npaths:\n  - a" + " " * n + "b\n---\n",
    "a margin item": lambda n: "---\npaths:\n-" + " " * n + "b" + " " * n + "c\n---\n",
    "quotes and hashes": lambda n: "---\nglobs: " + "'# \"" * (n // 4) + "\n---\n",
    "braces and commas": lambda n: "---\nglobs: [" + "{a," * (n // 3) + "]\n---\n",
}


@pytest.mark.parametrize("attack", FRONT_ATTACKS)
def test_frontmatter_is_linear_in_time(attack: str) -> None:
    assert_time_linear(FRONT_ATTACKS[attack], read_frontmatter)


@pytest.mark.parametrize("attack", FRONT_ATTACKS)
def test_rule_headers_are_linear_in_time(attack: str) -> None:
    make = FRONT_ATTACKS[attack]
    for name in ("copilot", "claude", "cursor"):
        assert_time_linear(make, functools.partial(applicability, RULE_SETS[name]))
    assert_time_linear(make, body_start)


def test_frontmatter_keys_and_items_read_as_before() -> None:
    text = "---\na:b\nk : v \n- bare\nlist:\n  -x\n  - y \n-\n-z\n---\n"
    assert read_frontmatter(text) == {"k": "v", "list": ["x", "y"]}


# --- globs ---------------------------------------------------------------------------------------

GLOB_ATTACKS: dict[str, tuple[str, Callable[[int], str]]] = {
    "many stars": ("*a*a*a*a*a*a*a*a*b", lambda n: "a" * n),
    "many double stars": ("**/" * 30 + "x", lambda n: "a/" * (n // 2)),
    "stars and classes": ("*[ab]*[ab]*?*c", lambda n: "ab" * (n // 2)),
    "middle double stars": ("a/**/b/**/c/**/d", lambda n: "a/" + "b/c/" * (n // 4)),
}


@pytest.mark.parametrize("attack", GLOB_ATTACKS)
@pytest.mark.parametrize("dialect", ["relative", "vscode"])
def test_glob_matching_steps_grow_linearly_in_the_path(attack: str, dialect: str) -> None:
    pattern, make = GLOB_ATTACKS[attack]
    glob = compile_glob(pattern) if dialect == "relative" else compile_vscode_glob(pattern)
    assert glob is not None

    def count(path: str) -> int:
        globs.counting = globs.StepCount()
        try:
            glob.matches(path[: globs.MAX_PATH_LENGTH - 64], "/p")
            return globs.counting.count
        finally:
            globs.counting = None

    counts = [count(make(n)) for n in (250, 500, 1000, 2000)]
    for smaller, larger in itertools.pairwise(counts):
        assert larger <= 2 * smaller + 64, counts


def test_glob_steps_grow_linearly_in_the_pattern() -> None:
    def count(stars: int) -> int:
        glob = compile_glob("*a" * stars + "*b")
        assert glob is not None
        globs.counting = globs.StepCount()
        try:
            glob.matches("a" * 1000)
            return globs.counting.count
        finally:
            globs.counting = None

    counts = [count(k) for k in (16, 32, 64, 128)]
    for smaller, larger in itertools.pairwise(counts):
        assert larger <= 2 * smaller + 64, counts


# --- gitignore -----------------------------------------------------------------------------------


@contextmanager
def counted() -> Iterator[globs.StepCount]:
    globs.counting = globs.StepCount()
    try:
        yield globs.counting
    finally:
        globs.counting = None


@pytest.mark.parametrize(
    "pattern",
    ["*a*a*a*a*b/", "*a*a*b", "**/a/**/a/**/b", "a*/**/*a*", "x/**/y/**/z", "[ab]*[ab]*?c"],
)
def test_hostile_gitignore_patterns_run_as_an_automaton_in_linear_steps(pattern: str) -> None:
    spec = _parse_gitignore(pattern + "\n")
    (compiled,) = spec.patterns
    assert isinstance(compiled, LinearIgnorePattern) and compiled._automaton is not None
    counts = []
    for n in (250, 500, 1000, 2000):
        with counted() as steps:
            spec.check_file("a/" * (n // 4) + "a" * (n // 2) + "/")
        counts.append(steps.count)
    for smaller, larger in itertools.pairwise(counts):
        assert larger <= 2 * smaller + 64, counts


@pytest.mark.parametrize(
    "pattern", ["node_modules/", "*.pyc", "/build", "docs/**", "**/tmp", "a/**/b", "!keep.txt"]
)
def test_ordinary_gitignore_patterns_keep_their_regex_and_stay_linear(pattern: str) -> None:
    spec = _parse_gitignore(pattern + "\n")
    (compiled,) = spec.patterns
    assert isinstance(compiled, LinearIgnorePattern) and compiled._automaton is None
    assert_time_linear(lambda n: "a/" * (n // 4) + "b" * (n // 2) + "/", spec.check_file)


PATTERN_PIECES = st.sampled_from(["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "\\*", "."])
PATH_PIECES = st.sampled_from(["a", "b", "/", "*", "."])


@settings(max_examples=examples(500))
@given(
    st.lists(st.lists(PATTERN_PIECES, min_size=1, max_size=7).map("".join), max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.lists(PATH_PIECES, min_size=1, max_size=10).map("".join),
)
def test_the_automaton_decides_what_pathspec_decides(
    lines: list[str], negate: list[bool], path: str
) -> None:
    lines = [("!" + line if flip else line) for line, flip in zip(lines, negate, strict=False)]
    usable = []
    for line in lines:
        try:
            LinearIgnorePattern(line)
        except ValueError:
            continue
        usable.append(line)
    if "//" in path or path.startswith("/"):
        return  # never a path the sidecar asks about
    plain = pathspec.GitIgnoreSpec.from_lines(usable, backend="simple")
    forced = pathspec.GitIgnoreSpec(
        [LinearIgnorePattern(line, always_automaton=True) for line in usable], backend="simple"
    )
    expected = plain.check_file(path)
    got = forced.check_file(path)
    if any("[!" in line for line in usable) and "/" in path:
        return  # a negated class: re's may match "/", git's (and ours) never does
    assert (got.include, got.index) == (expected.include, expected.index)


def test_safety_classification() -> None:
    assert safe_for_re("^(?:.+/)?[^/]*\\.py(?:(?P<ps_d>/)|$)")
    assert not safe_for_re("^(?:.+/)?[^/]*a[^/]*b(?:(?P<ps_d>/)|$)")
    assert not safe_for_re("^a(?:/.+)?/b(?:/.+)?/c(?:(?P<ps_d>/)|$)")
    assert automaton_of("^a{2}") is None  # a construct this reader does not know
    assert linear_spec(["*a*a*b", "ok"], skip_bad=True).check_file("xaab").include is True


# --- escaping ------------------------------------------------------------------------------------

ESCAPE_ATTACKS: dict[str, Callable[[int], str]] = {
    "openers": lambda n: "<" * n,
    "openers and whitespace": lambda n: "< \u200b" * (n // 3),
    "a long gap": lambda n: "<" + " " * n + "x",
    "near tags": lambda n: "</system-reminde" * (n // 16),
    "letters with invisibles": lambda n: "<s" + "\u200b" * n + "y",
}


@pytest.mark.parametrize("attack", ESCAPE_ATTACKS)
def test_frame_tag_escaping_is_linear_in_time(attack: str) -> None:
    assert_time_linear(ESCAPE_ATTACKS[attack], escape_frame_tags)


@pytest.mark.parametrize(
    "attack",
    [
        lambda n: "cat '" + "a''" * n + "x.py'",  # one word of many quoted pieces side by side
        lambda n: 'grep "a"' + "b" * n + ' "c" x.py',
        lambda n: "cat x.py; " + "echo 'a' " * n,
    ],
    ids=["quoted pieces", "a long word", "many simple commands"],
)
def test_a_claude_bash_command_is_read_in_linear_time(attack: Callable[[int], str]) -> None:
    from dsh_sidecar.hooks.claude_shell_reads import _simple_commands

    assert_time_linear(attack, _simple_commands)

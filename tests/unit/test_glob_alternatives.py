"""A glob's brace alternatives run as one automaton (issue 30, finding 8): it decides what
running each alternative's own automaton in turn decided, and its work does not grow with the
number of alternatives or of files asked about.

Work is counted, never timed: ``globs.counting`` sums the automaton's states stepped per path
character and ``globs.compiling`` the tokens made by compilations.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.config import parse_settings
from dsh_sidecar.explain import explain_file
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions import frontmatter, globs

PATTERN_PIECES = st.sampled_from(
    ["a", "b", "ab", "/", "*", "**", "**/", "?", "[ab]", "[!a]", ".", "{", "}", ",", "{a,b}"]
)
PATH_PIECES = st.sampled_from(["a", "b", "ab", "/", ".", "ba/"])
BELOW = ("", "also", "only")


def one_by_one(pattern_text: str, path: str, below: str) -> bool | None:
    """What the sidecar decided before: each expanded alternative's automaton in turn (Claude
    Code's directories as the alternative followed by "/**"); None when the pattern is refused."""
    expanded = globs._expand(pattern_text)
    if expanded is None:
        return None
    variants: list[tuple[globs.Token, ...]] = []
    for alternative in expanded:
        tokens = globs._tokens(alternative)
        if below != "only":
            variants.append(tokens)
        if below:
            variants.append((*tokens, (globs._LITERAL, "/", False), (globs._REST, "", False)))
    return any(globs._run(tokens, path) for tokens in variants)


@settings(max_examples=examples(2000))
@given(
    st.lists(PATTERN_PIECES, min_size=1, max_size=10).map("".join),
    st.lists(PATH_PIECES, max_size=8).map("".join),
    st.sampled_from(BELOW),
)
def test_the_merged_automaton_decides_what_each_alternative_decided(
    pattern_text: str, path: str, below: str
) -> None:
    expected = one_by_one(pattern_text, path, below)
    if expected is None:
        return
    expanded = globs._expand(pattern_text)
    assert expanded is not None
    alternatives = tuple(globs._tokens(alternative) for alternative in expanded)
    merged = globs._merge(alternatives, below)
    assert globs._run_merged(merged, path) is expected


@settings(max_examples=examples(2000))
@given(
    st.lists(
        st.sampled_from(["a", "b", "/", "*", "**", "**/", "?", ".", "{", "}", ",", "{a,*}", "[a]"]),
        min_size=1,
        max_size=12,
    ).map("".join)
)
def test_alternatives_tokenize_as_each_one_alone(pattern_text: str) -> None:
    expanded = globs._expand(pattern_text)
    if expanded is None:
        return
    assert globs._tokens_of_all(expanded) == tuple(globs._tokens(a) for a in expanded)


@settings(max_examples=examples(1000))
@given(
    st.lists(PATTERN_PIECES, min_size=1, max_size=10).map("".join),
    st.lists(PATH_PIECES, min_size=1, max_size=8).map("".join),
)
def test_compiled_globs_of_every_dialect_decide_as_before(pattern_text: str, path: str) -> None:
    # The dialects only rewrite the text before expanding it (a "**/" in front, lower case), so
    # each is held to the one-by-one decision over its own rewritten text.
    root = globs.compile_glob(pattern_text)
    expected = one_by_one(pattern_text.strip().lstrip("/"), path, "")
    if not pattern_text.strip().startswith("./"):
        assert (root is not None and root.matches(path)) is bool(expected)
    claude = globs.compile_claude_glob(pattern_text)
    text = pattern_text.strip()
    if claude is not None and not text.startswith("!"):
        rewritten = text.rstrip("/")
        if rewritten.startswith("/"):
            rewritten = rewritten.lstrip("/")
        elif "/" not in rewritten.removesuffix("/**") and rewritten != "**":
            rewritten = "**/" + rewritten
        below = "only" if text.endswith("/") else "also"
        assert claude.matches(path) is bool(one_by_one(rewritten.lower(), path.lower(), below))


def test_64_alternatives_cost_about_what_one_costs() -> None:
    """``**/{m0,…,m63}-7/**/*.py`` steps through ``**/`` and ``-7/**/*.py`` once for all 64:
    about what the one alternative that the path holds costs alone, not 64 times that."""

    def steps(options: list[str], path: str) -> int:
        glob = globs.compile_claude_glob(f"**/{{{','.join(options)}}}-7/**/*.py")
        assert glob is not None
        with counted("counting") as count:
            glob.matches(path)
        return count.count

    every = [f"m{j}" for j in range(64)]
    for path, held in (
        ("a/b/c/d/x.py", "m0"),
        ("src/m5-7/deep/x.py", "m5"),
        ("m63-7/" * 20 + "x.py", "m63"),
    ):
        one, many = steps([held], path), steps(every, path)
        # Beyond the held alternative's own states, each character may step the few digits of
        # a middle still being read (after an "m"), never a state per alternative.
        assert many <= one + 4 * len(path), (path, one, many)
        assert many < 64 * one / 4, (path, one, many)


def test_explain_compiles_each_rule_glob_once_however_many_files_it_explains(
    tmp_path: Path,
) -> None:
    """Bounded by rules x alternatives, not files x rules x alternatives: the tokens made by
    compiling are those of each distinct (dialect, pattern) once, for the first explained file,
    and none for the next ones (the sidecar's chain and every agent's simulation included)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    rules = 20
    options = ",".join(f"m{j}" for j in range(64))
    folders = {
        ".github/instructions": ("{i}.instructions.md", 'applyTo: "{glob}"'),
        ".claude/rules": ("{i}.md", 'paths: ["{glob}"]'),
        ".cursor/rules": ("{i}.mdc", "globs: {glob}"),
    }
    for folder, (name, front) in folders.items():
        (root / folder).mkdir(parents=True)
        for i in range(rules):
            # A pattern of its own per test run: the compiled-glob cache is the process's.
            glob = f"**/{{{options}}}-{i}-{tmp_path.name}/**/*.py"
            text = f"---\n{front.format(glob=glob)}\n---\nRule {i}.\n"
            (root / folder / name.format(i=i)).write_text(text)
    deep = root / "a" / "b"
    deep.mkdir(parents=True)
    files = [deep / f"x{n}.py" for n in range(5)]
    for file in files:
        file.write_text("")
    home = tmp_path / "home"
    home.mkdir()
    settings_ = parse_settings(
        {"instructions": {"ruleSets": ["copilot", "claude", "cursor"]}}
    ).instructions
    tokens_per_alternative = len(globs._tokens(f"**/m10-0-{tmp_path.name}/**/*.py"))
    made = []
    for file in files:
        with counted("compiling") as count:
            explanation = explain_file(
                str(file), settings_, LOCAL_FS, dsh_home=str(home), home=str(home), env={}
            )
        made.append(count.count)
        # The rules are really read and matched (none matches the file).
        states = {
            f.state
            for agent in explanation.agents
            for f in agent.files
            if f.path.startswith(str(root / ".claude"))
        }
        assert states == {"unmatched"}, states
    assert made[0] > 0
    assert made[0] <= 3 * rules * 64 * (tokens_per_alternative + 1), made
    assert made[1:] == [0] * (len(files) - 1), made


@contextmanager
def counted(which: str) -> Iterator[globs.StepCount]:
    count = globs.StepCount()
    setattr(globs, which, count)
    try:
        yield count
    finally:
        setattr(globs, which, None)


@pytest.mark.parametrize("below", BELOW)
def test_no_alternative_and_the_empty_one(below: str) -> None:
    assert not globs._run_merged(globs._merge((), below), "")
    assert not globs._run_merged(globs._merge((), below), "a")
    empty = globs._merge(((),), below)
    assert globs._run_merged(empty, "") is (below != "only")
    assert globs._run_merged(empty, "/a") is bool(below)
    assert not globs._run_merged(empty, "a")


def test_the_cache_keeps_at_most_its_node_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs, "CACHE_NODES", 200)
    monkeypatch.setattr(globs, "_cache", type(globs._cache)())
    monkeypatch.setattr(globs, "_cache_nodes", 0)
    for i in range(50):
        assert globs.compile_glob(f"src{i}/{{a,b,c}}/**/*.py") is not None
    assert 0 < globs._cache_nodes <= 200
    assert globs._cache_nodes == sum(globs._nodes(g) for g in globs._cache.values())
    # The most recent pattern is still kept; the first ones made room.
    assert ("root", "src49/{a,b,c}/**/*.py") in globs._cache
    assert ("root", "src0/{a,b,c}/**/*.py") not in globs._cache


# --- the scanners that jump from one special character to the next -----------------------------
# Each is held to a plain loop over every character, written here the straightforward way.

SCANNED = st.lists(
    st.sampled_from(["a", " ", ",", "{", "}", "'", '"', "#", " #", "b"]), max_size=14
)


def every_char_split(text: str, quotes: bool, guarded: bool) -> list[str]:
    parts, current, depth, quote = [], "", 0, None
    for char in text:
        if quote:
            if char == quote:
                quote = None
        elif quotes and char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}" and (depth or not guarded):
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]


def every_char_first_group(text: str) -> tuple[int, int] | None:
    opened: list[int] = []
    first = None
    for index, char in enumerate(text):
        if char == "{":
            opened.append(index)
        elif char == "}" and opened:
            start = opened.pop()
            if first is None or start < first[0]:
                first = (start, index)
    return first


def every_char_strip_comment(raw: str) -> str:
    quote = None
    for index, char in enumerate(raw):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or raw[index - 1] in " \t"):
            return raw[:index].rstrip()
    return raw.strip()


@settings(max_examples=examples(1000))
@given(SCANNED.map("".join))
def test_the_scanners_decide_what_a_loop_over_every_character_decides(text: str) -> None:
    assert globs.split_patterns(text) == [
        p.strip() for p in every_char_split(text, quotes=False, guarded=True) if p.strip()
    ]
    assert globs.split_top_level(text) == every_char_split(text, quotes=False, guarded=False)
    assert globs._first_group(text) == every_char_first_group(text)
    assert frontmatter._split_inline(text) == [
        p.strip() for p in every_char_split(text, quotes=True, guarded=True)
    ]
    assert frontmatter._strip_comment(text) == every_char_strip_comment(text)

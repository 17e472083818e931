"""Baseline load: read, per-directory trimmed dedup, budget, exact text.

Upstream behaviour: docs/reference/agent-instructions.md, Baseline candidates, through Templates.

Expected texts are spelled out from the reference templates; budgets on a boundary are derived
from the literal expected text, never from the renderer.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from tests.support.instrkit import INTRO, instructions, load, states, write_tree
from tests.support.property_budget import examples

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.baseline import (
    DUPLICATE,
    FILE_STATES,
    INCLUDED,
    OMITTED,
    OVERSIZED,
    TRUNCATED,
    UNREADABLE,
    dedup_per_directory,
)
from dsh_sidecar.sources.agent_instructions.digests import sha1_hex

OPEN = "<system-reminder>\n"
CLOSE = "\n</system-reminder>"
COMPACT = "Workspace instructions were omitted or truncated to fit the configured byte budget."
REPLACES = (
    "This complete workspace instruction baseline replaces all earlier workspace instruction "
    "baselines. "
)


def section(path: str, content: str) -> str:
    return f"Instructions from: {path}\n\n{content}"


def framed(*blocks: str) -> str:
    return OPEN + "\n\n".join(blocks) + CLOSE


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def self_sized(template: Callable[[int], str]) -> int:
    """The budget n for which ``template(n)`` is exactly n bytes (n appears in the marker)."""
    n = 100
    for _ in range(10):
        size = nbytes(template(n))
        if size == n:
            return n
        n = size
    raise AssertionError("no fixed point")


def sample(tmp_path: Path) -> tuple[Path, Path]:
    """A user-global file, a root with a duplicate sibling, a package with a local overlay."""
    write_tree(
        tmp_path,
        {
            "home/AGENTS.md": "global rule\n",
            "p/.git/": "",
            "p/AGENTS.md": "root rule\n",
            "p/CLAUDE.md": "  root rule",  # equal to AGENTS.md after JS trim
            "p/pkg/AGENTS.md": "pkg rule",
            "p/pkg/AGENTS.local.md": "local\n",
        },
    )
    return tmp_path / "p/pkg", tmp_path / "home"


# --- exact text -------------------------------------------------------------------------------


def test_sample_tree_exact_text(tmp_path: Path) -> None:
    cwd, home = sample(tmp_path)
    result = load(cwd, home)
    assert result.text == (
        "<system-reminder>\n"
        + INTRO
        + "\n\nInstructions from: $DSH_HOME/AGENTS.md\n\nglobal rule\n"
        "\n\nInstructions from: AGENTS.md\n\nroot rule\n"
        "\n\nInstructions from: pkg/AGENTS.md\n\npkg rule"
        "\n\nInstructions from: pkg/AGENTS.local.md\n\nlocal\n"
        "\n</system-reminder>"
    )
    assert states(result) == [
        ("$DSH_HOME/AGENTS.md", INCLUDED),
        ("AGENTS.md", INCLUDED),
        ("CLAUDE.md", DUPLICATE),
        ("pkg/AGENTS.md", INCLUDED),
        ("pkg/AGENTS.local.md", INCLUDED),
    ]
    assert result.project_root == os.path.realpath(tmp_path / "p")
    assert result.excluded_scopes == frozenset({".\0CLAUDE.md"})
    assert [f.candidate.scope for f in result.retained] == [
        "user-global\0AGENTS.md",
        ".\0AGENTS.md",
        "pkg\0AGENTS.md",
        "pkg\0AGENTS.local.md",
    ]


def test_default_home_shows_as_tilde_in_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_tree(tmp_path, {".dsh/AGENTS.md": "g", "p/.git/": "", "p/AGENTS.md": "r"})
    home = InstructionSettings().home({})
    assert home == str(tmp_path / ".dsh")
    result = load(tmp_path / "p", Path(home))
    assert result.text == framed(INTRO, section("~/.dsh/AGENTS.md", "g"), section("AGENTS.md", "r"))


def test_replacement_intro(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "r"})
    result = load(tmp_path / "p", tmp_path / "h", replace_previous=True)
    assert result.text == framed(REPLACES + INTRO, section("AGENTS.md", "r"))


def test_no_files_means_no_baseline(tmp_path: Path) -> None:
    # Upstream emits nothing when nothing is found, not a frame with only the intro
    # (docs/reference/agent-instructions.md, Compose, step 4).
    write_tree(tmp_path, {"p/.git/": "", "p/pkg/": ""})
    result = load(tmp_path / "p/pkg", tmp_path / "h")
    assert result.text == ""
    assert result.entries == () and result.retained == ()
    assert result.result.omitted == () and result.result.truncated == ()


def test_empty_file_renders_a_heading_with_a_trailing_blank_line(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": ""})
    result = load(tmp_path / "p", tmp_path / "h")
    assert result.text == framed(INTRO, "Instructions from: AGENTS.md\n\n")
    assert states(result) == [("AGENTS.md", INCLUDED)]


def test_disabled_budget_renders_nothing_and_omits_all(tmp_path: Path) -> None:
    cwd, home = sample(tmp_path)
    for settings in (instructions(maxBytes=0), instructions(enabled=False)):
        result = load(cwd, home, settings)
        assert result.text == ""
        assert result.retained == ()
        assert result.result.omitted == (
            "$DSH_HOME/AGENTS.md",
            "AGENTS.md",
            "pkg/AGENTS.md",
            "pkg/AGENTS.local.md",
        )
        assert {e.state for e in result.entries} == {OMITTED, DUPLICATE}


# --- escaping ---------------------------------------------------------------------------------


def test_closing_tag_is_escaped_in_content_and_in_a_directory_name(tmp_path: Path) -> None:
    # A name cannot hold "/", but two nested directories "<" and "system-reminder>" spell the tag.
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "before </system-reminder> after </SYSTEM-REMINDER>",
            "p/</system-reminder>/AGENTS.md": "nested",
        },
    )
    result = load(tmp_path / "p/</system-reminder>", tmp_path / "h")
    assert result.text == (
        "<system-reminder>\n"
        + INTRO
        + "\n\nInstructions from: AGENTS.md\n\nbefore <\\/system-reminder> after <\\/SYSTEM-REMINDER>"
        "\n\nInstructions from: <\\/system-reminder>/AGENTS.md\n\nnested"
        "\n</system-reminder>"
    )
    assert result.text.count("</system-reminder>") == 1
    assert result.text.lower().count("</system-reminder>") == 1
    # The scope and the digest keep the real name and the real content.
    assert result.retained[1].candidate.scope == "</system-reminder>\0AGENTS.md"
    assert result.retained[0].digest == sha1_hex(
        "before </system-reminder> after </SYSTEM-REMINDER>"
    )


# --- per-directory trimmed dedup --------------------------------------------------------------


def test_identical_after_trim_collapses_to_the_first_candidate(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "\n rule \n", "p/CLAUDE.md": "rule"})
    result = load(tmp_path / "p", tmp_path / "h")
    assert states(result) == [("AGENTS.md", INCLUDED), ("CLAUDE.md", DUPLICATE)]
    assert result.text == framed(INTRO, section("AGENTS.md", "\n rule \n"))  # untrimmed bytes
    duplicate = result.entries[1]
    assert duplicate.reason == "same content as AGENTS.md (after trimming whitespace)"
    assert duplicate.digest == sha1_hex("rule") and duplicate.bytes == 4
    assert result.excluded_scopes == frozenset({".\0CLAUDE.md"})


def test_differing_content_both_load(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "one", "p/CLAUDE.md": "two"})
    assert states(load(tmp_path / "p", tmp_path / "h")) == [
        ("AGENTS.md", INCLUDED),
        ("CLAUDE.md", INCLUDED),
    ]


def test_same_content_in_different_directories_both_load(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "same", "p/pkg/AGENTS.md": "same"})
    result = load(tmp_path / "p/pkg", tmp_path / "h")
    assert states(result) == [("AGENTS.md", INCLUDED), ("pkg/AGENTS.md", INCLUDED)]
    assert result.text == framed(
        INTRO, section("AGENTS.md", "same"), section("pkg/AGENTS.md", "same")
    )


def test_user_global_and_root_with_the_same_content_both_load(tmp_path: Path) -> None:
    write_tree(tmp_path, {"h/AGENTS.md": "same", "p/.git/": "", "p/AGENTS.md": "same"})
    assert states(load(tmp_path / "p", tmp_path / "h")) == [
        ("$DSH_HOME/AGENTS.md", INCLUDED),
        ("AGENTS.md", INCLUDED),
    ]


def test_a_sibling_symlink_collapses_by_content(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "rule\n"})
    (tmp_path / "p/CLAUDE.md").symlink_to("AGENTS.md")
    result = load(tmp_path / "p", tmp_path / "h")
    assert states(result) == [("AGENTS.md", INCLUDED), ("CLAUDE.md", DUPLICATE)]
    assert result.entries[1].target == os.path.realpath(tmp_path / "p/AGENTS.md")


def test_dedup_uses_js_trim_feff_collapses(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "rule", "p/CLAUDE.md": "rule\ufeff"})
    assert states(load(tmp_path / "p", tmp_path / "h")) == [
        ("AGENTS.md", INCLUDED),
        ("CLAUDE.md", DUPLICATE),
    ]


def test_dedup_uses_js_trim_u0085_does_not_collapse(tmp_path: Path) -> None:
    # Python's str.strip() would remove U+0085 and wrongly merge these two.
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "rule", "p/CLAUDE.md": "rule\u0085"})
    assert states(load(tmp_path / "p", tmp_path / "h")) == [
        ("AGENTS.md", INCLUDED),
        ("CLAUDE.md", INCLUDED),
    ]


def test_dedup_per_directory_returns_kept_and_twins(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/AGENTS.md": "a", "p/CLAUDE.md": " a ", "p/AGENTS.local.md": "a\n"},
    )
    result = load(tmp_path / "p", tmp_path / "h")
    kept, dropped = dedup_per_directory(list(result.observed))
    assert [f.candidate.name for f in kept] == ["AGENTS.md"]
    assert [(f.candidate.name, twin.candidate.name) for f, twin in dropped] == [
        ("CLAUDE.md", "AGENTS.md"),
        ("AGENTS.local.md", "AGENTS.md"),
    ]


# --- read failures drop only that file --------------------------------------------------------


def test_failed_reads_are_reported_and_siblings_still_load(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "x" * 101,
            "p/CLAUDE.md": b"bad \xff utf8",
            "p/AGENTS.local.md": b"bin\0ary",
            "p/CLAUDE.local.md": "fine",
        },
    )
    result = load(tmp_path / "p", tmp_path / "h", instructions(maxSourceBytes=100))
    assert states(result) == [
        ("AGENTS.md", OVERSIZED),
        ("CLAUDE.md", UNREADABLE),
        ("AGENTS.local.md", UNREADABLE),
        ("CLAUDE.local.md", INCLUDED),
    ]
    reasons = [e.reason or "" for e in result.entries]
    assert reasons[0] == "oversized: 101 bytes"
    assert reasons[1].startswith("invalid-utf8: ")
    assert reasons[2] == "binary: NUL byte in the first 8 KiB"
    assert result.text == framed(INTRO, section("CLAUDE.local.md", "fine"))
    # Failed reads are not "observed": they never join the excluded scopes.
    assert result.excluded_scopes == frozenset()


class EioOn(LocalFileSystem):
    """EIO on stat for one path: an unavailable probe, which root cannot provoke by chmod."""

    def __init__(self, broken: str) -> None:
        self.broken = broken

    def stat(self, path: str) -> os.stat_result:
        if path == self.broken:
            raise OSError(errno.EIO, os.strerror(errno.EIO), path)
        return super().stat(path)


def test_unavailable_probe_skips_only_that_candidate(tmp_path: Path) -> None:
    write_tree(tmp_path, {"h/AGENTS.md": "g", "p/.git/": "", "p/AGENTS.md": "r"})
    fs = EioOn(str(tmp_path / "h/AGENTS.md"))
    result = load(tmp_path / "p", tmp_path / "h", fs=fs)
    assert states(result) == [("$DSH_HOME/AGENTS.md", UNREADABLE), ("AGENTS.md", INCLUDED)]
    assert result.entries[0].reason == "EIO: Input/output error"
    assert result.entries[0].bytes is None
    assert result.text == framed(INTRO, section("AGENTS.md", "r"))


# --- budget -----------------------------------------------------------------------------------


def test_budget_omits_the_broader_files_first(tmp_path: Path) -> None:
    cwd, home = sample(tmp_path)

    def expected(n: int) -> str:
        return framed(
            f"Workspace instruction budget {n} bytes: omitted $DSH_HOME/AGENTS.md, AGENTS.md",
            INTRO,
            section("pkg/AGENTS.md", "pkg rule"),
            section("pkg/AGENTS.local.md", "local\n"),
        )

    n = self_sized(expected)
    result = load(cwd, home, instructions(maxBytes=n))
    assert result.text == expected(n)
    assert nbytes(result.text) == n
    assert result.result.omitted == ("$DSH_HOME/AGENTS.md", "AGENTS.md")
    assert [f.candidate.scope for f in result.retained] == [
        "pkg\0AGENTS.md",
        "pkg\0AGENTS.local.md",
    ]
    assert result.excluded_scopes == frozenset(
        {"user-global\0AGENTS.md", ".\0AGENTS.md", ".\0CLAUDE.md"}
    )
    assert states(result) == [
        ("$DSH_HOME/AGENTS.md", OMITTED),
        ("AGENTS.md", OMITTED),
        ("CLAUDE.md", DUPLICATE),
        ("pkg/AGENTS.md", INCLUDED),
        ("pkg/AGENTS.local.md", INCLUDED),
    ]
    assert result.entries[0].reason == "omitted by the byte budget"

    # One byte less and the next broader file goes too.
    smaller = load(cwd, home, instructions(maxBytes=n - 1))
    assert smaller.result.omitted == ("$DSH_HOME/AGENTS.md", "AGENTS.md", "pkg/AGENTS.md")
    assert [f.candidate.scope for f in smaller.retained] == ["pkg\0AGENTS.local.md"]


def test_budget_truncates_the_most_specific_file_last(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "a" * 50, "p/CLAUDE.md": "b" * 200})
    budget = 300

    def expected(kept: int) -> str:
        marker = (
            f"Workspace instruction budget {budget} bytes: omitted AGENTS.md; "
            f"truncated CLAUDE.md from 200 to {kept} bytes"
        )
        return framed(marker, COMPACT, section("CLAUDE.md", "b" * kept))

    # The normal intro alone leaves no room, so the compact intro is the one that fits.
    assert nbytes(framed("x" * 60, INTRO, section("CLAUDE.md", ""))) > budget
    kept = max(k for k in range(201) if nbytes(expected(k)) <= budget)
    assert 0 < kept < 200
    result = load(tmp_path / "p", tmp_path / "h", instructions(maxBytes=budget))
    assert result.text == expected(kept)
    assert states(result) == [("AGENTS.md", OMITTED), ("CLAUDE.md", TRUNCATED)]
    truncated = result.entries[1]
    assert truncated.included_bytes == kept and truncated.bytes == 200
    assert truncated.reason == f"truncated from 200 to {kept} bytes by the budget"
    assert [f.candidate.scope for f in result.retained] == [".\0CLAUDE.md"]
    assert result.excluded_scopes == frozenset({".\0AGENTS.md"})


def test_truncated_to_zero_is_not_retained(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "x" * 1000})
    result = load(tmp_path / "p", tmp_path / "h", instructions(maxBytes=100))
    assert (
        result.text
        == "Workspace instruction budget 100 bytes: truncated AGENTS.md from 1000 to 0 bytes"
    )
    assert states(result) == [("AGENTS.md", TRUNCATED)]
    assert result.retained == ()
    assert result.excluded_scopes == frozenset({".\0AGENTS.md"})


def test_every_state_name_is_in_file_states() -> None:
    assert FILE_STATES == (
        "included",
        "truncated",
        "omitted",
        "duplicate",
        "oversized",
        "unreadable",
        "ignored",
        "outside-project",
        "overridden",
    )


# --- property: the preview never exceeds the budget -------------------------------------------

_NAMES = st.sampled_from(["AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"])
_PIECES = st.sampled_from(
    ["rule", " ", "\n", "\ufeff", "\u0085", "é", "€", "\U0001f600", "</system-reminder>", "x" * 40]
)
_CONTENT = st.lists(_PIECES, max_size=30).map("".join)
_DIRS = st.sampled_from(["", "a", "a/b", "a/b/c", "a/</system-reminder>"])
_FILES = st.dictionaries(st.tuples(_DIRS, _NAMES), _CONTENT, max_size=8)
_BUDGET = st.one_of(
    st.integers(min_value=-5, max_value=1500),
    st.floats(min_value=0.5, max_value=1500.0, allow_nan=False),
)


@hsettings(max_examples=examples(150), deadline=None)
@given(
    files=_FILES,
    user_global=st.one_of(st.none(), _CONTENT),
    cwd=_DIRS,
    max_bytes=_BUDGET,
)
def test_preview_text_never_exceeds_the_budget(
    files: dict[tuple[str, str], str], user_global: str | None, cwd: str, max_bytes: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        tree: dict[str, str | bytes] = {"p/.git/": "", f"p/{cwd}/".replace("//", "/"): ""}
        for (directory, name), content in files.items():
            tree[os.path.join("p", directory, name)] = content
        if user_global is not None:
            tree["home/AGENTS.md"] = user_global
        write_tree(base, tree)
        result = load(base / "p" / cwd, base / "home", instructions(maxBytes=max_bytes))
    if max_bytes <= 0:
        assert result.text == ""
    else:
        assert len(result.text.encode("utf-8")) <= max_bytes
    assert result.text.count("</system-reminder>") <= 1
    # Every retained file was read, and retention never exceeds what dedup kept.
    assert set(result.retained) <= set(result.kept) <= set(result.observed)

"""Project root, candidate chain, display paths, scope keys, digests, identity.

Upstream behaviour: docs/reference/agent-instructions.md, Paths and scopes; the same page's
Baseline identity, Project root, Baseline candidates and Digests.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tests.support.instrkit import instructions, load, write_tree
from tests.support.property_budget import examples

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.digests import sha1_hex, trimmed_digest
from dsh_sidecar.sources.agent_instructions.discovery import (
    ancestor_chain,
    baseline_identity,
    chain_candidates,
    descendant_dirs_between,
    directory_candidates,
    find_project_root,
    scoped_ancestors,
    user_global_candidate,
)
from dsh_sidecar.sources.agent_instructions.paths import (
    relative_path,
    scope_abs_path,
    scope_dir_of_directory,
    scope_dir_of_display,
    scope_key,
    split_scope,
)

DEFAULT_MARKERS = (".git",)


def real(path: Path) -> str:
    return os.path.realpath(path)


# --- project root -----------------------------------------------------------------------------


def test_git_directory_marks_the_root(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/a/b/": ""})
    assert find_project_root(str(tmp_path / "p/a/b"), DEFAULT_MARKERS, LOCAL_FS) == real(
        tmp_path / "p"
    )


def test_git_file_marks_the_root_as_in_a_worktree(tmp_path: Path) -> None:
    write_tree(tmp_path, {"wt/.git": "gitdir: /elsewhere/.git/worktrees/wt\n", "wt/src/": ""})
    assert find_project_root(str(tmp_path / "wt/src"), DEFAULT_MARKERS, LOCAL_FS) == real(
        tmp_path / "wt"
    )


def test_the_nearest_marker_wins(tmp_path: Path) -> None:
    write_tree(tmp_path, {"outer/.git/": "", "outer/inner/.git": "", "outer/inner/x/": ""})
    root = find_project_root(str(tmp_path / "outer/inner/x"), DEFAULT_MARKERS, LOCAL_FS)
    assert root == real(tmp_path / "outer/inner")


def test_without_a_marker_the_root_is_cwd(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/b/": ""})
    assert not any(os.path.exists(os.path.join(p, ".git")) for p in ancestor_dirs(tmp_path))
    assert find_project_root(str(tmp_path / "a/b"), DEFAULT_MARKERS, LOCAL_FS) == real(
        tmp_path / "a/b"
    )


def ancestor_dirs(path: Path) -> list[str]:
    current, out = os.path.realpath(path), []
    while True:
        out.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            return out
        current = parent


def test_custom_markers_in_configured_order(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/pyproject.toml": "", "p/.git/": "", "p/sub/package.json": "{}"})
    cwd = str(tmp_path / "p/sub")
    markers = ("pyproject.toml", "package.json")
    assert find_project_root(cwd, markers, LOCAL_FS) == real(tmp_path / "p/sub")
    assert find_project_root(cwd, ("pyproject.toml",), LOCAL_FS) == real(tmp_path / "p")


def test_no_markers_means_the_root_is_always_cwd(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/sub/": ""})
    assert find_project_root(str(tmp_path / "p/sub"), (), LOCAL_FS) == real(tmp_path / "p/sub")


def test_a_broken_or_looping_marker_does_not_count_and_the_walk_continues(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/sub/": ""})
    (tmp_path / "p/sub/.git").symlink_to(tmp_path / "p/sub/.git")  # ELOOP: an error, not a marker
    assert find_project_root(str(tmp_path / "p/sub"), DEFAULT_MARKERS, LOCAL_FS) == real(
        tmp_path / "p"
    )


def test_root_is_found_from_the_real_path_of_cwd(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/sub/": ""})
    (tmp_path / "alias").symlink_to(tmp_path / "p/sub")
    assert find_project_root(str(tmp_path / "alias"), DEFAULT_MARKERS, LOCAL_FS) == real(
        tmp_path / "p"
    )


# --- chain ------------------------------------------------------------------------------------


def test_ancestor_chain_is_root_first_cwd_last() -> None:
    assert ancestor_chain("/r", "/r") == ["/r"]
    assert ancestor_chain("/r", "/r/a/b") == ["/r", "/r/a", "/r/a/b"]


def joined_chain(root: str, cwd: str) -> list[str]:
    """The ancestor chain as it was built before: one ``os.path.join`` per part."""
    rel = relative_path(cwd, root)
    chain = [root]
    if rel == ".":
        return chain
    current = root
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        chain.append(current)
    return chain


def outcome(call: Callable[..., object], *args: object) -> object:
    try:
        return call(*args)
    except ValueError as exc:
        return ("error", str(exc))


# Path parts: names, what makes a path not plain, and a space and a line break.
PATH_PARTS = st.lists(st.sampled_from(["a", "b", "d", "x y", "n\nl", ".", "..", ""]), max_size=6)


@given(root=PATH_PARTS, below=PATH_PARTS, absolute=st.booleans(), inside=st.booleans())
@settings(max_examples=examples(300))
def test_candidates_are_cut_from_one_relative_path_as_each_would_be_computed(
    root: list[str], below: list[str], absolute: bool, inside: bool
) -> None:
    # Each directory of the chain and its scope directory, and each candidate's path, display
    # path and scope key, are what joining and asking relative_path of each gives: roots and
    # working directories plain or not, below the root or beside it, absolute or relative.
    top = ("/" if absolute else "") + "/".join(root)
    assume(top)  # a root is a path
    cwd = "/".join([top, *below]) if inside else ("/" if absolute else "") + "/".join(below)
    chain = outcome(joined_chain, top, cwd)
    scoped = outcome(scoped_ancestors, top, cwd)
    if not isinstance(chain, list):
        assert scoped == chain
        return
    assert scoped == [(d, scope_dir_of_directory(top, d)) for d in chain]
    assert ancestor_chain(top, cwd) == chain
    settings_ = instructions(localInstructionFileCandidates=["AGENTS.local.md", ".hidden.md"])
    cands = chain_candidates(top, cwd, settings_, "/h")[1:]
    expected = [
        (os.path.join(d, n), relative_path(os.path.join(d, n), top), d, n)
        for d in chain
        for n in (*settings_.directory_names, *settings_.local_candidates)
    ]
    unique = list({e[0]: e for e in expected}.values())  # path-deduplicated
    assert [(c.abs_path, c.display_path, c.directory, c.name) for c in cands] == unique
    for c in cands:
        assert c.scope == scope_key(scope_dir_of_directory(top, c.directory), c.name)


def test_descendant_dirs_between() -> None:
    assert list(descendant_dirs_between("/c", "/c/a/b/f.py")) == ["/c/a", "/c/a/b"]
    assert list(descendant_dirs_between("/c", "a/f.py")) == ["/c/a"]  # relative to the session cwd
    assert list(descendant_dirs_between("/c", "/c/f.py")) == []
    assert list(descendant_dirs_between("/c", "/elsewhere/f.py")) == []
    # Upstream's prefix test also drops a child literally named "..foo"; kept for fidelity.
    assert list(descendant_dirs_between("/c", "/c/..foo/f.py")) == []


def test_candidate_order_user_global_then_base_then_local_per_directory(tmp_path: Path) -> None:
    s = instructions(
        instructionFileCandidates=["CLAUDE.md", "AGENTS.md"],
        localInstructionFileCandidates=["CLAUDE.local.md", "AGENTS.local.md"],
    )
    cands = chain_candidates("/r", "/r/pkg", s, "/h")
    assert [(c.display_path, c.scope) for c in cands] == [
        ("$DSH_HOME/AGENTS.md", "user-global\0AGENTS.md"),
        ("CLAUDE.md", ".\0CLAUDE.md"),
        ("AGENTS.md", ".\0AGENTS.md"),
        ("CLAUDE.local.md", ".\0CLAUDE.local.md"),
        ("AGENTS.local.md", ".\0AGENTS.local.md"),
        ("pkg/CLAUDE.md", "pkg\0CLAUDE.md"),
        ("pkg/AGENTS.md", "pkg\0AGENTS.md"),
        ("pkg/CLAUDE.local.md", "pkg\0CLAUDE.local.md"),
        ("pkg/AGENTS.local.md", "pkg\0AGENTS.local.md"),
    ]
    assert [c.is_local for c in cands[1:5]] == [False, False, True, True]
    assert cands[0].user_global and not cands[1].user_global


def test_candidate_lists_do_not_apply_to_the_user_global_file() -> None:
    s = instructions(instructionFileCandidates=["RULES.md"], localInstructionFileCandidates=[])
    cands = chain_candidates("/r", "/r", s, "/h")
    assert [c.abs_path for c in cands] == ["/h/AGENTS.md", "/r/RULES.md"]


def test_filtered_candidates_never_reach_the_chain() -> None:
    s = instructions(instructionFileCandidates=["../AGENTS.md", "..", "", "ok.md"])
    assert [c.name for c in directory_candidates("/r", "/r", s)] == [
        "ok.md",
        "AGENTS.local.md",
        "CLAUDE.local.md",
    ]


def test_path_dedup_when_dsh_home_is_the_project_root(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "shared\n", "p/CLAUDE.md": "claude\n"})
    root = real(tmp_path / "p")
    cands = chain_candidates(root, root, InstructionSettings(), root)
    assert [c.display_path for c in cands][:2] == ["$DSH_HOME/AGENTS.md", "CLAUDE.md"]
    assert sum(c.abs_path == os.path.join(root, "AGENTS.md") for c in cands) == 1
    result = load(tmp_path / "p", Path(root))
    assert [f.candidate.scope for f in result.kept] == ["user-global\0AGENTS.md", ".\0CLAUDE.md"]
    assert "Instructions from: $DSH_HOME/AGENTS.md\n\nshared\n" in result.text
    assert "Instructions from: AGENTS.md" not in result.text


def test_symlinked_names_are_not_path_deduplicated(tmp_path: Path) -> None:
    # pkg/CLAUDE.md is the root AGENTS.md under another name in another directory: dedup is by
    # joined path (different) and by content per directory (different directories), so both load.
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "rule\n", "p/pkg/": ""})
    (tmp_path / "p/pkg/CLAUDE.md").symlink_to(tmp_path / "p/AGENTS.md")
    result = load(tmp_path / "p/pkg", tmp_path / "home")
    assert [f.candidate.display_path for f in result.kept] == ["AGENTS.md", "pkg/CLAUDE.md"]
    assert result.kept[0].probe.target == result.kept[1].probe.target


# --- display paths ----------------------------------------------------------------------------


def test_default_home_displays_as_tilde(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("DSH_HOME", raising=False)
    home = InstructionSettings().home()
    assert home == str(tmp_path / ".dsh")
    assert user_global_candidate(home).display_path == "~/.dsh/AGENTS.md"
    # DSH_HOME spelled as the default still resolves to it, so it still displays as ~/.dsh.
    monkeypatch.setenv("DSH_HOME", "~/.dsh")
    assert user_global_candidate(InstructionSettings().home()).display_path == "~/.dsh/AGENTS.md"


def test_other_homes_display_as_the_literal_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "elsewhere"))
    assert user_global_candidate(InstructionSettings().home()).display_path == (
        "$DSH_HOME/AGENTS.md"
    )
    # Even when DSH_HOME is unset: an explicit setting that is not the default shows the same.
    monkeypatch.delenv("DSH_HOME")
    explicit = instructions(dshHome="~/.dsh-other")
    assert user_global_candidate(explicit.home()).display_path == "$DSH_HOME/AGENTS.md"


def test_project_display_paths_are_relative_to_the_root() -> None:
    cands = chain_candidates("/r", "/r/a/b", InstructionSettings(), "/h")
    displays = [c.display_path for c in cands]
    assert "AGENTS.md" in displays and "a/b/CLAUDE.local.md" in displays
    assert not any(os.path.isabs(d) for d in displays)


# --- scope keys -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("display", "name", "key"),
    [
        ("AGENTS.md", "AGENTS.md", ".\u0000AGENTS.md"),
        ("pkg/CLAUDE.local.md", "CLAUDE.local.md", "pkg\u0000CLAUDE.local.md"),
        ("pkg/app/AGENTS.md", "AGENTS.md", "pkg/app\u0000AGENTS.md"),
        ("~/.dsh/AGENTS.md", "AGENTS.md", "user-global\u0000AGENTS.md"),
        ("$DSH_HOME/AGENTS.md", "AGENTS.md", "user-global\u0000AGENTS.md"),
    ],
)
def test_scope_keys(display: str, name: str, key: str) -> None:
    assert scope_key(scope_dir_of_display(display), name) == key
    assert split_scope(key) == (scope_dir_of_display(display), name)


def test_scope_key_maps_back_to_a_path() -> None:
    assert scope_abs_path("user-global\0AGENTS.md", "/r", "/h") == "/h/AGENTS.md"
    assert scope_abs_path(".\0CLAUDE.md", "/r", "/h") == "/r/CLAUDE.md"
    assert scope_abs_path("a/b\0AGENTS.local.md", "/r", "/h") == "/r/a/b/AGENTS.local.md"


def test_split_scope_splits_at_the_first_nul() -> None:
    assert split_scope("a\0b\0c") == ("a", "b\0c")


def test_chain_scope_keys_contain_exactly_one_nul() -> None:
    for c in chain_candidates("/r", "/r/x", InstructionSettings(), "/h"):
        assert c.scope.count("\0") == 1
        assert c.scope.endswith("\0" + c.name)


# --- digests ----------------------------------------------------------------------------------


def test_digest_vectors() -> None:
    assert sha1_hex("repo rule") == "9538a14d03e2db0031a3dbb5a9dc48d28eed151d"
    assert sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert sha1_hex("  shared repo rule\n\n").startswith("42e91b76")
    assert trimmed_digest("  shared repo rule\n\n") == "cac0b96544c47555f887ada46ab67bad4641798f"
    assert sha1_hex("shared repo rule") == "cac0b96544c47555f887ada46ab67bad4641798f"


def test_digest_is_over_utf8_bytes() -> None:
    assert sha1_hex("é") == hashlib.sha1("é".encode()).hexdigest()


def test_loaded_files_carry_both_digests_of_the_whole_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "  shared repo rule\n\n"})
    (loaded,) = load(tmp_path / "p", tmp_path / "home").kept
    assert loaded.digest == sha1_hex("  shared repo rule\n\n")
    assert loaded.trimmed == "cac0b96544c47555f887ada46ab67bad4641798f"


# --- baselineIdentity -------------------------------------------------------------------------

DEFAULT_IDENTITY = (
    '{"projectRoot":"","projectRootMarkers":[".git"],"maxBytes":65536,"maxSourceBytes":1048576,'
    '"instructionFileCandidates":["AGENTS.md","CLAUDE.md"],'
    '"localInstructionFileCandidates":["AGENTS.local.md","CLAUDE.local.md"]}'
)


def test_identity_with_defaults_and_root_is_cwd() -> None:
    assert baseline_identity("/r", "/r", InstructionSettings()) == DEFAULT_IDENTITY


def test_identity_with_cwd_one_level_below_the_root() -> None:
    expected = DEFAULT_IDENTITY.replace('"projectRoot":""', '"projectRoot":".."')
    assert baseline_identity("/r", "/r/pkg", InstructionSettings()) == expected
    two = DEFAULT_IDENTITY.replace('"projectRoot":""', '"projectRoot":"../.."')
    assert baseline_identity("/r", "/r/a/b", InstructionSettings()) == two


def test_identity_from_a_real_load(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/pkg/": ""})
    assert load(tmp_path / "p", tmp_path / "h").identity == DEFAULT_IDENTITY
    expected = DEFAULT_IDENTITY.replace('"projectRoot":""', '"projectRoot":".."')
    assert load(tmp_path / "p/pkg", tmp_path / "h").identity == expected


def test_identity_uses_filtered_lists_js_numbers_and_ignores_dsh_home() -> None:
    s = instructions(
        maxBytes=1.5,
        maxSourceBytes=100,
        projectRootMarkers=["..", ".hg"],
        instructionFileCandidates=["..", "R.md"],
        localInstructionFileCandidates=[],
        dshHome="/somewhere",
    )
    assert baseline_identity("/r", "/r", s) == (
        '{"projectRoot":"","projectRootMarkers":["..",".hg"],"maxBytes":1.5,'
        '"maxSourceBytes":100,"instructionFileCandidates":["R.md"],'
        '"localInstructionFileCandidates":[]}'
    )
    other_home = instructions(
        maxBytes=1.5,
        maxSourceBytes=100,
        projectRootMarkers=["..", ".hg"],
        instructionFileCandidates=["..", "R.md"],
        localInstructionFileCandidates=[],
    )
    assert baseline_identity("/r", "/r", other_home) == baseline_identity("/r", "/r", s)


def test_identity_of_a_huge_budget_uses_js_exponent_form() -> None:
    assert '"maxBytes":1e+21,' in baseline_identity("/r", "/r", instructions(maxBytes=1e21))

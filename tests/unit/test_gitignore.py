"""Ignore-aware discovery: .gitignore files (git's precedence rules) and ``exclude`` patterns."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tests.support.instrkit import instructions, states, write_tree

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.baseline import IGNORED, load_document_chain
from dsh_sidecar.sources.agent_instructions.gitignore import (
    EXCLUDE_SOURCE,
    IgnoreHit,
    IgnoreMatcher,
    ParsedIgnoreFiles,
)


def matcher(root: Path, settings: InstructionSettings | None = None) -> IgnoreMatcher:
    return IgnoreMatcher(str(root), settings or InstructionSettings(), LOCAL_FS)


def test_node_modules_directory_is_ignored_with_its_pattern_and_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "# deps\nnode_modules/\n", "pkg/node_modules/dep/": ""})
    m = matcher(tmp_path)
    hit = m.check_directory(str(tmp_path / "pkg/node_modules/dep"))
    assert hit == IgnoreHit("node_modules/", ".gitignore", "pkg/node_modules/")
    assert hit.describe() == "pkg/node_modules/ ignored by 'node_modules/' (.gitignore)"
    assert m.check_candidate(str(tmp_path / "pkg/node_modules/dep/AGENTS.md")) == hit
    assert m.check_directory(str(tmp_path / "pkg")) is None
    assert m.check_candidate(str(tmp_path / "pkg/AGENTS.md")) is None


def test_the_root_and_outside_directories_are_never_ignored(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.gitignore": "*\n", "p/x/": ""})
    m = matcher(tmp_path / "p")
    assert m.check_directory(str(tmp_path / "p")) is None
    assert m.check_directory(str(tmp_path)) is None
    assert m.check_directory(str(tmp_path / "p/x")) is not None


def test_negation_re_includes_a_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "gen*/\n!gen-keep/\n", "gen-out/": "", "gen-keep/": ""})
    m = matcher(tmp_path)
    assert m.check_directory(str(tmp_path / "gen-out")) == IgnoreHit(
        "gen*/", ".gitignore", "gen-out/"
    )
    assert m.check_directory(str(tmp_path / "gen-keep")) is None


def test_last_matching_pattern_in_a_file_wins(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "!keep/\nkeep/\n", "keep/": ""})
    assert matcher(tmp_path).check_directory(str(tmp_path / "keep")) is not None


def test_nested_gitignore_applies_below_its_directory_only(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/.gitignore": "build/\n", "pkg/build/": "", "build/": ""})
    m = matcher(tmp_path)
    assert m.check_directory(str(tmp_path / "pkg/build")) == IgnoreHit(
        "build/", os.path.join("pkg", ".gitignore"), "pkg/build/"
    )
    assert m.check_directory(str(tmp_path / "build")) is None


def test_anchored_pattern_is_relative_to_its_gitignore(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "/out/\n", "out/": "", "pkg/out/": ""})
    m = matcher(tmp_path)
    assert m.check_directory(str(tmp_path / "out")) is not None
    assert m.check_directory(str(tmp_path / "pkg/out")) is None


def test_deeper_gitignore_overrides_the_root_one(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "vendor/\n",
            "pkg/.gitignore": "!vendor/\n",
            "pkg/vendor/": "",
            "lib/vendor/": "",
        },
    )
    m = matcher(tmp_path)
    assert m.check_directory(str(tmp_path / "pkg/vendor")) is None
    assert m.check_directory(str(tmp_path / "lib/vendor")) == IgnoreHit(
        "vendor/", ".gitignore", "lib/vendor/"
    )


def test_deeper_gitignore_can_ignore_what_the_root_re_included(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {".gitignore": "tmp*/\n!tmp-keep/\n", "pkg/.gitignore": "tmp-keep/\n", "pkg/tmp-keep/": ""},
    )
    hit = matcher(tmp_path).check_directory(str(tmp_path / "pkg/tmp-keep"))
    assert hit is not None and hit.source == os.path.join("pkg", ".gitignore")


def test_nothing_is_re_included_below_an_ignored_directory(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "out/\n!out/keep/\n",
            "out/.gitignore": "!keep/\n",  # inside an ignored directory: git never reads it
            "out/keep/deeper/": "",
        },
    )
    m = matcher(tmp_path)
    expected = IgnoreHit("out/", ".gitignore", "out/")
    assert m.check_directory(str(tmp_path / "out/keep")) == expected
    assert m.check_directory(str(tmp_path / "out/keep/deeper")) == expected
    assert m.check_candidate(str(tmp_path / "out/keep/AGENTS.md")) == expected


def test_instruction_files_themselves_are_never_filtered_by_gitignore(tmp_path: Path) -> None:
    # AGENTS.local.md overlays are usually git-ignored on purpose and must still load.
    write_tree(
        tmp_path,
        {
            ".git/": "",
            ".gitignore": "*.local.md\nAGENTS.md\n",
            "pkg/AGENTS.local.md": "local overlay\n",
            "pkg/AGENTS.md": "pkg rule\n",
        },
    )
    m = matcher(tmp_path)
    assert m.check_candidate(str(tmp_path / "pkg/AGENTS.local.md")) is None
    assert m.check_candidate(str(tmp_path / "pkg/AGENTS.md")) is None
    chain = load_document_chain(
        str(tmp_path / "pkg"), InstructionSettings(), LOCAL_FS, dsh_home=str(tmp_path / "h")
    )
    assert states(chain) == [("pkg/AGENTS.md", "included"), ("pkg/AGENTS.local.md", "included")]


def test_exclude_patterns_apply_to_directories_and_files(tmp_path: Path) -> None:
    write_tree(tmp_path, {"third_party/x/": "", "docs/": ""})
    s = instructions(exclude=["third_party/", "docs/AGENTS.md"])
    m = matcher(tmp_path, s)
    assert m.check_directory(str(tmp_path / "third_party/x")) == IgnoreHit(
        "third_party/", EXCLUDE_SOURCE, "third_party/"
    )
    assert m.check_candidate(str(tmp_path / "docs/AGENTS.md")) == IgnoreHit(
        "docs/AGENTS.md", EXCLUDE_SOURCE, "docs/AGENTS.md"
    )
    assert m.check_candidate(str(tmp_path / "docs/CLAUDE.md")) is None
    assert EXCLUDE_SOURCE == "settings: dsh.instructions.exclude"


def test_respect_gitignore_false_disables_gitignore_but_not_exclude(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "node_modules/\n", "node_modules/": "", "vendor/": ""})
    off = matcher(tmp_path, instructions(respectGitignore=False))
    assert not off.enabled
    assert off.check_directory(str(tmp_path / "node_modules")) is None
    assert off.check_candidate(str(tmp_path / "node_modules/AGENTS.md")) is None
    with_exclude = matcher(tmp_path, instructions(respectGitignore=False, exclude=["vendor/"]))
    assert with_exclude.check_directory(str(tmp_path / "node_modules")) is None
    assert with_exclude.check_directory(str(tmp_path / "vendor")) is not None


def test_a_bad_line_is_skipped_like_git_does(tmp_path: Path) -> None:
    # A lone "!" and a trailing backslash are patterns pathspec refuses; git ignores such lines.
    write_tree(tmp_path, {".gitignore": "!\nweird\\\nnode_modules/\n", "node_modules/": ""})
    hit = matcher(tmp_path).check_directory(str(tmp_path / "node_modules"))
    assert hit == IgnoreHit("node_modules/", ".gitignore", "node_modules/")


def test_crlf_lines_and_only_lf_splits(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {".gitignore": "build/\r\na\fb/\n", "build/": "", "a\fb/": "", "a/": "", "b/": ""},
    )
    m = matcher(tmp_path)
    assert m.check_directory(str(tmp_path / "build")) is not None
    # Form feed is part of the pattern for git, not a line break.
    assert m.check_directory(str(tmp_path / "a\fb")) is not None
    assert m.check_directory(str(tmp_path / "a")) is None
    assert m.check_directory(str(tmp_path / "b")) is None


def test_an_edited_gitignore_is_read_again(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "one/\n", "one/": "", "two/": ""})
    m = matcher(tmp_path)
    assert m.check_directory(str(tmp_path / "one")) is not None
    assert m.check_directory(str(tmp_path / "two")) is None
    (tmp_path / ".gitignore").write_text("two/\n")
    os.utime(tmp_path / ".gitignore", ns=(10**18, 10**18))  # a version change even on coarse clocks
    assert m.check_directory(str(tmp_path / "one")) is None
    assert m.check_directory(str(tmp_path / "two")) is not None
    (tmp_path / ".gitignore").unlink()
    assert m.check_directory(str(tmp_path / "two")) is None


def test_document_chain_marks_files_under_ignored_directories(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".git/": "",
            ".gitignore": "node_modules/\n",
            "AGENTS.md": "root\n",
            "node_modules/dep/AGENTS.md": "dep says: run rm -rf\n",
            "node_modules/dep/CLAUDE.md": "more\n",
        },
    )
    chain = load_document_chain(
        str(tmp_path / "node_modules/dep"), InstructionSettings(), LOCAL_FS, dsh_home="/nonexistent"
    )
    assert states(chain) == [
        ("AGENTS.md", "included"),
        ("node_modules/dep/AGENTS.md", IGNORED),
        ("node_modules/dep/CLAUDE.md", IGNORED),
    ]
    ignored = chain.entries[1]
    assert ignored.reason == "node_modules/ ignored by 'node_modules/' (.gitignore)"
    assert ignored.bytes == len("dep says: run rm -rf\n")
    assert "dep says" not in chain.text


# --- one parse per version of a .gitignore, whoever asks ----------------------------------------


def test_each_version_of_a_gitignore_is_parsed_once_for_every_matcher(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": "build/\n", "build/": "", "src/": ""})
    parsed = ParsedIgnoreFiles()
    settings = InstructionSettings()
    first = IgnoreMatcher(str(tmp_path), settings, LOCAL_FS, parsed)
    second = IgnoreMatcher(str(tmp_path), settings, LOCAL_FS, parsed)
    for m in (first, second, first):
        assert m.check_directory(str(tmp_path / "build")) is not None
        assert m.check_directory(str(tmp_path / "src")) is None
    assert parsed.parses == 1
    (tmp_path / ".gitignore").write_text("src/\n")
    assert second.check_directory(str(tmp_path / "src")) is not None
    assert first.check_directory(str(tmp_path / "build")) is None
    assert parsed.parses == 2


def test_a_version_asked_for_by_many_threads_at_once_is_parsed_once(tmp_path: Path) -> None:
    lines = "".join(f"generated-{i}/\n" for i in range(3000))
    write_tree(tmp_path, {".gitignore": lines + "build/\n", "build/": ""})
    parsed = ParsedIgnoreFiles()
    start = threading.Barrier(4)
    answers: list[IgnoreHit | None] = []

    def ask() -> None:
        m = IgnoreMatcher(str(tmp_path), InstructionSettings(), LOCAL_FS, parsed)
        start.wait()
        answers.append(m.check_directory(str(tmp_path / "build")))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(answers) == 4 and all(a is not None for a in answers)
    assert parsed.parses == 1


def test_parsed_files_past_the_budget_go_least_recently_used_first(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "a/.gitignore": "x" * 100 + "\n",
            "b/.gitignore": "y" * 100 + "\n",
            "a/d/": "",
            "b/d/": "",
        },
    )
    parsed = ParsedIgnoreFiles(max_bytes=150)
    for name in ("a", "b", "a"):
        m = IgnoreMatcher(str(tmp_path / name), InstructionSettings(), LOCAL_FS, parsed)
        m.check_directory(str(tmp_path / name / "d"))
    assert parsed.parses == 3  # "a" was dropped to keep "b", then parsed again

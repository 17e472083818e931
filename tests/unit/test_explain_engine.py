"""The explain engine: this sidecar's side (baseline, touch, unreached; states passed through),
the differences and their hints, and hostile trees and failing reads over the filesystem seam."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest
from tests.support.explainkit import Tree, settings, states
from tests.support.instrkit import write_tree

from dsh_sidecar import errors
from dsh_sidecar.agents import codex
from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.errors import DshError
from dsh_sidecar.explain import SidecarFile, explain_file
from dsh_sidecar.explain.compare import setting_hint
from dsh_sidecar.explain.model import AgentFile
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem


def sidecar(e: object) -> list[tuple[str | None, str, str]]:
    return [(f.via, f.state, f.display_path) for f in e.sidecar]  # type: ignore[attr-defined]


# --- this sidecar's side -----------------------------------------------------------------------


def test_a_session_at_the_root_gets_the_baseline_then_the_touched_directories(
    tmp_path: Path,
) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    assert e.cwd == e.project_root == str(tmp_path / "p")
    assert sidecar(e) == [
        ("baseline", "included", "$DSH_HOME/AGENTS.md"),
        ("baseline", "included", "AGENTS.md"),
        ("baseline", "included", "CLAUDE.md"),
        ("baseline", "included", "AGENTS.local.md"),
        ("baseline", "included", "CLAUDE.local.md"),
        ("touch", "included", "src/AGENTS.md"),
        ("touch", "included", "src/CLAUDE.md"),
        ("touch", "included", "src/api/AGENTS.md"),
    ]


def test_a_session_in_the_files_directory_gets_everything_in_its_baseline(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py", cwd="src/api")
    assert {f.via for f in e.sidecar} == {"baseline"}
    assert [f.display_path for f in e.sidecar][-3:] == [
        "src/AGENTS.md",
        "src/CLAUDE.md",
        "src/api/AGENTS.md",
    ]


def test_a_file_outside_the_session_directory_is_unreached(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py", cwd="web")
    assert sidecar(e)[-4:] == [
        ("baseline", "included", "web/AGENTS.md"),
        (None, "unreached", "src/AGENTS.md"),
        (None, "unreached", "src/CLAUDE.md"),
        (None, "unreached", "src/api/AGENTS.md"),
    ]
    unreached = e.sidecar[-1]
    assert unreached.reason == (
        "a session in web loads the directories down to its own and, when it touches a file, "
        "those between it and the file; this one is neither"
    )
    assert not unreached.loaded


def test_a_dependency_the_project_ignores_is_never_touched(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("web/node_modules/pkg/index.js")
    assert sidecar(e)[-2:] == [
        ("touch", "included", "web/AGENTS.md"),
        ("touch", "ignored", "web/node_modules/pkg/AGENTS.md"),
    ]
    assert e.sidecar[-1].reason == "web/node_modules/ ignored by 'node_modules/' (.gitignore)"
    # Codex and Copilot never read it either; Cursor would, for a file in that subtree.
    cursor = {f.display_path: f.state for f in e.agent("cursor").files}
    assert cursor["web/node_modules/pkg/AGENTS.md"] == "loaded"
    only = {d.display_path: d.reason for d in e.agent("cursor").only_agent}
    assert only["web/node_modules/pkg/AGENTS.md"] == (
        "ignored: web/node_modules/ ignored by 'node_modules/' (.gitignore)"
    )


def test_touched_files_get_a_budget_of_their_own(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/AGENTS.md": "root rules\n", "p/a/AGENTS.md": "a" * 600, "p/a/x": ""},
    )
    e = explain_file(
        str(tmp_path / "p/a/x"),
        settings(maxBytes=400),
        LOCAL_FS,
        dsh_home=str(tmp_path / "d"),
        home=str(tmp_path),
        env={},
    )
    root, touched = e.sidecar
    assert (root.via, root.state, root.included_bytes) == ("baseline", "included", 11)
    assert (touched.via, touched.state) == ("touch", "truncated")
    assert touched.included_bytes is not None and 0 < touched.included_bytes < 600
    assert touched.reason == (
        f"truncated from 600 to {touched.included_bytes} bytes by the budget of the touch message"
    )
    # The whole chain as one baseline would have dropped the root file instead.
    whole = explain_file(
        str(tmp_path / "p/a/x"),
        settings(maxBytes=400),
        LOCAL_FS,
        dsh_home=str(tmp_path / "d"),
        cwd=str(tmp_path / "p/a"),
        home=str(tmp_path),
        env={},
    )
    assert [f.state for f in whole.sidecar] == ["omitted", "truncated"]


def test_a_disabled_source_loads_nothing(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py", settings=settings(maxBytes=0))
    assert {f.state for f in e.sidecar} == {"omitted"}
    assert not [f for f in e.sidecar if f.loaded]
    assert e.to_json()["sidecar"]["maxBytes"] == 0


def test_an_infinite_budget_is_left_out_of_the_json(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py", settings=settings(maxBytes=1e400))
    assert "maxBytes" not in e.to_json()["sidecar"]


def test_states_a_later_convention_adds_count_by_their_included_bytes() -> None:
    imported = SidecarFile("/p/x.md", "x.md", ".\u0000x.md", "imported", 5, "baseline", 5)
    overridden = SidecarFile("/p/AGENTS.md", "AGENTS.md", ".\u0000AGENTS.md", "overridden", 9)
    empty = SidecarFile("/p/E.md", "E.md", ".\u0000E.md", "included", 0, "baseline", 0)
    cut_to_nothing = SidecarFile("/p/C.md", "C.md", ".\u0000C.md", "truncated", 9, "baseline", 0)
    assert imported.loaded and empty.loaded
    assert not overridden.loaded and not cut_to_nothing.loaded


def test_the_session_directory_is_resolved_through_symlinks(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    (tmp_path / "link").symlink_to(tree.project / "src", target_is_directory=True)
    e = explain_file(
        str(tmp_path / "link/api/handler.py"),
        InstructionSettings(),
        LOCAL_FS,
        dsh_home=str(tree.dsh_home),
        cwd=str(tmp_path / "link"),
        home=str(tree.home),
        env={},
    )
    assert e.cwd == str(tree.project / "src")
    assert e.file == str(tree.project / "src/api/handler.py")


# --- differences -------------------------------------------------------------------------------


def test_hints_name_the_setting_that_would_load_the_file(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    gemini = {d.display_path: d.reason for d in e.agent("gemini").only_agent}
    assert gemini == {
        "~/.gemini/GEMINI.md": "not read by this sidecar; instructions.userGlobalFiles lists "
        "extra user-global files",
        "GEMINI.md": "not read by this sidecar; instructions.instructionFileCandidates with "
        "GEMINI.md added reads it",
        "src/GEMINI.md": "not read by this sidecar; instructions.instructionFileCandidates with "
        "GEMINI.md added reads it",
    }
    codex_only = {d.display_path: d.reason for d in e.agent("codex").only_agent}
    assert codex_only["AGENTS.override.md"] == (
        "not read by this sidecar; instructions.overrideFiles reads AGENTS.override.md instead "
        "of AGENTS.md"
    )
    copilot_only = {d.display_path: d.reason for d in e.agent("copilot-vscode").only_agent}
    assert copilot_only[".github/copilot-instructions.md"].startswith(
        'not read by this sidecar; instructions.ruleSets with "copilot"'
    )
    assert copilot_only[".claude/CLAUDE.md"].startswith("no setting of this sidecar reads it")
    # Every convention setting is in this build: no hint says one is still to come.
    every = [d.reason for a in e.agents for d in a.only_agent]
    assert not any("coming with the conventions work" in reason for reason in every)


def test_files_only_the_sidecar_loads_carry_the_agents_reason(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    only = {d.display_path: d.reason for d in e.agent("codex").only_sidecar}
    assert only["$DSH_HOME/AGENTS.md"] == (
        "Codex CLI does not read this sidecar's user-global file "
        "(its own: ~/.codex/AGENTS.override.md, ~/.codex/AGENTS.md)"
    )
    assert only["AGENTS.md"] == (
        "AGENTS.override.md wins this directory; Codex CLI loads one file per directory"
    )
    assert (
        only["CLAUDE.md"]
        == "Codex CLI does not read CLAUDE.md (it reads AGENTS.override.md, AGENTS.md)"
    )
    assert only["src/AGENTS.md"] == codex.RULES.nested.why_not


def test_a_setting_hint_for_an_unknown_rule_folder() -> None:
    found = AgentFile("/p/.other/rules/x.md", ".other/rules/x.md", "rule", "loaded", 1)
    assert setting_hint(codex.RULES, found) == "no setting of this sidecar reads these rule files"


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "code", "message"),
    [
        ("src", errors.INVALID_URI, "{p}/src is a directory; explain needs a file in it"),
        ("nowhere/x.py", errors.INVALID_URI, "{p}/nowhere is not an existing directory"),
    ],
)
def test_a_directory_or_a_missing_directory_is_refused(
    tmp_path: Path, rel: str, code: str, message: str
) -> None:
    tree = Tree(tmp_path)
    with pytest.raises(DshError) as caught:
        tree.explain(rel)
    assert caught.value.code == code
    assert caught.value.message == message.format(p=tree.project)


def test_a_relative_path_and_a_missing_cwd_are_refused(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    with pytest.raises(DshError) as caught:
        explain_file("src/x.py", InstructionSettings(), LOCAL_FS, dsh_home=str(tree.dsh_home))
    assert caught.value.code == errors.INVALID_URI
    with pytest.raises(DshError) as caught:
        tree.explain("src/api/handler.py", cwd="missing")
    assert caught.value.code == errors.INVALID_CWD


def test_a_file_that_does_not_exist_yet_is_explained(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/new_module.py")
    assert e.file.endswith("src/api/new_module.py")
    assert "src/api/AGENTS.md" in [f.display_path for f in e.sidecar if f.loaded]


# --- hostile trees and failing reads -----------------------------------------------------------


def test_fifos_symlink_loops_and_hostile_globs_end_quickly(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    os.mkfifo(tree.project / "src/api/CLAUDE.md")  # never opened: not a regular file
    (tree.project / ".cursor/rules/loop").symlink_to(tree.project / ".cursor")
    (tree.project / ".cursor/rules/deep").mkdir()
    (tree.project / ".cursor/rules/deep/evil.mdc").write_text(
        "---\nglobs: " + "*a" * 30 + "b\n---\n"
    )
    os.symlink("/dev/zero", tree.project / "docs/zero.md")
    (tree.project / "GEMINI.md").write_text("@./docs/zero.md @/dev/zero\n")
    started = time.monotonic()
    e = tree.explain("src/api/handler.py")
    assert time.monotonic() - started < 60  # a hang, not a timing threshold: it ends at all
    cursor = {f.display_path: f.state for f in e.agent("cursor").files}
    assert cursor[".cursor/rules/deep/evil.mdc"] == "unmatched"
    assert not [p for p in cursor if p.startswith(".cursor/rules/loop")]
    for agent in e.agents:
        paths = [f.display_path for f in agent.files]
        assert "src/api/CLAUDE.md" not in paths
        assert "docs/zero.md" not in paths and "/dev/zero" not in paths


def test_rule_folders_are_listed_up_to_a_bound(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    for i in range(600):
        (tree.project / f".cursor/rules/r{i:03}.mdc").write_text("---\nglobs: nothing/**\n---\n")
    rules = [
        f for f in tree.explain("src/api/handler.py").agent("cursor").files if f.kind == "rule"
    ]
    assert len(rules) <= 503  # 500 from the root folder, the nested folder's one, the note
    # The cut is said, never silent: the folder itself is listed as not read.
    cut = [f for f in rules if f.display_path == ".cursor/rules"]
    assert len(cut) == 1 and cut[0].state == "not-read"
    assert "more than 500 rule files" in (cut[0].reason or "")


def test_a_huge_file_counts_by_its_size_without_being_read_whole(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/x.py": ""})
    with open(tmp_path / "p/AGENTS.md", "wb") as handle:
        handle.write(b"r" * (3 * 1024 * 1024))
    e = explain_file(
        str(tmp_path / "p/x.py"),
        InstructionSettings(),
        LOCAL_FS,
        dsh_home=str(tmp_path / "d"),
        home=str(tmp_path),
        env={},
    )
    (codex_file,) = e.agent("codex").files
    assert (codex_file.state, codex_file.bytes, codex_file.kept_bytes) == (
        "truncated",
        3 * 1024 * 1024,
        32768,
    )
    (mine,) = e.sidecar
    assert mine.state == "oversized"  # over instructions.maxSourceBytes: never loaded here


class FailingReads(LocalFileSystem):
    """Reads of one file fail with EIO, as a dying disk would make them."""

    def __init__(self, failing: str) -> None:
        self.failing = failing

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        if path == self.failing:
            raise OSError(errno.EIO, "Input/output error")
        return super().open_for_read(path, follow_final_link=follow_final_link)


def test_a_failing_read_is_unreadable_for_every_side(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    fs = FailingReads(tree.path("AGENTS.md"))
    e = tree.explain("src/api/handler.py", fs=fs)
    mine = {f.display_path: f for f in e.sidecar}
    assert mine["AGENTS.md"].state == "unreadable"
    cursor = {f.display_path: f for f in e.agent("cursor").files}
    assert cursor["AGENTS.md"].state == "unreadable"
    assert cursor["AGENTS.md"].reason == "Input/output error"
    assert states(e, "codex")[1:3] == [
        ("AGENTS.override.md", "project", "loaded"),
        ("AGENTS.md", "project", "shadowed"),
    ]


# --- the sidecar side with the conventions on ---------------------------------------------------


def test_with_the_conventions_on_the_sidecar_loads_what_the_agents_load(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    on = settings(
        overrideFiles=True,
        imports=True,
        ruleSets=["copilot", "claude", "cursor"],
        userGlobalFiles=["~/.claude/CLAUDE.md", "~/.codex/AGENTS.md", "~/.gemini/GEMINI.md"],
    )
    e = explain_file(
        tree.path("src/api/handler.py"),
        on,
        LOCAL_FS,
        dsh_home=str(tree.dsh_home),
        home=str(tree.home),
        env={},
        os_home=str(tree.home),
    )
    sidecar = {f.display_path: (f.via, f.state) for f in e.sidecar}
    assert sidecar["AGENTS.override.md"] == ("baseline", "included")
    assert sidecar["AGENTS.md"] == ("baseline", "overridden")
    assert sidecar["docs/shared.md"] == ("baseline", "imported")
    assert sidecar["docs/deep5.md"] == ("touch", "imported")  # five hops from src/CLAUDE.md
    assert sidecar["docs/deep6.md"] == (None, "too-deep")
    assert sidecar[".claude/rules/api.md"] == ("touch", "included")
    assert sidecar[".github/copilot-instructions.md"] == ("baseline", "included")
    assert sidecar["~/.claude/CLAUDE.md"] == ("baseline", "included")
    only = {a.id: {d.display_path: d.reason for d in a.only_agent} for a in e.agents}
    # Codex: the override is read now; nothing Codex loads is missing.
    assert only["codex"] == {}
    # Claude Code: imports, rules and its user-global file are read; what remains has no setting.
    assert only["claude"] == {
        ".claude/CLAUDE.md": only["claude"][".claude/CLAUDE.md"],
        "~/.claude/rules/mine.md": "no setting of this sidecar reads rule files in the home "
        "directory",
    }
    assert only["cursor"]["src/.cursor/rules/local.mdc"] == (
        "no setting of this sidecar reads rule folders below the project root"
    )
    assert only["cursor"]["AGENTS.md"].startswith("overridden: replaced by AGENTS.override.md")
    assert "python.instructions.md" not in " ".join(only["copilot-vscode"])

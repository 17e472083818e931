"""Each agent's rules (dsh_sidecar/agents/) against the cases its documentation states, on real
trees: what loads, in which order, what a size limit keeps, and what is left out and why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support.explainkit import Tree, loaded, states
from tests.support.instrkit import write_tree

from dsh_sidecar.agents import AGENTS, claude_code, codex, copilot_vscode, cursor, gemini_cli
from dsh_sidecar.agents.rules import CHECKED
from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.explain import Explanation, explain_file
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.hooks.complement import native_paths

KIB = 1024


def explain(base: Path, rel: str, cwd: str | None = None, **env: str) -> Explanation:
    return explain_file(
        str(base / rel),
        InstructionSettings(),
        LOCAL_FS,
        dsh_home=str(base / "dsh"),
        cwd=str(base / cwd) if cwd is not None else None,
        home=str(base / "home"),
        env=env,
    )


def by_path(e: Explanation, agent: str) -> dict[str, tuple[str, int | None, int | None]]:
    return {f.display_path: (f.state, f.bytes, f.kept_bytes) for f in e.agent(agent).files}


# --- the data itself ---------------------------------------------------------------------------


def test_every_agent_cites_its_pages_with_the_date_checked() -> None:
    assert [a.id for a in AGENTS] == [
        "codex",
        "claude",
        "copilot-cli",
        "copilot-vscode",
        "gemini",
        "cursor",
        "qwen-code",
    ]
    for agent in AGENTS:
        assert agent.sources, agent.id
        for source in agent.sources:
            assert source.url.startswith("https://"), source.url
            assert source.checked == CHECKED == "2026-12-03"
            assert source.note
        assert agent.undocumented, f"{agent.id}: say where the documentation is silent"


def test_documented_facts_as_data() -> None:
    assert codex.RULES.walk.names == ("AGENTS.override.md", "AGENTS.md")
    assert codex.RULES.walk.pick == "first"
    assert codex.RULES.user_global[0].env == "CODEX_HOME"
    assert codex.RULES.user_global[0].directory == "~/.codex"
    assert codex.RULES.size_limit is not None
    assert codex.RULES.size_limit.bytes == 32 * KIB
    assert codex.RULES.size_limit.setting == "project_doc_max_bytes"
    assert claude_code.RULES.imports is not None and claude_code.RULES.imports.max_depth == 4
    assert claude_code.RULES.user_global[0].directory == "/etc/claude-code"
    assert claude_code.RULES.size_limit is None
    assert gemini_cli.RULES.imports is not None and gemini_cli.RULES.imports.max_depth == 5
    assert gemini_cli.RULES.walk.names == ("GEMINI.md",)
    copilot_globs = {(r.folder, r.glob_field) for r in copilot_vscode.RULES.rule_sets}
    assert (".github/instructions", "applyTo") in copilot_globs
    assert (".claude/rules", "paths") in copilot_globs
    assert ".github/copilot-instructions.md" in copilot_vscode.RULES.walk.names
    assert copilot_vscode.RULES.nested.when == "never"
    (rules,) = cursor.RULES.rule_sets
    assert (rules.folder, rules.pattern, rules.glob_field, rules.always_field) == (
        ".cursor/rules",
        "**/*.mdc",
        "globs",
        "alwaysApply",
    )


# --- Codex CLI ---------------------------------------------------------------------------------


def test_codex_override_wins_its_directory_and_nothing_below_the_cwd_loads(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    assert states(e, "codex") == [
        ("~/.codex/AGENTS.md", "user-global", "loaded"),
        ("AGENTS.override.md", "project", "loaded"),
        ("AGENTS.md", "project", "shadowed"),
        ("src/AGENTS.md", "nested", "not-read"),
        ("src/api/AGENTS.md", "nested", "not-read"),
    ]
    agent = e.agent("codex")
    assert agent.size_limit is not None and agent.size_limit.bytes == 32768


def test_codex_walks_from_the_root_down_to_its_working_directory(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py", cwd="src/api")
    assert loaded(e, "codex") == [
        "~/.codex/AGENTS.md",
        "AGENTS.override.md",
        "src/AGENTS.md",
        "src/api/AGENTS.md",
    ]


def test_codex_without_a_project_root_reads_only_its_working_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/AGENTS.md": "outer\n", "a/b/AGENTS.md": "inner\n", "a/b/x.py": ""})
    e = explain(tmp_path, "a/b/x.py", cwd="a/b")
    # No .git anywhere: the project root is the working directory itself.
    assert e.project_root == str(tmp_path / "a/b")
    assert [(f.path, f.state) for f in e.agent("codex").files] == [
        (str(tmp_path / "a/b/AGENTS.md"), "loaded")
    ]


def test_codex_stops_adding_files_once_32_kib_are_reached_root_first(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "r" * (30 * KIB),
            "p/a/AGENTS.md": "a" * (4 * KIB),
            "p/a/b/AGENTS.md": "leaf rules\n",
            "p/a/b/x.py": "",
        },
    )
    e = explain(tmp_path, "p/a/b/x.py", cwd="p/a/b")
    assert by_path(e, "codex") == {
        "AGENTS.md": ("loaded", 30 * KIB, None),
        "a/AGENTS.md": ("truncated", 4 * KIB, 2 * KIB),  # only what is left of 32 KiB
        "a/b/AGENTS.md": ("dropped", 11, None),  # the most specific file is lost
    }
    # The sidecar keeps the most specific file instead: every file fits its 64 KiB budget.
    assert [f.state for f in e.sidecar] == ["included", "included", "included"]
    only_sidecar = {d.display_path: d.reason for d in e.agent("codex").only_sidecar}
    assert only_sidecar == {"a/b/AGENTS.md": "project_doc_max_bytes (32,768 bytes) already used up"}


def test_codex_limit_met_exactly_leaves_nothing_for_the_next_file(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/AGENTS.md": "x" * (32 * KIB), "p/a/AGENTS.md": "y\n", "p/a/f": ""},
    )
    assert by_path(explain(tmp_path, "p/a/f", cwd="p/a"), "codex") == {
        "AGENTS.md": ("loaded", 32 * KIB, None),
        "a/AGENTS.md": ("dropped", 2, None),
    }


def test_codex_cuts_at_a_byte_boundary_even_inside_a_character(tmp_path: Path) -> None:
    # 32,767 ASCII bytes leave one byte for a file starting with "é" (two bytes).
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "x" * (32 * KIB - 1),
            "p/a/AGENTS.md": "é rules\n",
            "p/a/f": "",
        },
    )
    assert by_path(explain(tmp_path, "p/a/f", cwd="p/a"), "codex")["a/AGENTS.md"] == (
        "truncated",
        9,
        1,
    )


def test_codex_skips_empty_files_without_spending_the_limit(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": " \n\t\n",
            "p/a/AGENTS.override.md": "",
            "p/a/AGENTS.md": "not reached: the override file wins the directory\n",
            "p/a/b/AGENTS.md": "z" * (32 * KIB),
            "p/a/b/f": "",
        },
    )
    assert by_path(explain(tmp_path, "p/a/b/f", cwd="p/a/b"), "codex") == {
        "AGENTS.md": ("empty", 4, None),
        "a/AGENTS.override.md": ("empty", 0, None),
        "a/AGENTS.md": ("shadowed", 50, None),
        "a/b/AGENTS.md": ("loaded", 32 * KIB, None),
    }


def test_codex_global_uses_the_first_non_empty_file_and_honours_codex_home(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "home/.codex/AGENTS.override.md": "\n",
            "home/.codex/AGENTS.md": "from ~/.codex\n",
            "elsewhere/AGENTS.override.md": "from CODEX_HOME\n",
            "elsewhere/AGENTS.md": "shadowed\n",
            "p/.git/": "",
            "p/AGENTS.md": "x" * (32 * KIB),
            "p/f": "",
        },
    )
    default = by_path(explain(tmp_path, "p/f"), "codex")
    assert default["~/.codex/AGENTS.override.md"] == ("empty", 1, None)
    assert default["~/.codex/AGENTS.md"] == ("loaded", 14, None)
    # The user-global file does not spend project_doc_max_bytes: the project file stays whole.
    assert default["AGENTS.md"] == ("loaded", 32 * KIB, None)
    moved = explain(tmp_path, "p/f", CODEX_HOME=str(tmp_path / "elsewhere"))
    assert states(moved, "codex")[:2] == [
        (str(tmp_path / "elsewhere/AGENTS.override.md"), "user-global", "loaded"),
        (str(tmp_path / "elsewhere/AGENTS.md"), "user-global", "shadowed"),
    ]


# --- Claude Code -------------------------------------------------------------------------------


def test_claude_code_loads_claude_files_imports_nested_files_and_rules(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    assert states(e, "claude") == [
        ("~/.claude/CLAUDE.md", "user-global", "loaded"),
        ("~/.claude/rules/mine.md", "rule", "loaded"),  # the user's rules before the project
        ("CLAUDE.md", "project", "loaded"),
        ("docs/shared.md", "import", "loaded"),  # right after the file importing it
        (".claude/CLAUDE.md", "project", "loaded"),
        ("CLAUDE.local.md", "project", "loaded"),  # after CLAUDE.md of its directory
        ("src/CLAUDE.md", "nested", "loaded"),  # Claude reads a file below src/
        ("docs/deep1.md", "import", "loaded"),
        ("docs/deep2.md", "import", "loaded"),
        ("docs/deep3.md", "import", "loaded"),
        ("docs/deep4.md", "import", "loaded"),  # the fourth hop, the last one 2.1.332 follows
        ("docs/deep5.md", "import", "not-read"),
        (".claude/rules/always.md", "rule", "loaded"),  # no paths: every file
        (".claude/rules/api.md", "rule", "loaded"),
        (".claude/rules/python.md", "rule", "loaded"),
        # A CLAUDE.md on the start walk turns AGENTS.md off everywhere (instructionFiles).
        ("AGENTS.md", "nested", "not-read"),
        ("src/AGENTS.md", "nested", "not-read"),
        ("src/api/AGENTS.md", "nested", "not-read"),
    ]
    files = {f.display_path: f for f in e.agent("claude").files}
    assert files["docs/deep5.md"].reason == "imported by docs/deep4.md, beyond 4 import levels"
    assert files[".claude/rules/api.md"].reason == "paths src/api/** matches src/api/handler.py"
    # @docs/never.md appears only inside code, so it is no import.
    assert "docs/never.md" not in files
    assert not [p for p, f in files.items() if p.endswith("AGENTS.md") and f.loaded]
    assert "instructionFiles" in (files["src/AGENTS.md"].reason or "")
    assert files["CLAUDE.md"].when == "start"
    assert files["src/CLAUDE.md"].when == "after-read"
    assert files["docs/deep1.md"].when == "after-read"  # imported by src/CLAUDE.md
    assert files[".claude/rules/always.md"].when == "start"
    assert files[".claude/rules/api.md"].when == "after-read"


def test_claude_code_rules_whose_paths_miss_the_file_are_unmatched(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("web/index.ts")
    files = by_path(e, "claude")
    assert files[".claude/rules/api.md"][0] == "unmatched"
    assert files[".claude/rules/python.md"][0] == "unmatched"
    assert files[".claude/rules/always.md"][0] == "loaded"


def test_claude_code_walks_up_past_the_project_root(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "CLAUDE.md": "above the repository\n",
            "p/.git/": "",
            "p/CLAUDE.md": "repository\n",
            "p/a/.claude/CLAUDE.md": "a, .claude folder\n",
            "p/a/CLAUDE.local.md": "a, local\n",
            "p/a/CLAUDE.md": "a\n",
            "p/a/x.py": "",
        },
    )
    e = explain(tmp_path, "p/a/x.py", cwd="p/a")
    assert [(f.path, f.state) for f in e.agent("claude").files] == [
        (str(tmp_path / "CLAUDE.md"), "loaded"),
        (str(tmp_path / "p/CLAUDE.md"), "loaded"),
        (str(tmp_path / "p/a/CLAUDE.md"), "loaded"),
        (str(tmp_path / "p/a/.claude/CLAUDE.md"), "loaded"),
        (str(tmp_path / "p/a/CLAUDE.local.md"), "loaded"),
    ]


def test_claude_code_below_the_cwd_reads_each_claude_name_after_a_read(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/sub/CLAUDE.md": "sub\n",
            "p/sub/CLAUDE.local.md": "sub local\n",
            "p/sub/.claude/CLAUDE.md": "sub folder\n",
            "p/sub/x.py": "",
            "p/other/CLAUDE.md": "sibling\n",
        },
    )
    assert by_path(explain(tmp_path, "p/sub/x.py"), "claude") == {
        "sub/CLAUDE.md": ("loaded", 4, None),
        "sub/.claude/CLAUDE.md": ("loaded", 11, None),
        "sub/CLAUDE.local.md": ("loaded", 10, None),
    }
    # A session in other/ never reaches sub/: not on its way from the working directory.
    away = explain(tmp_path, "p/sub/x.py", cwd="p/other")
    assert by_path(away, "claude")["sub/CLAUDE.md"][0] == "not-read"
    assert by_path(away, "claude")["other/CLAUDE.md"][0] == "loaded"


# --- GitHub Copilot in VS Code -----------------------------------------------------------------


def test_copilot_always_on_files_and_apply_to_rules(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    assert states(e, "copilot-vscode") == [
        ("~/.claude/CLAUDE.md", "user-global", "loaded"),
        ("~/.copilot/instructions/all.instructions.md", "rule", "loaded"),
        ("~/.claude/rules/mine.md", "rule", "loaded"),
        (".github/copilot-instructions.md", "project", "loaded"),
        ("AGENTS.md", "project", "loaded"),
        ("CLAUDE.md", "project", "loaded"),
        (".claude/CLAUDE.md", "project", "loaded"),
        ("CLAUDE.local.md", "project", "loaded"),
        ("src/AGENTS.md", "nested", "not-read"),  # chat.useNestedAgentsMdFiles is off
        ("src/api/AGENTS.md", "nested", "not-read"),
        (".github/instructions/docs.instructions.md", "rule", "unmatched"),
        (".github/instructions/plain.instructions.md", "rule", "manual"),  # no applyTo
        (".github/instructions/python.instructions.md", "rule", "loaded"),
        (".github/instructions/review.instructions.md", "rule", "on-request"),  # description
        (".claude/rules/always.md", "rule", "loaded"),  # paths defaults to **
        (".claude/rules/api.md", "rule", "loaded"),
        (".claude/rules/python.md", "rule", "loaded"),
        ("src/CLAUDE.md", "nested", "not-read"),  # CLAUDE.md of the workspace root only
    ]
    assert e.agent("copilot-vscode").order.startswith("no specific order is guaranteed")


def test_copilot_apply_to_is_a_string_matched_as_vs_code_matches_it(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/.github/instructions/list.instructions.md": '---\napplyTo: ["**"]\n---\n',
            "p/.github/instructions/two.instructions.md": '---\napplyTo: "*.md,src/*.py"\n---\n',
            "p/.github/instructions/root.instructions.md": '---\napplyTo: "*.py"\n---\n',
            "p/src/x.py": "",
        },
    )
    files = {
        f.display_path: f for f in explain(tmp_path, "p/src/x.py").agent("copilot-vscode").files
    }
    assert files[".github/instructions/list.instructions.md"].state == "unmatched"
    assert files[".github/instructions/two.instructions.md"].reason == (
        "applyTo src/*.py matches src/x.py"
    )
    # VS Code puts **/ in front of a pattern without one: *.py is every Python file.
    assert files[".github/instructions/root.instructions.md"].reason == (
        "applyTo *.py matches src/x.py"
    )


# --- GitHub Copilot CLI ------------------------------------------------------------------------


def test_copilot_cli_reads_its_names_in_any_case_the_exact_one_first(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/agents.md": "root\n",
            "p/Claude.md": "root claude\n",
            "p/pkg/AGENTS.md": "exact\n",
            "p/pkg/Agents.md": "variant, not read: the exact name is there\n",
            "p/pkg/sub/GEMINI.MD": "nested\n",
            "p/pkg/sub/.claude/claude.md": "nested folder\n",
            # The directories of a name are matched exactly.
            "p/.GitHub/copilot-instructions.md": "not read\n",
            "p/.github/Copilot-Instructions.md": "read\n",
            "p/pkg/sub/x.py": "",
            "home/.copilot/COPILOT-instructions.md": "user\n",
        },
    )
    e = explain(tmp_path, "p/pkg/sub/x.py", cwd="p")
    assert loaded(e, "copilot-cli") == [
        "~/.copilot/COPILOT-instructions.md",
        "agents.md",
        "Claude.md",
        ".github/Copilot-Instructions.md",
        "pkg/AGENTS.md",
        "pkg/sub/GEMINI.MD",
        "pkg/sub/.claude/claude.md",
    ]
    # Every other agent still matches names exactly.
    assert "agents.md" not in loaded(e, "claude")
    assert "pkg/sub/GEMINI.MD" not in loaded(e, "gemini")


def test_copilot_cli_takes_the_first_case_variant_the_directory_lists(tmp_path: Path) -> None:
    names = ["agents.md", "Agents.md", "AGENTS.MD", "aGENTS.md"]
    write_tree(tmp_path, {"p/.git/": "", "p/x.py": "", **{f"p/{n}": f"{n}\n" for n in names}})
    # A directory by the exact name does not count: Copilot CLI wants a file.
    (tmp_path / "p" / "AGENTS.md").mkdir()
    first = next(n for n in os.listdir(tmp_path / "p") if n in names)
    assert loaded(explain(tmp_path, "p/x.py", cwd="p"), "copilot-cli") == [first]


def test_copilot_cli_case_variants_count_as_loaded_natively_for_the_hooks(tmp_path: Path) -> None:
    # The hook's own candidates are the exact names, which Copilot CLI prefers, so a variant it
    # loads never meets a candidate: nothing is sent twice, nothing left out.
    write_tree(tmp_path, {"p/.git/": "", "p/agents.md": "a\n", "p/CLAUDE.md": "c\n"})
    p = str(tmp_path / "p")
    native = native_paths(
        "copilot-cli", [None], cwd=p, workspace=p, home=str(tmp_path / "home"), env={}, fs=LOCAL_FS
    )
    assert native == {os.path.join(p, "agents.md"), os.path.join(p, "CLAUDE.md")}


def test_copilot_cli_imports_stay_in_the_project_and_not_from_rules(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "@a.md. (@../out.md) @~/h.md @docs/b.md\n",
            "p/a.md": "a\n",
            "p/docs/b.md": "b\n",
            "out.md": "outside the project\n",
            "home/h.md": "home\n",
            "p/.claude/rules/r.md": "@c.md\n",
            "p/.claude/rules/c.md.txt": "",
            "p/gemini.md": "@d.md\n",
            "p/d.md": "d\n",
            "p/x.py": "",
            "home/.copilot/copilot-instructions.md": "@e.md @../h.md\n",
            "home/.copilot/e.md": "e\n",
        },
    )
    e = explain(tmp_path, "p/x.py", cwd="p")
    assert loaded(e, "copilot-cli") == [
        "~/.copilot/copilot-instructions.md",
        "~/.copilot/e.md",  # the user's file imports from its own directory only
        "AGENTS.md",
        "a.md",
        "docs/b.md",
        "gemini.md",  # a GEMINI.md in any case imports nothing
        ".claude/rules/r.md",  # nor does a rule file
    ]
    outside = [f for f in e.agent("copilot-cli").files if f.path.endswith("out.md")]
    assert [(f.state, f.reason) for f in outside] == [
        (
            "not-read",
            "imported by AGENTS.md from outside the project: GitHub Copilot CLI imports only "
            "from the project of the file importing",
        )
    ]


def test_copilot_cli_reads_no_nested_link_out_of_the_project(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/pkg/x.py": "",
            "p/inside.md": "in the project\n",
            "shared/a.md": "linked at the root\n",
            "shared/b.md": "linked below\n",
            "shared/r.md": "a linked rule\n",
        },
    )
    links = {
        "p/AGENTS.md": "../shared/a.md",  # the start walk follows it
        "p/pkg/AGENTS.md": "../../shared/b.md",
        "p/pkg/CLAUDE.md": "../inside.md",
        "p/pkg/.claude/rules/r.md": "../../../../shared/r.md",
    }
    for link, target in links.items():
        (tmp_path / link).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / link).symlink_to(target)
    e = explain(tmp_path, "p/pkg/x.py", cwd="p")
    got = {f.display_path: f.state for f in e.agent("copilot-cli").files}
    assert got == {
        "AGENTS.md": "loaded",
        "pkg/AGENTS.md": "not-read",
        "pkg/CLAUDE.md": "loaded",
        "pkg/.claude/rules/r.md": "not-read",
    }
    # The hooks do not take it for one Copilot CLI loads itself.
    p = str(tmp_path / "p")
    native = native_paths(
        "copilot-cli",
        [str(tmp_path / "p/pkg/x.py")],
        cwd=p,
        workspace=p,
        home=str(tmp_path / "home"),
        env={},
        fs=LOCAL_FS,
    )
    assert os.path.join(p, "pkg", "AGENTS.md") not in native
    assert os.path.join(p, "pkg", "CLAUDE.md") in native
    why = {f.display_path: f.reason for f in e.agent("copilot-cli").files}["pkg/AGENTS.md"]
    assert why is not None and why.endswith(
        "outside the project: GitHub Copilot CLI reads the files it adds after a view only from inside it"
    )


# --- Gemini CLI --------------------------------------------------------------------------------


def test_gemini_reads_gemini_md_up_to_the_git_root_and_just_in_time_below(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "GEMINI.md": "above the repository: not read\n",
            "home/.gemini/GEMINI.md": "global\n",
            "p/.git/": "",
            "p/GEMINI.md": "root @./more.md\n",
            "p/more.md": "imported\n",
            "p/AGENTS.md": "not a Gemini file by default\n",
            "p/a/GEMINI.md": "a\n",
            "p/a/b/GEMINI.md": "b\n",
            "p/a/b/x.py": "",
        },
    )
    e = explain(tmp_path, "p/a/b/x.py", cwd="p/a")
    assert states(e, "gemini") == [
        ("~/.gemini/GEMINI.md", "user-global", "loaded"),
        ("GEMINI.md", "project", "loaded"),
        ("more.md", "import", "loaded"),
        ("a/GEMINI.md", "project", "loaded"),
        ("a/b/GEMINI.md", "nested", "loaded"),  # just in time: a tool accesses a/b/x.py
    ]


# --- Cursor -----------------------------------------------------------------------------------


def test_cursor_rules_by_type_and_nested_agents_md_by_subtree(tmp_path: Path) -> None:
    e = Tree(tmp_path).explain("src/api/handler.py")
    assert states(e, "cursor") == [
        ("AGENTS.md", "project", "loaded"),
        (".cursorrules", "project", "loaded"),
        ("src/AGENTS.md", "nested", "loaded"),  # implicit glob src/**
        ("src/api/AGENTS.md", "nested", "loaded"),
        (".cursor/rules/always.mdc", "rule", "loaded"),
        (".cursor/rules/described.mdc", "rule", "on-request"),
        (".cursor/rules/manual.mdc", "rule", "manual"),
        (".cursor/rules/python.mdc", "rule", "loaded"),
        (".cursor/rules/ts.mdc", "rule", "unmatched"),
        # Globs of a nested rules folder are matched below its own directory.
        ("src/.cursor/rules/local.mdc", "rule", "loaded"),
    ]
    # .cursor/rules/ignored.md is a plain .md: not a Cursor rule, not listed.
    assert ".cursor/rules/ignored.md" not in by_path(e, "cursor")


def test_cursor_sibling_agents_md_does_not_apply_and_a_quoted_true_is_not_true(
    tmp_path: Path,
) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/web/AGENTS.md": "web\n",
            "p/api/x.py": "",
            "p/.cursor/rules/quoted.mdc": '---\nalwaysApply: "true"\n---\n',
        },
    )
    files = by_path(explain(tmp_path, "p/api/x.py"), "cursor")
    assert "web/AGENTS.md" not in files
    assert files[".cursor/rules/quoted.mdc"][0] == "manual"


@pytest.mark.parametrize("agent", [a.id for a in AGENTS])
def test_an_empty_project_loads_nothing(tmp_path: Path, agent: str) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/x.py": ""})
    e = explain(tmp_path, "p/x.py")
    assert e.agent(agent).files == ()
    assert e.agent(agent).only_agent == e.agent(agent).only_sidecar == ()


def test_claude_code_reads_agents_md_when_the_start_walk_has_no_claude_md(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "AGENTS.md": "above the repository\n",
            "p/.git/": "",
            "p/CLAUDE.md": "",  # empty: it does not count, and is not sent
            "p/AGENTS.md": "repository\n",
            "p/.claude/AGENTS.md": "folder\n",
            "p/AGENTS.override.md": "never read by Claude Code\n",
            "p/sub/AGENTS.md": "nested\n",
            "p/sub/x.py": "",
        },
    )
    files = {f.display_path: f for f in explain(tmp_path, "p/sub/x.py").agent("claude").files}
    loaded = {p: (f.when, f.sent_bytes) for p, f in files.items() if f.loaded}
    assert loaded == {
        str(tmp_path / "AGENTS.md"): ("start", 21),
        "AGENTS.md": ("start", 11),
        ".claude/AGENTS.md": ("start", 7),
        "sub/AGENTS.md": ("after-read", 7),
    }
    assert files["CLAUDE.md"].state == "empty" and files["CLAUDE.md"].sent_bytes is None
    assert "AGENTS.override.md" not in files


def test_claude_code_rule_frontmatter_is_not_counted_as_sent(tmp_path: Path) -> None:
    rule = '---\npaths: "**/*.py"\n---\nuse types\n'
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/CLAUDE.md": "x\n", "p/.claude/rules/py.md": rule, "p/a.py": ""},
    )
    files = {f.display_path: f for f in explain(tmp_path, "p/a.py").agent("claude").files}
    assert files[".claude/rules/py.md"].bytes == len(rule)
    assert files[".claude/rules/py.md"].sent_bytes == len("use types\n")
    assert files[".claude/rules/py.md"].when == "after-read"


def test_claude_code_does_not_load_imports_from_outside_its_working_directory(
    tmp_path: Path,
) -> None:
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/CLAUDE.md": "@shared.md\n", "p/shared.md": "s\n", "p/a/x.py": ""},
    )
    at_root = by_path(explain(tmp_path, "p/a/x.py"), "claude")
    assert at_root["shared.md"][0] == "loaded"
    below = explain(tmp_path, "p/a/x.py", cwd="p/a")
    files = {f.display_path: f for f in below.agent("claude").files}
    assert files["shared.md"].state == "not-read"
    assert "outside the working directory" in (files["shared.md"].reason or "")


def test_gemini_cli_does_not_send_empty_files(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/GEMINI.md": "\n", "p/sub/GEMINI.md": "g\n", "p/sub/x.py": ""},
    )
    assert by_path(explain(tmp_path, "p/sub/x.py"), "gemini") == {
        "GEMINI.md": ("empty", 1, None),
        "sub/GEMINI.md": ("loaded", 2, None),
    }


def test_sizes_count_each_byte_once_as_each_agent_sends_it(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/GEMINI.md": "top\n@imp.md\nafter\n",
            "p/CLAUDE.md": "top\n@imp.md\nafter\n",
            "p/imp.md": "imported\n",
            "p/x.py": "",
        },
    )
    e = explain(tmp_path, "p/x.py")
    gemini = {f.display_path: f.sent_bytes for f in e.agent("gemini").files}
    claude = {f.display_path: f.sent_bytes for f in e.agent("claude").files}
    # Gemini CLI puts the imported text in place of "@imp.md" and trims the file; Claude Code
    # sends the file as written and the import as a file of its own.
    assert gemini == {"GEMINI.md": len("top\n\nafter"), "imp.md": len("imported\n")}
    assert claude == {"CLAUDE.md": len("top\n@imp.md\nafter\n"), "imp.md": len("imported\n")}

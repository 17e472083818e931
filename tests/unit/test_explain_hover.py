"""The hover section rendered from an explanation (the lead wires it into hover)."""

from __future__ import annotations

from pathlib import Path

from tests.support.explainkit import Tree
from tests.support.instrkit import write_tree

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.explain import explain_file
from dsh_sidecar.explain.hover import code, hover_section
from dsh_sidecar.fs import LOCAL_FS


def test_hover_section_for_every_convention(tmp_path: Path) -> None:
    text = hover_section(Tree(tmp_path).explain("src/api/handler.py"))
    assert text == "\n".join(
        [
            "**Other agents on this file**",
            "",
            "- **dsh-sidecar**: `$DSH_HOME/AGENTS.md`, `AGENTS.md`, `CLAUDE.md` and 5 more",
            "- **Codex CLI**: `~/.codex/AGENTS.md`, `AGENTS.override.md`; misses "
            "`$DSH_HOME/AGENTS.md`, `AGENTS.md`, `CLAUDE.md` and 5 more",
            "- **Claude Code**: `~/.claude/CLAUDE.md`, `~/.claude/rules/mine.md`, `CLAUDE.md` and "
            "11 more; misses `$DSH_HOME/AGENTS.md`, `AGENTS.md`, `AGENTS.local.md` and 2 more",
            "- **GitHub Copilot CLI**: `AGENTS.md`, `CLAUDE.md`, `docs/shared.md` and 18 more; misses "
            "`$DSH_HOME/AGENTS.md`, `AGENTS.local.md`, `CLAUDE.local.md`",
            "- **GitHub Copilot (VS Code)**: `~/.claude/CLAUDE.md`, "
            "`~/.copilot/instructions/all.instructions.md`, `~/.claude/rules/mine.md` and 9 more; "
            "misses "
            "`$DSH_HOME/AGENTS.md`, `AGENTS.local.md`, `src/AGENTS.md` and 2 more",
            "- **Gemini CLI**: `~/.gemini/GEMINI.md`, `GEMINI.md`, `src/GEMINI.md`; misses "
            "`$DSH_HOME/AGENTS.md`, `AGENTS.md`, `CLAUDE.md` and 5 more",
            "- **Cursor**: `AGENTS.md`, `.cursorrules`, `src/AGENTS.md` and 4 more; misses "
            "`$DSH_HOME/AGENTS.md`, `CLAUDE.md`, `AGENTS.local.md` and 2 more",
            "- **Qwen Code**: `AGENTS.md`; misses `$DSH_HOME/AGENTS.md`, `CLAUDE.md`, "
            "`AGENTS.local.md` and 4 more",
        ]
    )


def test_hover_section_shows_where_a_limit_cuts(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": "x" * 40000, "p/x.py": ""})
    e = explain_file(
        str(tmp_path / "p/x.py"),
        InstructionSettings(),
        LOCAL_FS,
        dsh_home=str(tmp_path / "d"),
        home=str(tmp_path),
        env={},
    )
    lines = hover_section(e).split("\n")
    assert lines[2] == "- **dsh-sidecar**: `AGENTS.md`"
    assert lines[3] == "- **Codex CLI**: `AGENTS.md` (cut to 32,768 of 40,000 bytes)"
    assert lines[5] == "- **GitHub Copilot CLI**: `AGENTS.md`"
    assert lines[6] == "- **GitHub Copilot (VS Code)**: `AGENTS.md`"
    assert lines[7] == "- **Gemini CLI**: no instruction files; misses `AGENTS.md`"


def test_code_spans_survive_backticks_in_names() -> None:
    assert code("a.md") == "`a.md`"
    assert code("we`ird.md") == "``we`ird.md``"
    assert code("`edge`") == "`` `edge` ``"

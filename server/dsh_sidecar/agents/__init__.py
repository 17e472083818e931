"""What each agent loads, as data: one module per agent, stating its documented rules with the
pages they follow and the date those were checked (see ``rules.py`` for the vocabulary)."""

from __future__ import annotations

from . import claude_code, codex, copilot_vscode, cursor, gemini_cli
from .rules import AgentRules

AGENTS: tuple[AgentRules, ...] = (
    codex.RULES,
    claude_code.RULES,
    copilot_vscode.RULES,
    gemini_cli.RULES,
    cursor.RULES,
)

__all__ = ["AGENTS", "AgentRules"]

"""Every agent the sidecar models, in the order ``explain`` reports them."""

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

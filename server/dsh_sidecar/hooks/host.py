"""Which program ran a hook: a hook installed for Claude Code is run by other hosts too.

GitHub Copilot CLI (in a trusted folder) and Copilot in VS Code read the project's
``.claude/settings.json`` (VS Code ``~/.claude/settings.json`` as well) and run its hooks, each
with a payload of its own shape. An event must be answered in the shape of the host that runs
it and kept in that host's sessions, never in Claude Code's: the payload says which host it is.

- Claude Code 2.1.332 sends ``hook_event_name`` and ``transcript_path`` on every event and never
  a ``timestamp`` (the payloads recorded in tests/fixtures/agent_hooks/claude).
- Copilot CLI 1.0.102 sends ``hook_event_name`` with a ``timestamp`` (an ISO string) on every
  event, its tool output as ``tool_result``, and ``transcript_path`` only when a turn stops; its
  SubagentStart payload is its own camelCase one (``sessionId``, ``agentName``,
  ``parent_agent_id``) with no event name. See
  docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102
- Copilot in VS Code sends camelCase ``hookEventName`` and ``sessionId`` (its hooks reference,
  "Common input fields"). See
  docs/reference/agent-clis.md, Copilot in VS Code runs Claude Code's hooks

The host's own record then reads the payload, shapes the answer and names the session
(``copilot-cli:<id>``), so no host's event is ever kept in another host's session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLAUDE = "claude"
COPILOT_CLI = "copilot-cli"
COPILOT_VSCODE = "copilot-vscode"

# The agents whose settings files other hosts read and run.
SHARED_BY_OTHER_HOSTS = frozenset({CLAUDE})


def host_of(agent: str, data: Mapping[str, Any]) -> str:
    """The id of the agent that sent ``data`` to a hook installed for ``agent``."""
    if agent not in SHARED_BY_OTHER_HOSTS:
        return agent
    if "hook_event_name" in data:
        copilot = "timestamp" in data or "tool_result" in data
        return COPILOT_CLI if copilot else CLAUDE
    if "hookEventName" in data:
        return COPILOT_VSCODE  # its local agent (agents/copilot_vscode.py, guest_hooks)
    if "sessionId" in data:
        return COPILOT_CLI  # its own payload, handed to a Claude-shaped SubagentStart hook
    return agent

"""Every agent the sidecar knows, one line each: its id and the module holding its ``RECORD``, in
the order ``explain`` reports them.

Light on purpose: a hook process reads one agent's record (``record``) and must not build the
others. An id that is not here is an ``UnknownAgent`` everywhere, never a fallback.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .record import AgentRecord, Hooks
    from .rules import AgentRules

REGISTRY: tuple[tuple[str, str], ...] = (
    ("codex", "codex"),
    ("claude", "claude_code"),
    ("copilot-cli", "copilot_cli"),
    ("copilot-vscode", "copilot_vscode"),
    ("gemini", "gemini_cli"),
    ("cursor", "cursor"),
    ("qwen-code", "qwen_code"),
)
IDS: tuple[str, ...] = tuple(agent for agent, _ in REGISTRY)


class UnknownAgent(ValueError):
    """An agent id no record has (or, for the hooks, one whose agent runs no hooks)."""


def record(agent: str) -> AgentRecord:
    """The record of ``agent``; only its own module is imported."""
    module = dict(REGISTRY).get(agent)
    if module is None:
        raise UnknownAgent(f"unknown agent {agent!r} (known: {', '.join(IDS)})")
    found: AgentRecord = importlib.import_module(f"{__package__}.{module}").RECORD
    if found.id != agent:
        raise UnknownAgent(f"the record in {module} says {found.id!r}, the registry {agent!r}")
    return found


def hook_record(agent: str) -> AgentRecord:
    """The record of ``agent``, which must run hooks: its own, or another agent's that it runs
    (``guest_hooks``, then read as its hooks)."""
    found = record(agent)
    if found.hooks is None and found.guest_hooks is not None:
        import attrs

        return attrs.evolve(found, hooks=found.guest_hooks)
    if found.hooks is None:
        raise UnknownAgent(f"agent {agent!r} runs no hooks (hook agents: {', '.join(hook_ids())})")
    return found


def hooks_of(agent: str) -> Hooks:
    """The hooks of ``agent`` (``hook_record``'s, which are never None)."""
    hooks = hook_record(agent).hooks
    assert hooks is not None  # hook_record
    return hooks


def records() -> tuple[AgentRecord, ...]:
    return tuple(record(agent) for agent in IDS)


def hook_ids() -> tuple[str, ...]:
    """The agents whose hooks the sidecar installs and answers, in registry order."""
    return tuple(r.id for r in records() if r.hooks is not None)


def all_rules() -> tuple[AgentRules, ...]:
    """What ``explain`` compares: every agent's model of what it loads."""
    return tuple(r.rules for r in records())

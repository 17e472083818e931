"""Hook configuration for the real CLIs, written where each agent documents it.

    hooks = HookConfig.for_events(["SessionStart", "PostToolUse"], "dsh-sidecar hook --agent claude")
    run_agent("claude", cwd, prompt, script, hooks=hooks)

Places (``scope``):

- Claude Code: ``~/.claude/settings.json`` (user) or ``<cwd>/.claude/settings.json`` (project).
- Codex CLI: ``$CODEX_HOME/hooks.json`` (user; ``codex exec`` then gets
  ``--dangerously-bypass-hook-trust``) or ``<cwd>/.codex/hooks.json`` (project, with the project
  marked trusted in config.toml as well).
- Gemini CLI: ``~/.gemini/settings.json`` (user) or ``<cwd>/.gemini/settings.json`` (project;
  ``GEMINI_CLI_TRUST_WORKSPACE=true`` so the folder is trusted headless).

All three take the same shape: ``{"hooks": {Event: [{"matcher": M, "hooks": [{"type":
"command", "command": C, "timeout": T}]}]}}``; Gemini's timeout is in milliseconds, the others'
in seconds.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

AgentName = Literal["claude", "codex", "gemini"]
Scope = Literal["user", "project"]

# Every event each CLI documents (what the capture runs register for).
EVENTS: dict[AgentName, tuple[str, ...]] = {
    "claude": (
        "SessionStart",
        "InstructionsLoaded",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "PermissionRequest",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "StopFailure",
        "PreCompact",
        "PostCompact",
        "FileChanged",
        "CwdChanged",
        "SessionEnd",
    ),
    "codex": (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
    ),
    "gemini": (
        "SessionStart",
        "BeforeAgent",
        "BeforeModel",
        "AfterModel",
        "BeforeToolSelection",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
        "PreCompress",
        "Notification",
        "SessionEnd",
    ),
}


@dataclass(frozen=True)
class Hook:
    event: str
    command: str  # a shell command line
    matcher: str | None = None  # tool-name regex for tool events; None: every tool
    timeout_s: float = 10


@dataclass(frozen=True)
class HookConfig:
    hooks: tuple[Hook, ...]
    scope: Scope = "user"

    @classmethod
    def for_events(
        cls,
        events: Iterable[str],
        command: str,
        *,
        matcher: str | None = None,
        timeout_s: float = 10,
        scope: Scope = "user",
    ) -> HookConfig:
        """The same command for each of ``events``."""
        return cls(tuple(Hook(e, command, matcher, timeout_s) for e in events), scope)

    @classmethod
    def per_event(cls, commands: dict[str, str], *, scope: Scope = "user") -> HookConfig:
        """One command per event: ``{"SessionStart": "cmd1", "PostToolUse": "cmd2"}``."""
        return cls(tuple(Hook(e, c) for e, c in commands.items()), scope)


def hooks_settings(agent: AgentName, config: HookConfig) -> dict[str, Any]:
    """The ``{"hooks": {...}}`` block ``agent`` reads, for ``config``."""
    per_event: dict[str, list[dict[str, Any]]] = {}
    for hook in config.hooks:
        timeout = int(hook.timeout_s * 1000) if agent == "gemini" else hook.timeout_s
        entry: dict[str, Any] = {"type": "command", "command": hook.command, "timeout": timeout}
        group: dict[str, Any] = {"hooks": [entry]}
        if hook.matcher is not None:
            group = {"matcher": hook.matcher, **group}
        per_event.setdefault(hook.event, []).append(group)
    return {"hooks": per_event}


def _merge_json(path: Path, extra: dict[str, Any]) -> None:
    current = json.loads(path.read_text()) if path.exists() else {}
    current.update(extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2) + "\n")


def install_hooks(agent: AgentName, config: HookConfig, *, home: Path, cwd: Path) -> dict[str, str]:
    """Write ``config`` where ``agent`` reads it; return the environment it also needs."""
    block = hooks_settings(agent, config)
    project = config.scope == "project"
    if agent == "claude":
        base = cwd if project else home
        _merge_json(base / ".claude" / "settings.json", block)
        return {}
    if agent == "codex":
        if project:
            _merge_json(cwd / ".codex" / "hooks.json", block)
            with (home / ".codex" / "config.toml").open("a") as config_toml:
                config_toml.write(f'[projects."{cwd}"]\ntrust_level = "trusted"\n')
        else:
            _merge_json(home / ".codex" / "hooks.json", block)
        return {}
    _merge_json((cwd if project else home) / ".gemini" / "settings.json", block)
    return {"GEMINI_CLI_TRUST_WORKSPACE": "true"} if project else {}


def python_hook_command(script: Path, *args: str) -> str:
    """A shell command line running ``script`` with this interpreter (for hooks written in
    Python by a test)."""
    return shlex.join([sys.executable, str(script), *args])

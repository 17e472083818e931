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

- GitHub Copilot CLI: ``~/.copilot/settings.json`` (user; Claude's shape, always read) or the
  project's ``.claude/settings.json`` (project; read with folder trust, which the harness then
  grants with ``--trust-folder``).
- Qwen Code: ``~/.qwen/settings.json`` (user) or ``<cwd>/.qwen/settings.json`` (project).

All take the same shape: ``{"hooks": {Event: [{"matcher": M, "hooks": [{"type":
"command", "command": C, "timeout": T}]}]}}``; Gemini's and Qwen's timeouts are in milliseconds,
the others' in seconds.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

AgentName = Literal["claude", "codex", "gemini", "copilot", "qwen"]
Scope = Literal["user", "project"]

# Every hook event each CLI knows (from its own event list: Claude Code 2.1.332's binary,
# Gemini CLI 0.61.0's HookEventName enum, Codex CLI 0.171.0's hook names); the capture runs
# register all of them.
EVENTS: dict[AgentName, tuple[str, ...]] = {
    "claude": (
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "StopFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "PostCompact",
        "PreModelSwitch",
        "PostModelSwitch",
        "PermissionRequest",
        "PermissionDenied",
        "Setup",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "Elicitation",
        "ElicitationResult",
        "ConfigChange",
        "WorktreeCreate",
        "WorktreeRemove",
        "InstructionsLoaded",
        "CwdChanged",
        "FileChanged",
        "DirectoryAdded",
        "MessageDisplay",
        "PreSkillShellCommand",
    ),
    "codex": (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "SessionEnd",
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
        in_ms = agent in ("gemini", "qwen")
        timeout = int(hook.timeout_s * 1000) if in_ms else hook.timeout_s
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
    if agent == "copilot":
        target = cwd / ".claude" if project else home / ".copilot"
        _merge_json(target / "settings.json", block)
        return {}
    if agent == "qwen":
        _merge_json((cwd if project else home) / ".qwen" / "settings.json", block)
        return {}
    _merge_json((cwd if project else home) / ".gemini" / "settings.json", block)
    return {"GEMINI_CLI_TRUST_WORKSPACE": "true"} if project else {}


def python_hook_command(script: Path, *args: str) -> str:
    """A shell command line running ``script`` with this interpreter (for hooks written in
    Python by a test)."""
    return shlex.join([sys.executable, str(script), *args])


CAPTURE_HOOK = Path(__file__).with_name("capture_hook.py")


def capture_command(
    directory: Path,
    event: str,
    *,
    context: str | None = None,
    top: str | None = None,
    plain: str | None = None,
    garbage: bool = False,
    exit_code: int = 0,
    sleep_s: float = 0,
) -> str:
    """The capture hook (tests/support/capture_hook.py) for one event: it saves its input
    under ``directory`` and answers as asked (see that module)."""
    args = ["--dir", str(directory), "--event", event]
    if context is not None:
        args += ["--context", context]
    if top is not None:
        args += ["--top", top]
    if plain is not None:
        args += ["--plain", plain]
    if garbage:
        args.append("--garbage")
    if exit_code:
        args += ["--exit", str(exit_code)]
    if sleep_s:
        args += ["--sleep", str(sleep_s)]
    return python_hook_command(CAPTURE_HOOK, *args)


def capture_all(
    agent: AgentName, directory: Path, *, scope: Scope = "user", timeout_s: float = 10
) -> HookConfig:
    """The capture hook on every event ``agent`` knows, answering nothing."""
    return HookConfig(
        tuple(Hook(e, capture_command(directory, e), None, timeout_s) for e in EVENTS[agent]),
        scope,
    )


def captured(directory: Path) -> list[tuple[str, dict[str, Any]]]:
    """(event, payload) for every capture in ``directory``, in call order."""
    out = []
    for path in sorted(directory.glob("*.json")):
        event = path.stem.split("-", 1)[1]
        out.append((event, json.loads(path.read_text())))
    return out


def sidecar_hook_command(agent: AgentName, *, env: dict[str, str] | None = None) -> str:
    """``dsh-sidecar hook --agent AGENT`` as this test environment runs it (the venv's
    interpreter, so the worktree's code), with ``env`` (e.g. ``DSH_HOME``) set for it."""
    assignments = [f"{k}={v}" for k, v in (env or {}).items()]
    prefix = ["env", *assignments] if assignments else []
    return shlex.join([*prefix, sys.executable, "-m", "dsh_sidecar", "hook", "--agent", agent])

"""Codex CLI's hook input: shell commands (``tool_input.command``) are parsed for the files they
read and patch, through ``shell_touches`` (a tokenizer, never regexes on the raw string)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import Any

from .event import HookEvent, Kind
from .payload import cwd_of, mapping, required, text
from .shell import shell_touches

KINDS: dict[str, Kind] = {
    "SessionStart": "start",
    "UserPromptSubmit": "prompt",
    "PostToolUse": "after-tool",
    "PreToolUse": "pre-tool",
}


def _command(arguments: Mapping[str, Any]) -> str | None:
    for key in ("command", "cmd"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            # ["bash", "-lc", "cat x"] runs its last word as a script.
            if len(value) >= 3 and value[-2] in ("-c", "-lc"):
                return str(value[-1])
            return shlex.join(value)
    patch = arguments.get("input") or arguments.get("patch")
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        return f"apply_patch <<'EOF'\n{patch}\nEOF"
    return None


def parse(data: Mapping[str, Any]) -> HookEvent:
    name = required(data, "hook_event_name")
    cwd = cwd_of(data)
    kind = KINDS.get(name, "other")
    touched: tuple[str, ...] = ()
    if kind in ("after-tool", "pre-tool"):
        command = _command(mapping(data, "tool_input"))
        if command is not None:
            found = shell_touches(command, cwd)
            # Codex reports no success flag: a read of a file that is not there failed.
            reads = tuple(p for p in found.reads if os.path.lexists(p))
            touched = (*reads, *found.writes) if kind == "after-tool" else tuple(found.writes)
    return HookEvent(
        agent="codex",
        kind=kind,
        name=name,
        session_id=required(data, "session_id"),
        cwd=cwd,
        source=text(data, "source"),
        prompt=text(data, "prompt"),
        touched=touched,
        tool_use_id=text(data, "tool_use_id") or text(data, "call_id"),
    )

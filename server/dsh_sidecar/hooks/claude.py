"""Claude Code's hook input (``hook_event_name``, ``session_id``, ``cwd``, per event fields)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .event import HookEvent, Kind
from .payload import absolute, cwd_of, mapping, required, text

# The tools whose file argument is a touch, and the key that names the file.
FILE_TOOLS = {
    "Read": "file_path",
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# The tools a pre-tool hook answers for: ones that write.
WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

KINDS: dict[str, Kind] = {
    "SessionStart": "start",
    # A subagent starting (its events carry agent_id): its own session's start.
    "SubagentStart": "start",
    "UserPromptSubmit": "prompt",
    "PostToolUse": "after-tool",
    "PreToolUse": "pre-tool",
    "InstructionsLoaded": "loaded",
}


def parse(data: Mapping[str, Any]) -> HookEvent:
    name = required(data, "hook_event_name")
    cwd = cwd_of(data)
    kind = KINDS.get(name, "other")
    touched: tuple[str, ...] = ()
    if kind in ("after-tool", "pre-tool"):
        tool = text(data, "tool_name") or ""
        key = FILE_TOOLS.get(tool)
        path = text(mapping(data, "tool_input"), key) if key else None
        if path is not None and (kind == "after-tool" or tool in WRITE_TOOLS):
            touched = (absolute(path, cwd),)
    elif kind == "loaded":
        path = text(data, "file_path")
        touched = (absolute(path, cwd),) if path else ()
    return HookEvent(
        agent="claude",
        kind=kind,
        name=name,
        session_id=required(data, "session_id"),
        cwd=cwd,
        source=text(data, "source"),
        prompt=text(data, "prompt"),
        touched=touched,
        tool_use_id=text(data, "tool_use_id"),
        agent_id=text(data, "agent_id"),
        agent_type=text(data, "agent_type"),
    )

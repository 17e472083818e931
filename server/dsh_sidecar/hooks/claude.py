"""Claude Code's hook input (``hook_event_name``, ``session_id``, ``cwd``, per event fields).

Tool names and input fields as Claude Code 2.1.332 declares them (docs/reference/agent-clis.md,
"Tools the hooks read"): the file tools name one absolute path; ``Bash`` a shell string, read like
Codex's (``shell_commands``); ``Grep`` a file or directory in ``path`` (its ``glob`` filters names,
it is no path); ``Glob`` a directory in ``path`` and a pattern that may start with literal ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .event import HookEvent, Kind
from .payload import absolute, cwd_of, directory, glob_directory, mapping, required, text
from .shell import shell_touches

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
# Tools after which Claude Code loads no instruction file itself (only its file tools do).
SCAN_TOOLS = frozenset({"Bash", "Grep", "Glob"})
# Every tool whose input names a touch: what ``hooks install`` matches.
TOOLS = frozenset(FILE_TOOLS) | SCAN_TOOLS

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
    scanned: frozenset[str] = frozenset()
    if kind in ("after-tool", "pre-tool"):
        tool = text(data, "tool_name") or ""
        arguments = mapping(data, "tool_input")
        key = FILE_TOOLS.get(tool)
        path = text(arguments, key) if key else None
        if path is not None and (kind == "after-tool" or tool in WRITE_TOOLS):
            touched = (absolute(path, cwd),)
        elif tool in SCAN_TOOLS:
            touched = _scanned(tool, arguments, cwd, after=kind == "after-tool")
            scanned = frozenset(touched)
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
        scanned=scanned,
        tool_use_id=text(data, "tool_use_id"),
        agent_id=text(data, "agent_id"),
        agent_type=text(data, "agent_type"),
    )


def _scanned(tool: str, arguments: Mapping[str, Any], cwd: str, *, after: bool) -> tuple[str, ...]:
    """What a shell command, a search or a listing touched; before it runs, only what a shell
    command will write (a search writes nothing)."""
    if tool == "Bash":
        command = text(arguments, "command")
        if command is None:
            return ()
        found = shell_touches(command, cwd)
        if not after:
            return tuple(found.writes)
        # A read of a file that is not there touched nothing (as with Codex).
        return (*(p for p in found.reads if os.path.lexists(p)), *found.writes)
    if not after:
        return ()
    base = text(arguments, "path")
    if tool == "Glob":
        prefix = glob_directory(text(arguments, "pattern") or "")
        if prefix:
            base = os.path.join(base or cwd, prefix)
    found_dir = directory(base, cwd) if base is not None else None
    return (found_dir,) if found_dir is not None else ()

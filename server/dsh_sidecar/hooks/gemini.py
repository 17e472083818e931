"""Gemini CLI's hook input: ``SessionStart``, ``BeforeAgent`` (prompt time), ``AfterTool``,
``BeforeTool``; tool paths as the model wrote them (often relative to the cwd).

Tool names and parameters as Gemini CLI 0.61.0 declares them (docs/reference/agent-clis.md,
"Tools the hooks read"): ``read_file``, ``write_file``, ``replace`` (``file_path``);
``run_shell_command`` (``command``, run in ``dir_path`` when given); ``grep_search`` (``dir_path``,
a directory or a file; ``include_pattern`` filters names and is no path); ``glob`` (``pattern``,
in ``dir_path``); ``list_directory`` (``dir_path``); ``read_many_files`` (``include``: paths,
directories and glob patterns).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from .event import HookEvent, Kind
from .payload import (
    GLOB_CHARS,
    absolute,
    cwd_of,
    directory,
    glob_directory,
    mapping,
    required,
    text,
)
from .shell import shell_touches

SINGLE_FILE_TOOLS = frozenset({"read_file", "write_file", "replace"})
WRITE_TOOLS = frozenset({"write_file", "replace"})
# Tools after which Gemini CLI loads no context file itself: its own look-up of nested
# GEMINI.md files runs for the file tools, list_directory and read_many_files only.
SCAN_TOOLS = frozenset({"run_shell_command", "grep_search", "glob"})
# Every tool whose input names a touch: what ``hooks install`` matches.
TOOLS = SINGLE_FILE_TOOLS | SCAN_TOOLS | {"list_directory", "read_many_files"}

KINDS: dict[str, Kind] = {
    "SessionStart": "start",
    "BeforeAgent": "prompt",
    "AfterTool": "after-tool",
    "BeforeTool": "pre-tool",
}


def _touched(tool: str, arguments: Mapping[str, Any], cwd: str, *, after: bool) -> tuple[str, ...]:
    if tool in SINGLE_FILE_TOOLS:
        path = text(arguments, "file_path") or text(arguments, "absolute_path")
        return (absolute(path, cwd),) if path else ()
    if tool == "run_shell_command":
        command = text(arguments, "command")
        if command is None:
            return ()
        where = text(arguments, "dir_path")
        found = shell_touches(command, absolute(where, cwd) if where else cwd)
        if not after:
            return tuple(found.writes)
        # A read of a file that is not there touched nothing (as with Codex).
        return (*(p for p in found.reads if os.path.lexists(p)), *found.writes)
    if not after:
        return ()
    if tool == "read_many_files":
        paths = arguments.get("paths") or arguments.get("include") or []
        if not isinstance(paths, list):
            return ()
        touches: list[str] = []
        for each in paths:
            if not isinstance(each, str) or not each.strip():
                continue
            # A pattern names no one file: its literal directory is what was read into.
            prefix = glob_directory(each) if GLOB_CHARS & set(each) else each
            found_one = directory(prefix, cwd) if prefix else None
            if found_one is not None:
                touches.append(found_one)
        return tuple(dict.fromkeys(touches))
    base = text(arguments, "dir_path")
    if tool == "glob":
        prefix = glob_directory(text(arguments, "pattern") or "")
        if prefix:
            base = os.path.join(base or cwd, prefix)
    if tool in ("grep_search", "glob", "list_directory") and base is not None:
        found_dir = directory(base, cwd)
        return (found_dir,) if found_dir is not None else ()
    return ()


# Gemini CLI puts earlier hooks' text before the prompt it hands BeforeAgent; it is not the user's.
_HOOK_CONTEXT = re.compile(r"\A(?:\s*<hook_context>.*?</hook_context>)+\s*", re.DOTALL)


def _prompt(data: Mapping[str, Any]) -> str | None:
    prompt = text(data, "prompt")
    return _HOOK_CONTEXT.sub("", prompt) if prompt is not None else None


def _call_key(data: Mapping[str, Any]) -> str | None:
    """Gemini CLI sends no tool-call id: the call's timestamp, tool and input stand for one, so
    a retried hook (the same payload) is still recognised."""
    stamp = text(data, "timestamp")
    if stamp is None:
        return None
    body = json.dumps([stamp, data.get("tool_name"), data.get("tool_input")], sort_keys=True)
    return "gemini-" + hashlib.sha1(body.encode("utf-8")).hexdigest()


# Gemini CLI 0.61.0 reads `@` file references in the text of its first prompt, and a
# SessionStart hook's text is put in front of that prompt. The rule, from its shipped code:
# docs/reference/agent-clis.md, Gemini CLI's @ file references.
# An `@` opens a reference unless a backslash stands right before it, as long as the next
# character can begin a path. Every character can, except whitespace (space, tab, newline,
# carriage return), the punctuation `, ; ! ? ( ) [ ] { }`, and a dot that ends the text or is
# followed by whitespace. The end of our text counts as "more path": Gemini closes it with
# `</hook_context>`, so a final `@` or `@.` does open a reference there.
_OPENS_REFERENCE = re.compile(r"(?<!\\)@(?=[^ \t\n\r,;!?()\[\]{}.]|\.(?![ \t\n\r])|\Z)")


def escape_at_references(text: str) -> str:
    """``text`` with a backslash put before each ``@`` that Gemini CLI would take for a file
    reference, and nowhere else: Gemini keeps the backslash (the model reads it), so every
    other character reaches the model as written. Deciding each ``@`` by the character before
    it and the two after it is exact, for the whole text at once: the only insertions are
    backslashes right before an ``@``, and a backslash is a path character just as an ``@`` is,
    so no other ``@`` changes its answer."""
    return _OPENS_REFERENCE.sub(r"\\@", text)


def parse(data: Mapping[str, Any]) -> HookEvent:
    name = required(data, "hook_event_name")
    cwd = cwd_of(data)
    kind = KINDS.get(name, "other")
    touched: tuple[str, ...] = ()
    scanned: frozenset[str] = frozenset()
    failed = bool(mapping(data, "tool_response").get("error"))  # a failed call touches nothing
    if kind in ("after-tool", "pre-tool") and not failed:
        tool = text(data, "tool_name") or ""
        if kind == "after-tool" or tool in WRITE_TOOLS or tool == "run_shell_command":
            touched = _touched(tool, mapping(data, "tool_input"), cwd, after=kind == "after-tool")
        if tool in SCAN_TOOLS:
            scanned = frozenset(touched)
    return HookEvent(
        agent="gemini",
        kind=kind,
        name=name,
        session_id=required(data, "session_id"),
        cwd=cwd,
        source=text(data, "source") or text(data, "trigger"),
        prompt=_prompt(data),
        touched=touched,
        scanned=scanned,
        tool_use_id=text(data, "tool_use_id")
        or text(data, "call_id")
        or (_call_key(data) if kind in ("after-tool", "pre-tool") else None),
    )

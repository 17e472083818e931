"""Gemini CLI's hook input: ``SessionStart``, ``BeforeAgent`` (prompt time), ``AfterTool``,
``BeforeTool``; tool paths as the model wrote them (often relative to the cwd)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from .event import HookEvent, Kind
from .payload import absolute, cwd_of, mapping, required, text

SINGLE_FILE_TOOLS = frozenset({"read_file", "write_file", "replace"})
WRITE_TOOLS = frozenset({"write_file", "replace"})
GLOB_CHARS = frozenset("*?[{")

KINDS: dict[str, Kind] = {
    "SessionStart": "start",
    "BeforeAgent": "prompt",
    "AfterTool": "after-tool",
    "BeforeTool": "pre-tool",
}


def _touched(tool: str, arguments: Mapping[str, Any], cwd: str) -> tuple[str, ...]:
    if tool in SINGLE_FILE_TOOLS:
        path = text(arguments, "file_path") or text(arguments, "absolute_path")
        return (absolute(path, cwd),) if path else ()
    if tool == "read_many_files":
        paths = arguments.get("paths") or arguments.get("include") or []
        if not isinstance(paths, list):
            return ()
        # Glob patterns name no one file: only plain paths are touches.
        return tuple(
            absolute(p, cwd)
            for p in paths
            if isinstance(p, str) and p.strip() and not GLOB_CHARS & set(p)
        )
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
    failed = bool(mapping(data, "tool_response").get("error"))  # a failed call touches nothing
    if kind in ("after-tool", "pre-tool") and not failed:
        tool = text(data, "tool_name") or ""
        if kind == "after-tool" or tool in WRITE_TOOLS:
            touched = _touched(tool, mapping(data, "tool_input"), cwd)
    return HookEvent(
        agent="gemini",
        kind=kind,
        name=name,
        session_id=required(data, "session_id"),
        cwd=cwd,
        source=text(data, "source") or text(data, "trigger"),
        prompt=_prompt(data),
        touched=touched,
        tool_use_id=text(data, "tool_use_id")
        or text(data, "call_id")
        or (_call_key(data) if kind in ("after-tool", "pre-tool") else None),
    )

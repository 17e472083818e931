"""An agent's hook input (a JSON object) as a neutral ``HookEvent``, read through the agent's
record (``agents/record.py``): its event names, payload fields and tools are data there, and
this one reader serves every agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dsh_sidecar.agents.record import AgentRecord, Hooks, Payload, Tool

from .event import HookEvent, Kind
from .payload import absolute, cwd_of, mapping, required, text
from .tool_paths import touched_by

TOOL_KINDS = ("after-tool", "pre-tool")


def parse(record: AgentRecord, data: Mapping[str, Any]) -> HookEvent:
    hooks = record.hooks
    assert hooks is not None  # registry.hook_record
    fields = hooks.payload
    name = (
        text(data, fields.event_name) or fields.unnamed_event or required(data, fields.event_name)
    )
    cwd = cwd_of(data)
    kind = _kind(hooks, name)
    touched: tuple[str, ...] = ()
    scanned: frozenset[str] = frozenset()
    failed = fields.failed is not None and bool(
        mapping(data, fields.tool_output).get(fields.failed)
    )
    if kind in TOOL_KINDS and not failed:
        tool = hooks.tool(text(data, fields.tool_name) or "")
        if tool is not None:
            arguments = mapping(data, fields.tool_input)
            touched = touched_by(tool, arguments, cwd, after=kind == "after-tool")
            if not tool.loads_after:
                output = mapping(data, fields.tool_output) if kind == "after-tool" else None
                scanned = frozenset(touched) - _read_by_agent(tool, arguments, cwd, output)
    elif kind == "loaded" and fields.loaded_path is not None:
        path = text(data, fields.loaded_path)
        touched = (absolute(path, cwd),) if path else ()
    keyed = fields.call_key == "digest" and kind in TOOL_KINDS
    compacting = name == hooks.compact_event
    return HookEvent(
        agent=record.id,
        kind=kind,
        name=name,
        session_id=_session(data, fields),
        cwd=cwd,
        # The agent's compaction event names no source: it is this one.
        source="compact" if compacting else _first(data, fields.source),
        compacting=compacting,
        trigger=text(data, fields.trigger) if compacting else None,
        prompt=_prompt(data, fields.prompt_field, stripped=fields.prompt != "as-is"),
        touched=touched,
        scanned=scanned,
        tool_use_id=_first(data, fields.tool_use_id)
        or (_call_key(record.id, fields, data) if keyed else None)
        or (_first(data, (fields.prompt_key,)) if kind == "prompt" and fields.prompt_key else None),
        agent_id=text(data, fields.subagent_id) if fields.subagent_id else None,
        agent_type=text(data, fields.subagent_type) if fields.subagent_type else None,
    )


def _read_by_agent(
    tool: Tool, arguments: Mapping[str, Any], cwd: str, output: Mapping[str, Any] | None
) -> frozenset[str]:
    """The files of a shell command that the agent itself takes as read (``Tool.shell_reads``):
    its model of what it loads is asked about them, as after its file tools. ``output``: the
    call's result after it ran (some reads count only by how it ended), None before."""
    command = text(arguments, tool.fields[0]) if tool.shell_reads == "claude-code" else None
    if command is None:
        return frozenset()
    from .claude_shell_reads import claude_reads  # only for such a command

    return frozenset(claude_reads(command, cwd, output))


def _session(data: Mapping[str, Any], fields: Payload) -> str:
    """The agent session the event belongs to: a subagent's events may name their main session
    in ``parent_session`` (their ``session_id`` being the subagent's own)."""
    parent = text(data, fields.parent_session) if fields.parent_session else None
    return parent or required(data, fields.session_id)


def _kind(hooks: Hooks, name: str) -> Kind:
    return hooks.kinds().get(name, "other")


def _first(data: Mapping[str, Any], fields: tuple[str, ...]) -> str | None:
    for field in fields:
        found = text(data, field)
        if found is not None:
            return found
    return None


# An agent that puts earlier hooks' text before the prompt it hands its prompt hook (Gemini
# CLI): that text is not the user's.
_HOOK_CONTEXT = re.compile(r"\A(?:\s*<hook_context>.*?</hook_context>)+\s*", re.DOTALL)


def _prompt(data: Mapping[str, Any], field: str, *, stripped: bool) -> str | None:
    prompt = text(data, field)
    if prompt is None or not stripped:
        return prompt
    return _HOOK_CONTEXT.sub("", prompt)


def _call_key(agent: str, fields: Payload, data: Mapping[str, Any]) -> str | None:
    """For an agent that sends no tool-call id: the call's timestamp, tool and input stand for
    one, so a retried hook (the same payload) is still recognised."""
    stamp = text(data, fields.timestamp)
    if stamp is None:
        return None
    import hashlib  # only for an agent without call ids: off the others' hook path
    import json

    call = [stamp, data.get(fields.tool_name), data.get(fields.tool_input)]
    body = json.dumps(call, sort_keys=True)
    return f"{agent}-" + hashlib.sha1(body.encode("utf-8")).hexdigest()

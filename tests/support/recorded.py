"""Recorded requests and what the model saw in them.

``parts_of(request)`` flattens one request body (any of the four wire APIs) into the pieces of
text the model receives, in order, each with its role and kind; ``texts_of`` gives just the
texts. Tool *definitions* are left out (they are the agent's, not the conversation), so
counting a marker counts the times the model was shown it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from tests.support.steps import Step

Api = Literal["anthropic", "openai", "gemini", "chat", "other"]
Kind = Literal["system", "text", "tool_call", "tool_result"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the CLI sent it."""

    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # parsed JSON, or None
    api: Api
    main: bool  # the agent asked for its next step (it took one step of the script)
    step: Step | None = None  # what the fake answered a main request with
    # The prompt size the fake reported in a Chat Completions answer's usage (None: its default).
    prompt_tokens: int | None = None


@dataclass(frozen=True)
class Part:
    role: str  # system, user, assistant, developer, tool, model, ...
    kind: Kind
    text: str


def parts_of(request: RecordedRequest) -> list[Part]:
    body = request.body
    if not isinstance(body, dict):
        return []
    if request.api == "anthropic":
        return list(_anthropic(body))
    if request.api == "openai":
        return list(_openai(body))
    if request.api == "gemini":
        return list(_gemini(body))
    if request.api == "chat":
        return list(_chat(body))
    return []


def texts_of(request: RecordedRequest) -> list[str]:
    return [part.text for part in parts_of(request)]


def count_in(request: RecordedRequest, marker: str) -> int:
    """How many times the model was shown ``marker`` in this request."""
    return sum(text.count(marker) for text in texts_of(request))


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, depth first (for tool results of any shape), except
    the ``type`` tags of content blocks."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "type":
                yield from _strings(item)


def _anthropic(body: dict[str, Any]) -> Iterator[Part]:
    system = body.get("system")
    if isinstance(system, str):
        yield Part("system", "system", system)
    elif isinstance(system, list):
        for block in system:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield Part("system", "system", block["text"])
    for message in body.get("messages") or []:
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            yield Part(role, "text", content)
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                yield Part(role, "text", block.get("text", ""))
            elif kind == "tool_use":
                yield Part(role, "tool_call", json.dumps(block.get("input")))
            elif kind == "tool_result":
                for text in _strings(block.get("content")):
                    yield Part(role, "tool_result", text)


def _openai(body: dict[str, Any]) -> Iterator[Part]:
    if isinstance(body.get("instructions"), str):
        yield Part("system", "system", body["instructions"])
    items = body.get("input")
    if isinstance(items, str):
        yield Part("user", "text", items)
        return
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message":
            role = str(item.get("role"))
            content = item.get("content")
            if isinstance(content, str):
                yield Part(role, "text", content)
                continue
            for block in content or []:
                if isinstance(block.get("text"), str):
                    yield Part(role, "text", block["text"])
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            payload = item.get("arguments") or item.get("input") or item.get("action")
            yield Part(
                "assistant",
                "tool_call",
                payload if isinstance(payload, str) else json.dumps(payload),
            )
        elif kind.endswith("_output"):
            for text in _strings(item.get("output")):
                yield Part("tool", "tool_result", text)


def _gemini(body: dict[str, Any]) -> Iterator[Part]:
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        for part in system.get("parts") or []:
            if isinstance(part.get("text"), str):
                yield Part("system", "system", part["text"])
    for content in body.get("contents") or []:
        role = str(content.get("role"))
        for part in content.get("parts") or []:
            if isinstance(part.get("text"), str):
                yield Part(role, "text", part["text"])
            elif "functionCall" in part:
                yield Part(role, "tool_call", json.dumps(part["functionCall"].get("args")))
            elif "functionResponse" in part:
                for text in _strings(part["functionResponse"].get("response")):
                    yield Part(role, "tool_result", text)


def _chat(body: dict[str, Any]) -> Iterator[Part]:
    """OpenAI Chat Completions: ``messages`` of system/developer/user/assistant/tool."""
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        kind: Kind = (
            "tool_result"
            if role == "tool"
            else "system"
            if role
            in (
                "system",
                "developer",
            )
            else "text"
        )
        content = message.get("content")
        if isinstance(content, str):
            yield Part(role, kind, content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    yield Part(role, kind, block["text"])
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                yield Part(role, "tool_call", str(function.get("arguments", "")))

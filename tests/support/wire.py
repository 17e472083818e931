"""The fake model's answers, per wire API: a step becomes that API's JSON or SSE events.

Main requests are answered with their script step; anything else gets a short, valid answer
(count_tokens a number, a JSON-schema request an object built from its schema, other
requests ``SIDE_TEXT``).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.recorded import RecordedRequest
from tests.support.steps import (
    DONE_TEXT,
    Call,
    EditFile,
    ReadFile,
    Shell,
    Text,
    ToolCall,
    WriteFile,
    calls_of,
)

SIDE_TEXT = "ok"
NewId = Callable[[str], str]


@dataclass(frozen=True)
class Json:
    status: int
    payload: Any


@dataclass(frozen=True)
class RawData:
    """An SSE ``data:`` line sent as written, not as JSON (Chat Completions' ``[DONE]``)."""

    text: str


@dataclass(frozen=True)
class Sse:
    events: list[tuple[str | None, Any]]  # (event name or None, data)


Answer = Json | Sse


def answer(request: RecordedRequest, new_id: NewId) -> Answer:
    if request.api == "anthropic":
        return _anthropic(request, new_id)
    if request.api == "openai":
        return _openai(request, new_id)
    if request.api == "gemini":
        return _gemini(request)
    if request.api == "chat":
        return _chat(request, new_id)
    return Json(404, {"error": {"message": f"fake model: no route for {request.path}"}})


def _text_of(request: RecordedRequest) -> str:
    step = request.step
    if isinstance(step, Text):
        return step.text
    return DONE_TEXT if request.main else SIDE_TEXT


# --- Anthropic Messages ------------------------------------------------------------------------


def _claude_call(call: Call) -> tuple[str, dict[str, Any]]:
    if isinstance(call, ReadFile):
        return "Read", {"file_path": call.path}
    if isinstance(call, WriteFile):
        return "Write", {"file_path": call.path, "content": call.content}
    if isinstance(call, EditFile):
        return "Edit", {"file_path": call.path, "old_string": call.old, "new_string": call.new}
    if isinstance(call, Shell):
        return "Bash", {"command": call.command}
    return call.name, call.arguments


def _anthropic(request: RecordedRequest, new_id: NewId) -> Answer:
    body = request.body if isinstance(request.body, dict) else {}
    if request.path.endswith("/count_tokens"):
        return Json(200, {"input_tokens": 1000})
    if request.path != "/v1/messages":
        return Json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
    calls = calls_of(request.step) if request.step is not None else ()
    blocks: list[dict[str, Any]] = []
    if calls:
        for call in calls:
            name, arguments = _claude_call(call)
            blocks.append(
                {"type": "tool_use", "id": new_id("toolu"), "name": name, "input": arguments}
            )
    else:
        blocks.append({"type": "text", "text": _text_of(request)})
    stop = "tool_use" if calls else "end_turn"
    message = {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-fake"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    if not body.get("stream"):
        return Json(200, message)
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
        ),
    ]
    for index, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return Sse(events)


# --- OpenAI Responses (Codex CLI) ---------------------------------------------------------------


def _tool_names(body: dict[str, Any]) -> dict[str, str]:
    """Declared tool name -> its type (``function``, ``custom``, ...)."""
    names: dict[str, str] = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            names[tool["name"]] = str(tool.get("type"))
    return names


def _patch(call: WriteFile | EditFile) -> str:
    if isinstance(call, WriteFile):
        added = "".join(f"+{line}\n" for line in call.content.splitlines())
        return f"*** Begin Patch\n*** Add File: {call.path}\n{added}*** End Patch\n"
    old = "".join(f"-{line}\n" for line in call.old.splitlines())
    new = "".join(f"+{line}\n" for line in call.new.splitlines())
    return f"*** Begin Patch\n*** Update File: {call.path}\n@@\n{old}{new}*** End Patch\n"


def _codex_item(call: Call, tools: dict[str, str], call_id: str) -> dict[str, Any]:
    if isinstance(call, ToolCall):
        return _function_call(call.name, call.arguments, call_id)
    if isinstance(call, WriteFile | EditFile):
        patch = _patch(call)
        kind = tools.get("apply_patch")
        if kind == "custom":
            return {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": patch,
                "call_id": call_id,
            }
        if kind == "function":
            return _function_call("apply_patch", {"input": patch}, call_id)
        command = f"apply_patch <<'PATCH'\n{patch}PATCH\n"
    elif isinstance(call, ReadFile):
        command = f"cat {shlex.quote(call.path)}"
    else:
        command = call.command
    if "exec_command" in tools:
        return _function_call("exec_command", {"cmd": command}, call_id)
    if "shell_command" in tools:
        return _function_call("shell_command", {"command": command}, call_id)
    return _function_call("shell", {"command": ["bash", "-lc", command]}, call_id)


def _function_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": call_id,
    }


def _openai(request: RecordedRequest, new_id: NewId) -> Answer:
    body = request.body if isinstance(request.body, dict) else {}
    response_id = new_id("resp")
    calls = calls_of(request.step) if request.step is not None else ()
    tools = _tool_names(body)
    items: list[dict[str, Any]] = []
    for call in calls:
        items.append({**_codex_item(call, tools, new_id("call")), "id": new_id("fc")})
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}})
    ]
    if not calls:
        text = _text_of(request)
        item_id = new_id("msg")
        items.append(
            {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for index, item in enumerate(items):
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    "id": response_id,
                    "status": "completed",
                    "output": items,
                    "usage": usage,
                },
            },
        )
    )
    return Sse(events)


# --- Gemini -------------------------------------------------------------------------------------


def _gemini_call(call: Call) -> tuple[str, dict[str, Any]]:
    if isinstance(call, ReadFile):
        return "read_file", {"file_path": call.path}
    if isinstance(call, WriteFile):
        return "write_file", {"file_path": call.path, "content": call.content}
    if isinstance(call, EditFile):
        return "replace", {
            "file_path": call.path,
            "old_string": call.old,
            "new_string": call.new,
            "instruction": "Apply the requested edit.",
        }
    if isinstance(call, Shell):
        return "run_shell_command", {"command": call.command}
    return call.name, call.arguments


def from_schema(schema: Any) -> Any:
    """A small valid instance of a JSON schema. Enums prefer ``user`` (Gemini's next-speaker
    check then hands the turn back); numbers are at least 1 (its routing check wants a
    ``complexity_score`` >= 1)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        values = schema["enum"]
        return "user" if "user" in values else values[0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: from_schema(sub) for name, sub in properties.items()}
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return max(1, int(low)) if kind == "integer" else max(1.0, float(low))
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return SIDE_TEXT


_USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _gemini(request: RecordedRequest) -> Answer:
    body = request.body if isinstance(request.body, dict) else {}
    if request.path.endswith(":countTokens"):
        return Json(200, {"totalTokens": 1000})
    if request.path.endswith(":generateContent"):
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        text = json.dumps(from_schema(schema)) if schema else SIDE_TEXT
        candidate = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP",
            "index": 0,
        }
        return Json(200, {"candidates": [candidate], "usageMetadata": _USAGE})
    if not request.path.endswith(":streamGenerateContent"):
        return Json(404, {"error": {"code": 404, "message": "fake model: no route"}})
    calls = calls_of(request.step) if request.step is not None else ()
    parts: list[dict[str, Any]] = []
    if calls:
        for call in calls:
            name, arguments = _gemini_call(call)
            parts.append({"functionCall": {"name": name, "args": arguments}})
    else:
        parts = [{"text": _text_of(request)}]
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    return Sse([(None, {"candidates": [candidate], "usageMetadata": _USAGE})])


# --- OpenAI Chat Completions (GitHub Copilot CLI, Qwen Code) ------------------------------------

# For each step, the tools that do it, in the order tried: Copilot CLI's names first, then Qwen
# Code's. The first one the request declares is called.
_CHAT_TOOLS: dict[type, tuple[str, ...]] = {
    ReadFile: ("view", "read_file"),
    WriteFile: ("create", "write_file"),
    EditFile: ("edit", "replace"),
    Shell: ("bash", "run_shell_command"),
}
_PATH_NAMES = ("path", "file_path", "absolute_path")


def _declared(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Declared function name -> its parameters schema."""
    out: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            out[function["name"]] = parameters if isinstance(parameters, dict) else {}
    return out


def _chat_call(call: Call, declared: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    if isinstance(call, ToolCall):
        return call.name, call.arguments
    candidates = _CHAT_TOOLS[type(call)]
    name = next((n for n in candidates if n in declared), candidates[0])
    schema = declared.get(name, {})
    properties = schema.get("properties") or {}
    path_name = next((n for n in _PATH_NAMES if n in properties), "path")
    arguments: dict[str, Any]
    if isinstance(call, ReadFile):
        arguments = {path_name: call.path}
    elif isinstance(call, WriteFile):
        text_name = "file_text" if "file_text" in properties else "content"
        arguments = {path_name: call.path, text_name: call.content}
    elif isinstance(call, EditFile):
        old, new = (
            ("old_str", "new_str") if "old_str" in properties else ("old_string", "new_string")
        )
        arguments = {path_name: call.path, old: call.old, new: call.new}
    else:
        arguments = {"command": call.command}
    # Fill whatever else the tool requires (Copilot's bash wants a description, ...).
    for required in schema.get("required") or []:
        if required not in arguments and required in properties:
            arguments[required] = from_schema(properties[required])
    return name, arguments


def _chat(request: RecordedRequest, new_id: NewId) -> Answer:
    body = request.body if isinstance(request.body, dict) else {}
    model = str(body.get("model") or "fake-model")
    if request.path.startswith("/v1/models"):
        return Json(200, {"object": "list", "data": [_model_entry(model)]})
    if request.path != "/v1/chat/completions":
        return Json(404, {"error": {"message": f"fake model: no route for {request.path}"}})
    calls = calls_of(request.step) if request.step is not None else ()
    declared = _declared(body)
    tool_calls = []
    for call in calls:
        name, arguments = _chat_call(call, declared)
        tool_calls.append(
            {
                "id": new_id("call"),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        )
    finish = "tool_calls" if tool_calls else "stop"
    text = None if tool_calls else _text_of(request)
    completion_id = new_id("chatcmpl")
    prompt_tokens = 10 if request.prompt_tokens is None else request.prompt_tokens
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 5,
        "total_tokens": prompt_tokens + 5,
    }
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return Json(
            200,
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant"}, None))]
    if text is not None:
        events.append((None, chunk({"content": text}, None)))
    for index, tool_call in enumerate(tool_calls):
        events.append((None, chunk({"tool_calls": [{"index": index, **tool_call}]}, None)))
    events.append((None, {**chunk({}, finish), "usage": usage}))
    events.append((None, RawData("[DONE]")))
    return Sse(events)


def _model_entry(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "fake"}

"""The fake model endpoint itself (tests/support/fake_model.py), without any agent CLI: a script
step becomes each wire API's tool call, side requests never take a step, and the flattening
helpers see what a model would."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.fake_model import FakeModel
from tests.support.recorded import count_in, parts_of
from tests.support.steps import DONE_TEXT, EditFile, ReadFile, Shell, Text, WriteFile
from tests.support.wire import from_schema


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def _post(model: FakeModel, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        model.base_url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["content-type"], response.read()


def _sse(raw: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in raw.decode().splitlines()
        if line.startswith("data: ")
    ]


def test_anthropic_tool_call_then_text(model: FakeModel) -> None:
    model.script([ReadFile("/abs/x.py"), Text("bye")])
    body = {
        "stream": True,
        "tools": [{"name": "Read"}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    kind, raw = _post(model, "/v1/messages?beta=true", body)
    assert kind == "text/event-stream"
    events = _sse(raw)
    assert events[0]["type"] == "message_start"
    start = next(e for e in events if e["type"] == "content_block_start")
    assert start["content_block"]["name"] == "Read"
    delta = next(e for e in events if e["type"] == "content_block_delta")
    assert json.loads(delta["delta"]["partial_json"]) == {"file_path": "/abs/x.py"}
    assert any(e.get("delta", {}).get("stop_reason") == "tool_use" for e in events)
    # A side request (no tools, no stream) gets plain JSON and takes no step.
    kind, raw = _post(model, "/v1/messages?beta=true", {"messages": []})
    assert kind == "application/json" and json.loads(raw)["content"][0]["type"] == "text"
    _, raw = _post(model, "/v1/messages?beta=true", body)
    texts = [
        e["delta"]["text"] for e in _sse(raw) if e.get("delta", {}).get("type") == "text_delta"
    ]
    assert texts == ["bye"]
    _, raw = _post(model, "/v1/messages?beta=true", body)  # the script is used up
    assert DONE_TEXT in raw.decode()
    assert [r.main for r in model.requests] == [True, False, True, True]
    assert model.requests[0].query == {"beta": ["true"]}


def test_codex_gets_exec_command_and_a_freeform_patch(model: FakeModel) -> None:
    tools = [
        {"type": "function", "name": "exec_command"},
        {"type": "custom", "name": "apply_patch"},
    ]
    model.script(
        [ReadFile("a b.py"), WriteFile("n.py", "X = 1\n"), EditFile("n.py", "X = 1", "X = 2")]
    )
    items = []
    for _ in range(3):
        _, raw = _post(model, "/v1/responses", {"tools": tools, "input": []})
        events = _sse(raw)
        assert events[-1]["type"] == "response.completed"
        items += [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert items[0]["name"] == "exec_command"
    assert json.loads(items[0]["arguments"]) == {"cmd": "cat 'a b.py'"}
    assert items[1]["type"] == "custom_tool_call" and items[1]["name"] == "apply_patch"
    assert "*** Add File: n.py\n+X = 1\n" in items[1]["input"]
    assert "*** Update File: n.py\n@@\n-X = 1\n+X = 2\n" in items[2]["input"]


def test_gemini_function_call_and_schema_answers(model: FakeModel) -> None:
    model.script([ReadFile("x.py")])
    body: dict[str, Any] = {"tools": [{"functionDeclarations": []}], "contents": []}
    _, raw = _post(model, "/v1beta/models/m:streamGenerateContent?alt=sse", body)
    (chunk,) = _sse(raw)
    part = chunk["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"name": "read_file", "args": {"file_path": "x.py"}}}
    schema = {
        "type": "OBJECT",
        "properties": {
            "complexity_reasoning": {"type": "STRING"},
            "complexity_score": {"type": "INTEGER"},
            "next_speaker": {"type": "string", "enum": ["model", "user"]},
        },
    }
    _, raw = _post(
        model,
        "/v1beta/models/lite:generateContent",
        {"generationConfig": {"responseJsonSchema": schema}},
    )
    answer = json.loads(json.loads(raw)["candidates"][0]["content"]["parts"][0]["text"])
    assert answer == {"complexity_reasoning": "ok", "complexity_score": 1, "next_speaker": "user"}
    assert from_schema({"type": "integer", "minimum": 5}) == 5
    assert [r.main for r in model.requests] == [True, False]


def test_flattening_sees_what_the_model_sees(model: FakeModel) -> None:
    bodies: dict[str, dict[str, Any]] = {
        "/v1/messages": {
            "tools": [{"name": "Read", "description": "MARK in a tool definition"}],
            "system": [{"type": "text", "text": "sys MARK"}],
            "messages": [
                {"role": "user", "content": "MARK prompt"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "input": {"file_path": "/x"}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "content": [{"type": "text", "text": "MARK MARK"}]}
                    ],
                },
            ],
        },
        "/v1/responses": {
            "tools": [{"type": "function", "name": "exec_command", "description": "MARK"}],
            "instructions": "MARK",
            "input": [
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "MARK"}],
                },
                {"type": "function_call", "name": "exec_command", "arguments": "{}"},
                {"type": "function_call_output", "output": "MARK"},
            ],
        },
        "/v1beta/models/m:streamGenerateContent": {
            "tools": [{"functionDeclarations": [{"name": "read_file", "description": "MARK"}]}],
            "systemInstruction": {"parts": [{"text": "MARK"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "MARK"}]},
                {"role": "user", "parts": [{"functionResponse": {"response": {"output": "MARK"}}}]},
            ],
        },
    }
    for path, body in bodies.items():
        _post(model, path, body)
    anthropic, openai, gemini = model.requests
    assert count_in(anthropic, "MARK") == 4  # not the tool definition
    assert [p.kind for p in parts_of(anthropic)] == ["system", "text", "tool_call", "tool_result"]
    assert count_in(openai, "MARK") == 3
    assert [p.role for p in parts_of(openai)] == ["system", "developer", "assistant", "tool"]
    assert count_in(gemini, "MARK") == 3
    assert model.count_in_last_request("MARK") == 3


def _chat_tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


STRING = {"type": "string"}


def test_chat_completions_call_each_cli_s_own_tools(model: FakeModel) -> None:
    """Copilot CLI's view/bash (bash requires a description) and Qwen Code's read_file are
    called with the argument names their schemas declare; streamed chunks end in [DONE]."""
    copilot = [
        _chat_tool("view", {"path": STRING}, ["path"]),
        _chat_tool("bash", {"command": STRING, "description": STRING}, ["command", "description"]),
    ]
    qwen = [_chat_tool("read_file", {"file_path": STRING}, ["file_path"])]
    model.script([ReadFile("/abs/x.py"), Shell("ls"), ReadFile("/abs/y.py"), Text("bye")])
    answers = []
    for tools in (copilot, copilot, qwen):
        kind, raw = _post(model, "/v1/chat/completions", {"stream": True, "tools": tools})
        assert kind == "text/event-stream" and raw.decode().rstrip().endswith("data: [DONE]")
        chunks = [json.loads(x) for x in _sse_data(raw) if x != "[DONE]"]
        (call,) = [
            c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls", [])
        ]
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
        answers.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
    assert answers == [
        ("view", {"path": "/abs/x.py"}),
        ("bash", {"command": "ls", "description": "ok"}),
        ("read_file", {"file_path": "/abs/y.py"}),
    ]
    # Not streamed: one completion. A request without tools is a side request (no step taken).
    _, raw = _post(model, "/v1/chat/completions", {"tools": copilot, "messages": []})
    assert json.loads(raw)["choices"][0]["message"] == {"role": "assistant", "content": "bye"}
    _, raw = _post(model, "/v1/chat/completions", {"messages": []})
    assert json.loads(raw)["choices"][0]["message"]["content"] == "ok"
    assert [r.main for r in model.requests] == [True, True, True, True, False]


def test_chat_completions_flattening(model: FakeModel) -> None:
    body = {
        "tools": [_chat_tool("view", {"path": {"type": "string", "description": "MARK"}}, [])],
        "messages": [
            {"role": "system", "content": "MARK"},
            {"role": "user", "content": [{"type": "text", "text": "MARK MARK"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "view", "arguments": '{"path": "MARK"}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "MARK"},
        ],
    }
    _post(model, "/v1/chat/completions", body)
    (request,) = model.requests
    assert [(p.role, p.kind) for p in parts_of(request)] == [
        ("system", "system"),
        ("user", "text"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
    ]
    assert model.count_in_last_request("MARK") == 5  # not the tool definition


def _sse_data(raw: bytes) -> list[str]:
    return [
        line[len("data: ") :] for line in raw.decode().splitlines() if line.startswith("data: ")
    ]

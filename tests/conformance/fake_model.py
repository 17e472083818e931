"""A fake model endpoint on 127.0.0.1 for the conformance runs: it speaks just enough of the
Anthropic Messages, OpenAI Responses and Gemini APIs for one headless turn, logs every request
body, and answers the first agent request with one file read and every later one with text.

The file to read is set per run (``expect_read``); each CLI gets the call its own tools take:
Claude ``Read`` (absolute path), Codex ``exec_command`` (``cat`` of the path relative to the
cwd), Gemini ``read_file``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.define
class Exchange:
    path: str
    body: str


@attrs.define
class ReadPlan:
    absolute: str | None = None  # Claude, Gemini
    relative: str | None = None  # Codex's cat


class FakeModel:
    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.plan = ReadPlan()
        self.lock = threading.Lock()
        handler = _handler(self)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self, plan: ReadPlan) -> None:
        with self.lock:
            self.exchanges = []
            self.plan = plan

    def record(self, path: str, body: str) -> None:
        with self.lock:
            self.exchanges.append(Exchange(path, body))


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_HEAD(self) -> None:
            self._json({})

        def do_GET(self) -> None:
            self._json({"data": [], "models": []})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            model.record(self.path, raw)
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {}
            path = self.path
            if "/messages" in path:
                self._anthropic(body)
            elif "/responses" in path:
                self._openai(body)
            elif ":streamGenerateContent" in path:
                self._gemini_stream(body)
            elif ":generateContent" in path:
                self._gemini_route()
            elif ":countTokens" in path:
                self._json({"totalTokens": 1})
            else:
                self._json({})

        # --- plumbing ---------------------------------------------------------------------

        def _json(self, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: Iterator[tuple[str | None, Any]]) -> None:
            chunks = []
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                chunks.append(f"{head}data: {json.dumps(data)}\n\n")
            payload = "".join(chunks).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        # --- Anthropic ----------------------------------------------------------------------

        def _anthropic(self, body: dict[str, Any]) -> None:
            tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
            messages = body.get("messages") or []
            answered = any(
                isinstance(part, dict) and part.get("type") == "tool_result"
                for m in messages
                if isinstance(m, dict) and isinstance(m.get("content"), list)
                for part in m["content"]
            )
            read = model.plan.absolute if "Read" in tools and not answered else None
            if read is not None:
                block: dict[str, Any] = {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "Read",
                    "input": {},
                }
                delta = {
                    "type": "input_json_delta",
                    "partial_json": json.dumps({"file_path": read}),
                }
                stop = "tool_use"
            else:
                block = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": "done"}
                stop = "end_turn"
            if not body.get("stream"):
                content = (
                    [
                        {
                            "type": "tool_use",
                            "id": "toolu_01",
                            "name": "Read",
                            "input": {"file_path": read},
                        }
                    ]
                    if read
                    else [{"type": "text", "text": "done"}]
                )
                self._json(
                    {
                        "id": "msg_01",
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model", "m"),
                        "content": content,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    }
                )
                return
            message = {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "m"),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
            self._sse(
                iter(
                    [
                        ("message_start", {"type": "message_start", "message": message}),
                        (
                            "content_block_start",
                            {"type": "content_block_start", "index": 0, "content_block": block},
                        ),
                        (
                            "content_block_delta",
                            {"type": "content_block_delta", "index": 0, "delta": delta},
                        ),
                        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                        (
                            "message_delta",
                            {
                                "type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 1},
                            },
                        ),
                        ("message_stop", {"type": "message_stop"}),
                    ]
                )
            )

        # --- OpenAI Responses ---------------------------------------------------------------

        def _openai(self, body: dict[str, Any]) -> None:
            items = body.get("input") or []
            answered = any(
                isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
            )
            read = model.plan.relative if not answered else None
            if read is not None:
                item: dict[str, Any] = {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": f"cat {read}"}),
                    "status": "completed",
                }
            else:
                item = {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "done", "annotations": []}],
                }
            usage = {
                "input_tokens": 1,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 1,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 2,
            }
            self._sse(
                iter(
                    [
                        (
                            "response.created",
                            {"type": "response.created", "response": {"id": "resp_1"}},
                        ),
                        (
                            "response.output_item.done",
                            {"type": "response.output_item.done", "output_index": 0, "item": item},
                        ),
                        (
                            "response.completed",
                            {
                                "type": "response.completed",
                                "response": {"id": "resp_1", "usage": usage},
                            },
                        ),
                    ]
                )
            )

        # --- Gemini -------------------------------------------------------------------------

        def _gemini_stream(self, body: dict[str, Any]) -> None:
            contents = body.get("contents") or []
            answered = any(
                isinstance(part, dict) and "functionResponse" in part
                for c in contents
                if isinstance(c, dict)
                for part in c.get("parts") or []
            )
            read = model.plan.absolute if not answered else None
            part: dict[str, Any]
            if read is not None:
                part = {"functionCall": {"name": "read_file", "args": {"file_path": read}}}
            else:
                part = {"text": "done"}
            chunk = {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [part]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 1,
                    "candidatesTokenCount": 1,
                    "totalTokenCount": 2,
                },
            }
            self._sse(iter([(None, chunk)]))

        def _gemini_route(self) -> None:
            text = json.dumps({"complexity_reasoning": "simple", "complexity_score": 1})
            self._json(
                {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": {
                        "promptTokenCount": 1,
                        "candidatesTokenCount": 1,
                        "totalTokenCount": 2,
                    },
                }
            )

    return Handler

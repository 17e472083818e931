"""A scripted fake model endpoint on 127.0.0.1 for driving the real agent CLIs.

One threaded HTTP server speaks the four wire APIs the CLIs use:

- Anthropic Messages (Claude Code): ``POST /v1/messages?beta=true`` (SSE when the body asks
  for a stream, JSON otherwise) and ``/v1/messages/count_tokens``.
- OpenAI Responses (Codex CLI): ``POST /v1/responses`` (SSE).
- OpenAI Chat Completions (GitHub Copilot CLI, Qwen Code): ``POST /v1/chat/completions`` (SSE
  chunks when the body asks for a stream, one JSON completion otherwise) and ``GET /v1/models``.
- Gemini (Gemini CLI): ``POST /v1beta/models/M:streamGenerateContent`` (SSE) and
  ``:generateContent`` (JSON; its routing and next-speaker checks ask for a JSON schema and get an
  object built from it), ``:countTokens``.

A *main* request is one where the agent asks for its next step (the body declares tools): it
takes the next step of the script (tests/support/steps.py), and once the script is used up the
model answers ``DONE_TEXT``. Side requests (titles, quota probes, schema checks) get a short
answer and never take a step. Every request is recorded in arrival order, thread-safely.

    with FakeModel() as model:
        model.script([ReadFile(str(path)), Text("the answer")])
        ...  # run a CLI against model.base_url (tests/support/agent_cli.py does this)
        second = model.main_requests()[1]
        assert count_in(second, "MARKER") == 1
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support import wire
from tests.support.recorded import Api, RecordedRequest, count_in
from tests.support.steps import DONE_TEXT, Policy, Step, Text


@dataclass
class _Script:
    steps: list[Step] = field(default_factory=list)
    policy: Policy | None = None

    def next_step(self, request: RecordedRequest) -> Step:
        if self.policy is not None:
            return self.policy(request)
        return self.steps.pop(0) if self.steps else Text(DONE_TEXT)


# How many prompt tokens a Chat Completions answer reports for a request (its usage).
TokenPolicy = Callable[[RecordedRequest], int]


class FakeModel:
    """The server; a context manager that starts and stops it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._script = _Script()
        self._prompt_tokens: TokenPolicy | None = None
        self._ids = itertools.count(1)
        self.errors: list[str] = []  # bodies the fake could not parse
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-model", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, steps: Sequence[Step] | Policy) -> None:
        """Replace the script: steps taken one per main request, or a policy function."""
        with self._lock:
            self._script = _Script(policy=steps) if callable(steps) else _Script(list(steps))

    def report_prompt_tokens(self, policy: TokenPolicy | None) -> None:
        """Report ``policy(request)`` prompt tokens in each Chat Completions answer's usage
        (None: a few): a CLI compacts its history once the reported size nears its window."""
        with self._lock:
            self._prompt_tokens = policy

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.main]

    def count_in_last_request(self, marker: str) -> int:
        """How many times the last main request showed the model ``marker``."""
        main = self.main_requests()
        assert main, "the agent sent no main request to the fake model"
        return count_in(main[-1], marker)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self.errors.clear()

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    def _record(self, request: RecordedRequest) -> RecordedRequest:
        with self._lock:
            if request.main:
                request = replace(request, step=self._script.next_step(request))
            if self._prompt_tokens is not None:
                request = replace(request, prompt_tokens=self._prompt_tokens(request))
            self._requests.append(request)
            return request


def _api_of(path: str) -> Api:
    if path.startswith("/v1/messages"):
        return "anthropic"
    if path.startswith("/v1/responses"):
        return "openai"
    if path.startswith(("/v1/chat/completions", "/v1/models")):
        return "chat"
    if path.startswith("/v1beta/models/"):
        return "gemini"
    return "other"


def _is_main(api: Api, path: str, body: Any) -> bool:
    if not isinstance(body, dict) or not body.get("tools"):
        return False
    if api == "anthropic":
        return path == "/v1/messages"
    if api == "gemini":
        return path.endswith(":streamGenerateContent")
    if api == "chat":
        return path == "/v1/chat/completions"
    return api == "openai"


def _handler_for(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the recording is the log

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            url = urlsplit(self.path)
            body = self._read_body()
            api = _api_of(url.path)
            request = model._record(
                RecordedRequest(
                    method=self.command,
                    path=url.path,
                    query=parse_qs(url.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    api=api,
                    main=_is_main(api, url.path, body),
                )
            )
            # The CLI may hang up (cancelled, timed out): then there is nobody to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(wire.answer(request, model._new_id))

        def _read_body(self) -> Any:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("content-encoding") == "gzip":
                raw = gzip.decompress(raw)
            if not raw:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                model.errors.append(f"{self.command} {self.path}: the body is not JSON")
                return None

        def _send(self, answer: wire.Answer) -> None:
            if isinstance(answer, wire.Json):
                data = json.dumps(answer.payload).encode()
                self.send_response(answer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            # The stream's end is the connection's end: no length is known up front.
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for name, data in answer.events:
                text = data.text if isinstance(data, wire.RawData) else json.dumps(data)
                chunk = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
                self.wfile.write(chunk.encode())
                self.wfile.flush()

    return Handler

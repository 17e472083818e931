"""Every JSON example of docs/protocol.md, replayed against the real server over stdio.

Each ``<!-- golden: NAME [after: DEP, ...] -->`` block is one exchange: a request and its
response, a client notification and the server notifications it causes, or a trigger and the
server notification it causes. A test starts a fresh server, replays the golden's dependencies
(each checked too), then the golden itself. The example project and the isolated store come from
the doc's ``golden-project`` block; volatile values are written as ``"<uuid>"`` and ``"<ms>"``,
and a clock time inside a text (a session's start in a hover) as ``<hh:mm>``.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from dsh_sidecar.protocol import methods
from dsh_sidecar.sessions.store import NO_FSYNC_ENV
from tests.support.forked_servers import server_command
from tests.support.lsp_fixture import lsp_fixture

from . import _docs

SERVER_COMMAND = server_command("serve")
# The same server, with the work of the cancellable methods slowed down so that a
# $/cancelRequest reliably arrives while the request is running.
SLOW_SECONDS = 2.0
SLOW_SERVER_COMMAND = [
    sys.executable,
    "-c",
    f"""
import asyncio
import time
import dsh_sidecar.sessions.touches.queue as projection_queue
import dsh_sidecar.sessions.store as store
import dsh_sidecar.sources.session_reference.resolver as resolver

def slow(fn):
    def wrapper(*args, **kwargs):
        time.sleep({SLOW_SECONDS})
        return fn(*args, **kwargs)
    return wrapper

def slow_wait(fn):
    async def wrapper(*args, **kwargs):
        await asyncio.sleep({SLOW_SECONDS})
        return await fn(*args, **kwargs)
    return wrapper

store.Store.inbox = slow(store.Store.inbox)
resolver.list_candidates = slow(resolver.list_candidates)
# dsh/context/pending answers from memory once the session's queued touches are projected:
# what can keep it waiting is that queue.
projection_queue.ProjectionQueue.drain = slow_wait(projection_queue.ProjectionQueue.drain)
from dsh_sidecar.cli import main
raise SystemExit(main(["serve"]))
""",
]
TEXT = _docs.protocol_text()
GOLDENS = _docs.goldens(TEXT)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DAY_MS = 24 * 3600 * 1000
WAIT_SECONDS = 10.0


# --- the client ---------------------------------------------------------------------------------


def raw_converter() -> Any:
    """lsprotocol's converter, but custom params and results stay plain JSON.

    pygls turns untyped payloads into namedtuples, which rename keys that are not Python
    identifiers; the examples must be compared as the JSON they are.
    """
    converter = converters.get_converter()
    for kind in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(kind, lambda obj, cls: cls(**obj))
    return converter


class RecordingProtocol(LanguageClientProtocol):
    """Records every server-to-client notification as JSON, in arrival order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Named, not super(): mypy's untyped_calls_exclude (pytest-lsp is unannotated) sees the class.
        LanguageClientProtocol.__init__(self, *args, **kwargs)
        self.recorded: list[dict[str, Any]] = []

    def _handle_notification(self, method_name: str, params: Any) -> None:
        self.recorded.append({"method": method_name, "params": wire_json(self._converter, params)})
        # The typed params go on: pytest-lsp's own handlers (log_messages, ...) read attributes.
        LanguageClientProtocol._handle_notification(self, method_name, params)


def wire_json(converter: Any, value: Any) -> Any:
    """``value`` as the JSON it travelled as (typed LSP objects unstructured, enums as values)."""
    if attrs.has(type(value)):
        value = converter.unstructure(value)
    return json.loads(json.dumps(value))


def make_client() -> LanguageClient:
    client = LanguageClient(protocol_cls=RecordingProtocol, converter_factory=raw_converter)
    register_lsp_features(client)

    def _context_did_change(params: Any) -> None:
        """Recorded by the protocol; registered so pygls does not log it as unknown."""

    # Registered by a call, not as a decorator: pygls's ``feature`` carries no annotations.
    client.feature(methods.CONTEXT_DID_CHANGE)(_context_did_change)
    return client


# dsh/explain looks for the agents' user-global files (~/.codex, ~/.claude, ...) in HOME.
EMPTY_HOME = tempfile.mkdtemp(prefix="dsh-golden-home-")
atexit.register(shutil.rmtree, EMPTY_HOME, True)


def server_env() -> dict[str, str]:
    # The examples must not see the developer's DSH_HOME, tmux session or agents' home files.
    hidden = ("DSH_HOME", "TMUX", "TMUX_PANE", "CODEX_HOME")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env["HOME"] = EMPTY_HOME
    env[NO_FSYNC_ENV] = "1"  # the examples are about messages, not surviving power loss
    return env


# --- the example project ------------------------------------------------------------------------


@attrs.define
class Scenario:
    base: Path
    project: Path
    home: Path
    store: Path
    # ${PENDING_ID}: the id of the first message the last dsh/context/pending answered with.
    captured: dict[str, str] = attrs.field(factory=dict)

    @property
    def substitutions(self) -> dict[str, str]:
        return {
            "${PROJECT}": str(self.project),
            "${PROJECT_URI}": self.project.as_uri(),
            **self.captured,
        }

    @property
    def options(self) -> dict[str, Any]:
        return {"store": {"path": str(self.store)}, "instructions": {"dshHome": str(self.home)}}

    def unsubstitute(self, value: Any) -> str:
        text = json.dumps(value, indent=2, ensure_ascii=False)
        text = text.replace(self.project.as_uri(), "${PROJECT_URI}")
        return text.replace(str(self.project), "${PROJECT}")


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    project = tmp_path / "project"
    # Paths go into JSON text verbatim: they must need no escaping.
    assert json.dumps(str(project)) == f'"{project}"'
    for rel, content in _docs.marked_json(TEXT, "golden-project").items():
        path = project / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    home = tmp_path / "dsh-home"
    home.mkdir()
    return Scenario(tmp_path, project, home, tmp_path / "store" / "sessions.sqlite3")


async def initialize(client: LanguageClient, scenario: Scenario) -> None:
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=scenario.project.as_uri(),
            initialization_options=scenario.options,
        )
    )
    client.dsh_initialize_result = result  # type: ignore[attr-defined]


@lsp_fixture(
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, server_env=server_env(), client_factory=make_client
    )
)
async def client(lsp_client: LanguageClient, scenario: Scenario) -> AsyncIterator[None]:
    await initialize(lsp_client, scenario)
    yield
    await lsp_client.shutdown_session()


@lsp_fixture(
    config=ClientServerConfig(
        server_command=SLOW_SERVER_COMMAND, server_env=server_env(), client_factory=make_client
    )
)
async def slow_client(lsp_client: LanguageClient, scenario: Scenario) -> AsyncIterator[None]:
    await initialize(lsp_client, scenario)
    yield
    await lsp_client.shutdown_session()


# --- matching -----------------------------------------------------------------------------------


def mismatch(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where ``actual`` differs from the documented ``expected``, or None when it matches."""
    if expected == "<uuid>":
        ok = isinstance(actual, str) and UUID.fullmatch(actual) is not None
        return None if ok else f"{path}: expected a UUID, got {actual!r}"
    if expected == "<ms>":
        now = int(time.time() * 1000)
        ok = type(actual) is int and abs(actual - now) < DAY_MS
        return None if ok else f"{path}: expected epoch milliseconds near now, got {actual!r}"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {actual!r}"
        if set(expected) != set(actual):
            return (
                f"{path}: keys differ: missing {sorted(set(expected) - set(actual))}, "
                f"unexpected {sorted(set(actual) - set(expected))}"
            )
        for key in expected:
            found = mismatch(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path}: expected a list of {len(expected)}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = mismatch(e, a, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(expected, str) and "<hh:mm>" in expected:
        pattern = r"\d\d:\d\d".join(re.escape(part) for part in expected.split("<hh:mm>"))
        ok = isinstance(actual, str) and re.fullmatch(pattern, actual) is not None
        return None if ok else f"{path}: expected {expected!r} (any hh:mm), got {actual!r}"
    # type() too: JSON tells 1, 1.0 and true apart, Python's == does not.
    if type(expected) is not type(actual) or expected != actual:
        return f"{path}: expected {expected!r}, got {actual!r}"
    return None


def check(name: str, scenario: Scenario, expected: Any, actual: Any, what: str) -> None:
    found = mismatch(expected, actual)
    if found:
        pytest.fail(
            f"golden {name}: the documented {what} differs from the server's at {found}\n"
            f"the server sent:\n{scenario.unsubstitute(actual)}",
            pytrace=False,
        )


# --- replay -------------------------------------------------------------------------------------


def plan(name: str) -> list[str]:
    """``name`` after its dependencies, depth first, each golden once."""
    order: list[str] = []

    def visit(current: str, stack: tuple[str, ...]) -> None:
        if current in stack:
            raise ValueError(f"golden dependency cycle: {' -> '.join((*stack, current))}")
        if current not in GOLDENS:
            raise ValueError(f"golden {stack[-1]} depends on unknown golden {current}")
        for dep in GOLDENS[current].after:
            visit(dep, (*stack, current))
        if current not in order:
            order.append(current)

    visit(name, ())
    return order


def standard_params(method: str, params: Any) -> Any:
    """Typed params for a standard LSP method (pygls serializes those through lsprotocol)."""
    if method.startswith("dsh/"):
        return params
    # lsprotocol's table types its entries loosely (a type, a typing form or None).
    params_type: Any = types.METHOD_TO_TYPES[method][2]
    return converters.get_converter().structure(params, params_type)


async def request(
    client: LanguageClient, scenario: Scenario, name: str, body: dict[str, Any]
) -> None:
    req, resp = body["request"], body["response"]
    assert req["jsonrpc"] == resp["jsonrpc"] == "2.0", f"golden {name}: jsonrpc must be 2.0"
    assert req["id"] == resp["id"], f"golden {name}: response id differs from the request id"
    assert ("result" in resp) != ("error" in resp), f"golden {name}: result xor error"
    method = req["method"]
    params = standard_params(method, req.get("params"))
    try:
        result = await client.protocol.send_request_async(method, params)
    except JsonRpcException as exc:
        error = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        if "error" not in resp:
            pytest.fail(f"golden {name}: documented a result, the server answered {error}")
        check(name, scenario, resp["error"], error, "error")
        return
    if "error" in resp:
        pytest.fail(f"golden {name}: documented an error, the server answered {result!r}")
    answered = wire_json(client.protocol._converter, result)
    check(name, scenario, resp["result"], answered, "result")
    if method == methods.CONTEXT_PENDING and answered["messages"]:
        scenario.captured["${PENDING_ID}"] = answered["messages"][0]["id"]


async def expect_notifications(
    client: LanguageClient, scenario: Scenario, name: str, mark: int, expected: list[dict[str, Any]]
) -> None:
    """Each expected notification arrives after ``mark``, in the documented order."""
    recorded = client.protocol.recorded  # type: ignore[attr-defined]
    position = mark
    for note in expected:
        assert note["jsonrpc"] == "2.0" and "id" not in note, f"golden {name}: not a notification"
        want = {"method": note["method"], "params": note.get("params")}
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            hit = next(
                (i for i in range(position, len(recorded)) if not mismatch(want, recorded[i])),
                None,
            )
            if hit is not None:
                position = hit + 1
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"golden {name}: no {note['method']} notification as documented; "
                    f"the server sent:\n{scenario.unsubstitute(recorded[mark:])}",
                    pytrace=False,
                )
            await asyncio.sleep(0.02)


def notify(client: LanguageClient, message: dict[str, Any]) -> None:
    assert message["jsonrpc"] == "2.0" and "id" not in message, "not a notification"
    method = message["method"]
    client.protocol.notify(method, standard_params(method, message.get("params")))


async def replay(client: LanguageClient, scenario: Scenario, name: str) -> None:
    body = GOLDENS[name].load(scenario.substitutions)
    if "request" in body:
        await request(client, scenario, name, body)
        return
    mark = len(client.protocol.recorded)  # type: ignore[attr-defined]
    if "trigger" in body:
        notify(client, body["trigger"])
        await expect_notifications(client, scenario, name, mark, [body["notification"]])
        return
    notify(client, body["notification"])
    await expect_notifications(client, scenario, name, mark, body.get("then", []))


# --- tests --------------------------------------------------------------------------------------


def test_every_golden_has_a_known_shape() -> None:
    assert GOLDENS, "docs/protocol.md has no golden examples"
    assert sorted(_docs.golden_markers(TEXT)) == sorted(GOLDENS), (
        "a golden marker has no json block"
    )
    for name, golden in GOLDENS.items():
        body = golden.load(
            {"${PROJECT}": "/p", "${PROJECT_URI}": "file:///p", "${PENDING_ID}": "m-1"}
        )
        shape = frozenset(body)
        assert shape in (
            frozenset({"request", "response"}),
            frozenset({"notification"}),
            frozenset({"notification", "then"}),
            frozenset({"trigger", "notification"}),
        ), f"golden {name}: unknown shape {sorted(shape)}"
        message = body.get("request") or body["notification"]
        assert message["method"] == golden.method, (
            f"golden {name}: the example is about {message['method']}, not {golden.method}"
        )
        plan(name)


async def test_initialize_capabilities(client: LanguageClient) -> None:
    result = client.dsh_initialize_result  # type: ignore[attr-defined]
    documented = _docs.marked_json(TEXT, "golden-capabilities")
    assert {"experimental": result.capabilities.experimental} == documented


@pytest.mark.parametrize("name", sorted(GOLDENS))
async def test_golden_example(client: LanguageClient, scenario: Scenario, name: str) -> None:
    for step in plan(name):
        await replay(client, scenario, step)


CANCELLABLE = [
    ("dsh/step/prepare", {"sessionId": "demo", "turn": 1, "step": 1, "prompt": {"text": "hi"}}),
    ("dsh/context/pending", {"sessionId": "demo"}),
    ("dsh/sessionReferences/candidates", {"sessionId": "demo"}),
]


@pytest.mark.parametrize(("method", "params"), CANCELLABLE, ids=[m for m, _ in CANCELLABLE])
async def test_cancelled_request_answers_request_cancelled(
    slow_client: LanguageClient, scenario: Scenario, method: str, params: dict[str, Any]
) -> None:
    """docs/protocol.md, Errors: RequestCancelled (-32800), and a cancelled step writes nothing."""
    await replay(slow_client, scenario, "dsh/session/open")
    msg_id = f"cancel-{method}"
    running = asyncio.ensure_future(
        slow_client.protocol.send_request_async(method, params, msg_id=msg_id)
    )
    await asyncio.sleep(SLOW_SECONDS / 4)  # the request has arrived and is working
    slow_client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException) as caught:
        await running
    assert caught.value.code == -32800, caught.value
    events = await slow_client.protocol.send_request_async(
        "dsh/session/events", {"sessionId": "demo"}
    )
    assert events == {"events": []}, "a cancelled request wrote to the log"
    await asyncio.sleep(SLOW_SECONDS)  # let abandoned worker threads finish before shutdown

"""JSON round-trips of every wire type of protocol/types.py through the server's one converter.

Checks, for each type: structure(unstructure(x)) == x through real JSON text; keys are the
camelCase field names; optional fields without a value are left out (except
``SurfaceResult.capturedThroughSeq`` and ``ScopeFile.bytes``, always sent); and structuring is
strict, naming the offending field by its wire name.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import typing
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from dsh_sidecar.lsp.rpc.converter import describe_structure_error, make_converter
from dsh_sidecar.protocol import types as wt

CONVERTER = make_converter()

MESSAGE = {
    "id": "0d6c2e0e-3d43-4a0e-9a0e-2f3b8f0f6a11",
    "role": "user",
    "content": [{"type": "text", "text": "hello <b>\u00e9"}],
    "source": {"kind": "user", "rpcId": "rpc-1"},
}
CHANGE = {
    "action": "set",
    "scope": "src\u0000AGENTS.md",
    "path": "src/AGENTS.md",
    "digest": "ab" * 20,
}
EVENT = {
    "type": "user/message",
    "seq": 2,
    "time": 1796207231028,
    "data": MESSAGE,
    "surfaceOp": {"op": "replace", "start": 0, "end": 1},
    "sourceEventSeqs": [0, 1],
}
HEADER = wt.SessionHeaderWire(id="demo", created_at=1796207231012, cwd="/p", title="Fix")
IMPORTED_FILE = wt.ImportedFile(
    path="/outside/style.md",
    display_path="/outside/style.md",
    importer="/p/src/AGENTS.md",
    state="outside",
    depth=2,
    bytes=12,
    reason="leads outside the project to /outside/style.md",
    target="/outside/style.md",
)
RULE_INFO = wt.RuleInfo(rule_set="copilot", mode="globs", globs=["**/*.py", "src/**"])
SCOPE_FILE = wt.ScopeFile(
    path="/p/src/AGENTS.md",
    display_path="src/AGENTS.md",
    scope="src\u0000AGENTS.md",
    state="truncated",
    bytes=44,
    digest="cd" * 20,
    reason="truncated from 44 to 10 bytes",
    included_bytes=10,
    target="/p/shared/SRC-AGENTS.md",
    imports=[IMPORTED_FILE],
    rule=RULE_INFO,
)
CANDIDATE = wt.CandidateWire(
    session_id="research",
    label="Parser research",
    created_at=1796207231013,
    mention="@[Parser research](dsh-session:InJlc2VhcmNoIg)",
    cwd="/p",
)
EXPLAIN_SIDECAR_FILE = wt.ExplainSidecarFile(
    path="/p/src/AGENTS.md",
    display_path="src/AGENTS.md",
    scope="src\u0000AGENTS.md",
    state="truncated",
    bytes=44,
    via="touch",
    included_bytes=10,
    digest="cd" * 20,
    reason="truncated from 44 to 10 bytes by the budget of the touch message",
)
EXPLAIN_AGENT_FILE = wt.ExplainAgentFile(
    path="/p/AGENTS.md",
    display_path="AGENTS.md",
    kind="project",
    state="truncated",
    bytes=40000,
    kept_bytes=32768,
    sent_bytes=32768,
    when="start",
    reason="cut from 40,000 to 32,768 bytes",
    boundary="links outside the project to /q/AGENTS.md: this sidecar does not read it",
)
EXPLAIN_DIFFERENCE = wt.ExplainDifference(path="/p/x", display_path="x", reason="why")
EXPLAIN_LIMIT = wt.ExplainSizeLimit(setting="project_doc_max_bytes", bytes=32768, cut="root-first")
EXPLAIN_SOURCE = wt.ExplainSource(url="https://example.com/docs", checked="2026-12-03")
EXPLAIN_VERIFIED = wt.ExplainVerified(version="0.171.0", package="@openai/codex")
NOT_READ = wt.NotReadFiles(
    agent="Gemini CLI",
    effect="GEMINI.md holds a directory's instructions",
    paths=["GEMINI.md"],
    enable='add "GEMINI.md" to instructions.instructionFileCandidates',
    setting="instructions.instructionFileCandidates",
)
EXPLAIN_AGENT = wt.ExplainAgent(
    id="codex",
    name="Codex CLI",
    working_directory="/p",
    order="root first",
    files=[EXPLAIN_AGENT_FILE],
    only_agent=[EXPLAIN_DIFFERENCE],
    only_sidecar=[EXPLAIN_DIFFERENCE],
    sources=[EXPLAIN_SOURCE],
    undocumented=["a gap"],
    size_limit=EXPLAIN_LIMIT,
    verified=EXPLAIN_VERIFIED,
)
EXPLAIN_SIDECAR = wt.ExplainSidecar(files=[EXPLAIN_SIDECAR_FILE], max_bytes=65536)

# Every field set (None only where a field has no other value).
FULL: dict[type, Any] = {
    wt.SessionOpenParams: wt.SessionOpenParams(cwd="/p", session_id="demo", title="Fix"),
    wt.SessionIdParams: wt.SessionIdParams(session_id="demo"),
    wt.SessionListParams: wt.SessionListParams(query="parser", limit=20),
    wt.SessionEventsParams: wt.SessionEventsParams(session_id="demo", after_seq=5, limit=100),
    wt.SessionAppendParams: wt.SessionAppendParams(
        session_id="demo", events=[{"type": "session/title", "data": {"title": "x"}}]
    ),
    wt.SessionCompactParams: wt.SessionCompactParams(
        session_id="demo", start=0, end=1, summary="s", compaction_id="c-1"
    ),
    wt.PromptParams: wt.PromptParams(text="hi", client_time_zone="Europe/Berlin", rpc_id="rpc-1"),
    wt.StepPrepareParams: wt.StepPrepareParams(
        session_id="demo",
        turn=1,
        step=2,
        prompt=wt.PromptParams(text="hi", client_time_zone="UTC", rpc_id="rpc-1"),
    ),
    wt.StepEndParams: wt.StepEndParams(session_id="demo", turn=1, step=1),
    wt.TurnEndParams: wt.TurnEndParams(session_id="demo", turn=1, reason="completed"),
    wt.ToolResultParams: wt.ToolResultParams(
        session_id="demo",
        token="call-2",
        name="read",
        arguments={"file_path": "/p/x.py"},
        is_error=False,
        parent_token="call-1",
        aborted=False,
    ),
    wt.ContextPreviewParams: wt.ContextPreviewParams(cwd="file:///p", compact_paths=True),
    wt.ContextDiscardParams: wt.ContextDiscardParams(
        session_id="demo", message_id="m-1", scopes=["pkg\u0000AGENTS.md"]
    ),
    wt.ScopesParams: wt.ScopesParams(uri="file:///p/src/parser.py", compact_paths=True),
    wt.CandidatesParams: wt.CandidatesParams(session_id="demo", query="research"),
    wt.ExplainParams: wt.ExplainParams(uri="file:///p/src/parser.py", cwd="/p"),
    wt.ExplainSidecarFile: EXPLAIN_SIDECAR_FILE,
    wt.ExplainSidecar: EXPLAIN_SIDECAR,
    wt.ExplainAgentFile: EXPLAIN_AGENT_FILE,
    wt.ExplainDifference: EXPLAIN_DIFFERENCE,
    wt.ExplainSizeLimit: EXPLAIN_LIMIT,
    wt.ExplainSource: EXPLAIN_SOURCE,
    wt.ExplainVerified: EXPLAIN_VERIFIED,
    wt.NotReadFiles: NOT_READ,
    wt.ExplainAgent: EXPLAIN_AGENT,
    wt.ExplainResult: wt.ExplainResult(
        file="/p/src/parser.py",
        cwd="/p",
        project_root="/p",
        sidecar=EXPLAIN_SIDECAR,
        agents=[EXPLAIN_AGENT],
    ),
    wt.SessionHeaderWire: wt.SessionHeaderWire(
        id="claude:s1",
        created_at=1796207231012,
        cwd="/p",
        title="Fix",
        agent="claude",
        agent_session="s1",
        parent_id="claude:s0",
    ),
    wt.SessionOpenResult: wt.SessionOpenResult(session=HEADER, resumed=True),
    wt.SessionListResult: wt.SessionListResult(
        sessions=[HEADER, HEADER], waiting_touches={"s-1": 2}
    ),
    wt.SurfaceResult: wt.SurfaceResult(session=HEADER, captured_through_seq=8, events=[EVENT]),
    wt.EventsResult: wt.EventsResult(events=[EVENT]),
    wt.AppendResult: wt.AppendResult(seqs=[4, 5]),
    wt.CompactResult: wt.CompactResult(seq=8),
    wt.PrepareResult: wt.PrepareResult(messages=[MESSAGE], seqs=[2]),
    wt.PendingResult: wt.PendingResult(messages=[MESSAGE]),
    wt.ScopeFile: SCOPE_FILE,
    wt.ImportedFile: IMPORTED_FILE,
    wt.RuleInfo: RULE_INFO,
    wt.TruncatedFile: wt.TruncatedFile(path="src/AGENTS.md", original_bytes=44, included_bytes=10),
    wt.PreviewResult: wt.PreviewResult(
        text="<system-reminder>\n...\n</system-reminder>",
        files=[SCOPE_FILE],
        omitted=["docs/AGENTS.md"],
        truncated=[wt.TruncatedFile(path="src/AGENTS.md", original_bytes=44, included_bytes=10)],
        baseline_identity='{"projectRoot":""}',
        project_root="/p",
        not_read=[NOT_READ],
    ),
    wt.SessionScopes: wt.SessionScopes(session_id="demo", active=[CHANGE]),
    wt.ScopesResult: wt.ScopesResult(
        project_root="/p",
        directory="/p/src",
        files=[SCOPE_FILE],
        sessions=[wt.SessionScopes(session_id="demo", active=[CHANGE])],
        not_read=[NOT_READ],
    ),
    wt.CandidateWire: CANDIDATE,
    wt.CandidatesResult: wt.CandidatesResult(candidates=[CANDIDATE]),
    wt.ContextDidChangeParams: wt.ContextDidChangeParams(session_id="demo", pending_count=1),
    wt.DshCapabilities: wt.DshCapabilities(protocol_version=1, methods=["dsh/session/open"]),
}

# Only what is required: every optional field left at None.
MINIMAL: dict[type, Any] = {
    wt.SessionOpenParams: wt.SessionOpenParams(cwd="/p"),
    wt.SessionListParams: wt.SessionListParams(),
    wt.SessionEventsParams: wt.SessionEventsParams(session_id="demo"),
    wt.SessionCompactParams: wt.SessionCompactParams(session_id="demo", start=0, end=0, summary=""),
    wt.PromptParams: wt.PromptParams(text=""),
    wt.StepPrepareParams: wt.StepPrepareParams(session_id="demo", turn=1, step=1),
    wt.ToolResultParams: wt.ToolResultParams(
        session_id="demo", token="t", name="bash", arguments=None, is_error=True
    ),
    wt.CandidatesParams: wt.CandidatesParams(session_id="demo"),
    wt.ContextDiscardParams: wt.ContextDiscardParams(session_id="demo", message_id="m-1"),
    wt.SessionHeaderWire: wt.SessionHeaderWire(id="demo", created_at=0, cwd="/p"),
    wt.SurfaceResult: wt.SurfaceResult(
        session=wt.SessionHeaderWire(id="demo", created_at=0, cwd="/p"),
        captured_through_seq=None,
        events=[],
    ),
    wt.ScopeFile: wt.ScopeFile(
        path="/p/AGENTS.md",
        display_path="AGENTS.md",
        scope=".\u0000AGENTS.md",
        state="unreadable",
        bytes=None,
    ),
    wt.ImportedFile: wt.ImportedFile(
        path="/p/x.md", display_path="x.md", importer="/p/AGENTS.md", state="missing", depth=1
    ),
    wt.CandidateWire: wt.CandidateWire(
        session_id="x", label="x", created_at=0, mention="@[x](dsh-session:Ingi)"
    ),
    wt.ExplainParams: wt.ExplainParams(uri="/p/x.py"),
    wt.NotReadFiles: wt.NotReadFiles(agent="Claude Code", effect="e", paths=[], enable="do x"),
    wt.PreviewResult: wt.PreviewResult(
        text="", files=[], omitted=[], truncated=[], baseline_identity="{}", project_root="/p"
    ),
    wt.ScopesResult: wt.ScopesResult(project_root="/p", directory="/p", files=[], sessions=[]),
    wt.ExplainSidecarFile: wt.ExplainSidecarFile(
        path="/p/AGENTS.md", display_path="AGENTS.md", scope=".\u0000AGENTS.md", state="unreadable"
    ),
    wt.ExplainSidecar: wt.ExplainSidecar(files=[]),
    wt.ExplainAgentFile: wt.ExplainAgentFile(
        path="/p/AGENTS.md", display_path="AGENTS.md", kind="project", state="unreadable"
    ),
    wt.ExplainAgent: wt.ExplainAgent(
        id="gemini",
        name="Gemini CLI",
        working_directory="/p",
        order="",
        files=[],
        only_agent=[],
        only_sidecar=[],
        sources=[],
        undocumented=[],
    ),
}

WIRE_TYPES = sorted(
    (
        cls
        for _, cls in inspect.getmembers(wt, inspect.isclass)
        if attrs.has(cls) and cls.__module__ == wt.__name__
    ),
    key=lambda cls: cls.__name__,
)
SAMPLES = [(cls, FULL[cls]) for cls in WIRE_TYPES] + [
    (cls, MINIMAL[cls]) for cls in WIRE_TYPES if cls in MINIMAL
]
SAMPLE_IDS = [f"{cls.__name__}-full" for cls in WIRE_TYPES] + [
    f"{cls.__name__}-minimal" for cls in WIRE_TYPES if cls in MINIMAL
]
ALWAYS_SENT = {(wt.SurfaceResult, "captured_through_seq"), (wt.ScopeFile, "bytes")}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(wt))


def wire(value: Any) -> Any:
    """Unstructured, then through JSON text: exactly what travels."""
    return json.loads(json.dumps(CONVERTER.unstructure(value)))


def test_every_wire_type_has_samples() -> None:
    assert WIRE_TYPES, "no attrs classes found in protocol/types.py"
    assert set(FULL) == set(WIRE_TYPES), "add a FULL sample for every wire type"
    assert set(MINIMAL) <= set(WIRE_TYPES)
    for cls in WIRE_TYPES:
        optional = [f.name for f in attrs.fields(cls) if _optional(hints(cls)[f.name])]
        if optional:
            assert cls in MINIMAL, f"{cls.__name__} has optional fields: add a MINIMAL sample"
        for field in attrs.fields(cls):
            if _optional(hints(cls)[field.name]) and (cls, field.name) not in ALWAYS_SENT:
                assert getattr(FULL[cls], field.name) is not None, (
                    f"the FULL sample of {cls.__name__} leaves {field.name} unset"
                )


@pytest.mark.parametrize(("cls", "value"), SAMPLES, ids=SAMPLE_IDS)
def test_round_trip(cls: type, value: Any) -> None:
    assert CONVERTER.structure(wire(value), cls) == value


@pytest.mark.parametrize(("cls", "value"), SAMPLES, ids=SAMPLE_IDS)
def test_keys_are_camel_case_and_none_is_omitted(cls: type, value: Any) -> None:
    _check_keys(cls, value, wire(value), cls.__name__)


def _check_keys(cls: type, value: Any, data: Any, where: str) -> None:
    assert isinstance(data, dict), where
    expected = set()
    for field in attrs.fields(cls):
        inner = getattr(value, field.name)
        # A required field is always sent (``arguments`` may be null); an optional one only
        # when it has a value.
        required = field.default is attrs.NOTHING
        if inner is not None or required or (cls, field.name) in ALWAYS_SENT:
            expected.add(camel(field.name))
    assert set(data) == expected, f"{where}: keys {sorted(data)} != {sorted(expected)}"
    for key in data:
        assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", key), f"{where}: {key!r} is not camelCase"
    for field in attrs.fields(cls):
        inner = getattr(value, field.name)
        key = camel(field.name)
        if attrs.has(type(inner)):
            _check_keys(type(inner), inner, data[key], f"{where}.{key}")
        elif isinstance(inner, list):
            for i, item in enumerate(inner):
                if attrs.has(type(item)):
                    _check_keys(type(item), item, data[key][i], f"{where}.{key}[{i}]")


def test_captured_through_seq_is_always_sent() -> None:
    empty = wire(MINIMAL[wt.SurfaceResult])
    assert "capturedThroughSeq" in empty and empty["capturedThroughSeq"] is None
    assert (
        json.dumps(CONVERTER.unstructure(MINIMAL[wt.SurfaceResult])).count(
            '"capturedThroughSeq": null'
        )
        == 1
    )
    assert wire(FULL[wt.SurfaceResult])["capturedThroughSeq"] == 8
    # Other optional fields are left out, not sent as null.
    assert "title" not in wire(MINIMAL[wt.SurfaceResult])["session"]


def test_scope_file_bytes_is_always_sent() -> None:
    unknown = wire(MINIMAL[wt.ScopeFile])
    assert "bytes" in unknown and unknown["bytes"] is None
    assert "target" not in unknown and "digest" not in unknown
    assert wire(FULL[wt.ScopeFile])["bytes"] == 44


def test_the_always_sent_fields_are_required_and_nullable() -> None:
    nullable_required = {
        (cls, f.name)
        for cls in WIRE_TYPES
        for f in attrs.fields(cls)
        if f.default is attrs.NOTHING and _optional(hints(cls)[f.name])
    }
    assert nullable_required == ALWAYS_SENT


def test_payloads_travel_verbatim() -> None:
    """Messages, events and changes are stored log data: keys and order are kept as they are."""
    result = wire(FULL[wt.SurfaceResult])
    assert result["events"] == [EVENT]
    assert list(result["events"][0]) == list(EVENT)
    assert list(result["events"][0]["data"]) == list(MESSAGE)
    scopes = wire(FULL[wt.ScopesResult])
    assert scopes["sessions"][0]["active"] == [CHANGE]


# --- strictness -----------------------------------------------------------------------------

_PRIMITIVES = (str, int, bool)
_WRONG: dict[type, list[Any]] = {
    int: ["1", True, 1.5, None],
    str: [5, 1.0, True, None],
    bool: [1, 0, "true", None],
}


def _optional(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


def _primitive(hint: Any) -> type | None:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if hint in _PRIMITIVES:
        return typing.cast(type, hint)
    if _optional(hint) and len(args) == 1 and args[0] in _PRIMITIVES:
        return typing.cast(type, args[0])
    return None


def _sites(cls: type, value: Any, path: tuple[Any, ...], shown: str) -> Iterator[tuple[Any, ...]]:
    """(json path, wire name path, primitive type, optional) of every primitive field."""
    for field in attrs.fields(cls):
        hint = hints(cls)[field.name]
        key = camel(field.name)
        inner = getattr(value, field.name)
        kind = _primitive(hint)
        if kind is not None and inner is not None:
            yield (*path, key), f"{shown}.{key}", kind, _optional(hint)
        elif attrs.has(type(inner)):
            yield from _sites(type(inner), inner, (*path, key), f"{shown}.{key}")
        elif isinstance(inner, list) and inner and attrs.has(type(inner[0])):
            yield from _sites(type(inner[0]), inner[0], (*path, key, 0), f"{shown}.{key}[0]")


STRICT_CASES = [
    pytest.param(cls, json_path, shown, bad, id=f"{cls.__name__}:{shown}={bad!r}")
    for cls in WIRE_TYPES
    for json_path, shown, kind, optional in _sites(cls, FULL[cls], (), "params")
    for bad in _WRONG[kind]
    if not (bad is None and optional)
]


def _set(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(data)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


def test_strictness_covers_the_required_kinds() -> None:
    kinds = {(c.values[2], type(c.values[3])) for c in STRICT_CASES}
    assert ("params.turn", str) in kinds  # a string where an int is expected
    assert ("params.turn", bool) in kinds  # a bool where an int is expected
    assert ("params.sessionId", int) in kinds  # a number where a string is expected
    assert ("params.prompt.clientTimeZone", int) in kinds  # nested
    assert ("params.files[0].includedBytes", str) in kinds  # inside a list


@pytest.mark.parametrize(("cls", "json_path", "shown", "bad"), STRICT_CASES)
def test_wrong_primitive_is_refused_naming_the_field(
    cls: type, json_path: tuple[Any, ...], shown: str, bad: Any
) -> None:
    data = _set(wire(FULL[cls]), json_path, bad)
    with pytest.raises(Exception) as caught:
        CONVERTER.structure(data, cls)
    message = describe_structure_error(caught.value)
    assert re.search(rf"@ {re.escape(shown)}(?:$|;)", message), message


@pytest.mark.parametrize(
    "cls", [c for c in WIRE_TYPES if any(f.default is attrs.NOTHING for f in attrs.fields(c))]
)
def test_missing_required_field_is_named(cls: type) -> None:
    required = [f for f in attrs.fields(cls) if f.default is attrs.NOTHING]
    for field in required:
        data = wire(FULL[cls])
        del data[camel(field.name)]
        with pytest.raises(Exception) as caught:
            CONVERTER.structure(data, cls)
        message = describe_structure_error(caught.value)
        assert f"params.{camel(field.name)}" in message, message


def test_describe_structure_error_reports_every_field() -> None:
    with pytest.raises(Exception) as caught:
        CONVERTER.structure({"sessionId": 5, "turn": "1", "step": True}, wt.StepEndParams)
    message = describe_structure_error(caught.value)
    for shown in ("params.sessionId", "params.turn", "params.step"):
        assert shown in message
    assert "session_id" not in message


def _pygls_body(msg_id: int | str, result: Any) -> str:
    """What pygls' own ``_send_data`` writes for a response: the envelope unstructured by the
    converter and encoded with its default hook."""
    from pygls.protocol.json_rpc import JsonRPCResponseMessage

    response = JsonRPCResponseMessage(id=msg_id, result=result, jsonrpc="2.0")
    return json.dumps(response, default=lambda data: CONVERTER.unstructure(data))


def _server_body(msg_id: int | str, result: Any) -> str:
    from pygls.protocol.json_rpc import JsonRPCResponseMessage

    from dsh_sidecar.lsp.rpc.protocol import DshProtocol
    from dsh_sidecar.lsp.server import build_server

    protocol = build_server().protocol
    assert isinstance(protocol, DshProtocol)
    return protocol._response_body(JsonRPCResponseMessage(id=msg_id, result=result, jsonrpc="2.0"))


@pytest.mark.parametrize(("cls", "value"), SAMPLES, ids=SAMPLE_IDS)
def test_a_response_is_written_as_pygls_would_write_it(cls: type, value: Any) -> None:
    for msg_id in (7, "req-\u00e9"):
        assert _server_body(msg_id, value) == _pygls_body(msg_id, value)


def test_lsp_results_and_null_are_written_as_pygls_would_write_them() -> None:
    from lsprotocol import types as lsp

    hover = lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="**x** \u00e9")
    )
    link = lsp.DocumentLink(
        range=lsp.Range(lsp.Position(0, 1), lsp.Position(0, 4)), target="file:///x"
    )
    for result in (None, hover, [link], [], "text"):
        assert _server_body(3, result) == _pygls_body(3, result)


def test_pending_messages_are_spliced_from_their_kept_encoding() -> None:
    from dsh_sidecar.model import Message
    from dsh_sidecar.protocol import mapping
    from dsh_sidecar.protocol.encode import Encoded, spliced

    messages = [
        Message.from_json(MESSAGE),
        Message.user(["second \u2028 <x>", "two\nblocks"], {"kind": "agent-instructions"}),
    ]
    result = mapping.pending_result(messages)
    assert all(type(m) is Encoded for m in result.messages)
    assert result.messages == [m.to_json() for m in messages]  # equal to the plain objects
    assert mapping.pending_result(messages).messages[0] is result.messages[0]  # encoded once
    plain = wt.PendingResult([m.to_json() for m in messages])
    assert spliced(result) == json.dumps(CONVERTER.unstructure(plain))
    assert _server_body(9, result) == _pygls_body(9, plain)
    assert spliced(wt.PendingResult([])) is None  # nothing kept to splice: encoded as usual
    assert _server_body(9, mapping.pending_result([])) == _pygls_body(9, wt.PendingResult([]))


def test_a_result_sent_again_is_written_the_same_and_forgotten_with_it() -> None:
    import gc

    from dsh_sidecar.lsp.rpc import protocol

    result = copy.deepcopy(FULL[wt.ScopesResult])  # a kept answer is sent as the same object
    first = _server_body(1, result)
    assert protocol._SENT.get(result) is not None
    kept = len(protocol._SENT)
    assert _server_body(2, result) == _pygls_body(2, result)
    assert first == _pygls_body(1, result)
    del result
    gc.collect()
    assert len(protocol._SENT) == kept - 1

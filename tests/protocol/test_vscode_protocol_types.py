"""The extension's typed requests (vscode-extension/src/protocol.ts) follow docs/protocol.md.

protocol.ts maps every request method to a [params, result] pair of interfaces and every
notification to its params; `tsc` then refuses a call site that sends or reads the wrong shape.
This test keeps that map honest against the documentation: for each method, the interface names
of its Params and Result blocks, and their fields with their optionality, must be the same on
both sides, and so must the shared shapes (Message, Change, ...).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "protocol.md"
PROTOCOL_TS = REPO / "vscode-extension" / "src" / "protocol.ts"
METHODS_TS = REPO / "vscode-extension" / "src" / "methods.ts"

# Shared shapes: docs name -> protocol.ts name.
SHAPES = {
    "TextBlock": "TextBlock",
    "Message": "Message",
    "Change": "Change",
    "Event": "DshEvent",
    "SessionHeader": "SessionHeader",
    "ScopeFile": "ScopeFile",
}

Fields = dict[str, bool]  # field name -> optional


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def interfaces(text: str) -> dict[str, Fields]:
    """Every `interface Name { ... }` of a TypeScript text, with its top-level fields."""
    text = _strip_comments(text)
    found: dict[str, Fields] = {}
    for m in re.finditer(r"\binterface\s+(\w+)\s*\{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end() : i - 1]
        fields: Fields = {}
        depth = 0
        for token in re.finditer(r"[{}\[\]()]|(\w+)(\??):", body):
            ch = token.group(0)
            if ch in "{[(":
                depth += 1
            elif ch in "}])":
                depth -= 1
            elif depth == 0 and token.group(1) is not None:
                fields[token.group(1)] = token.group(2) == "?"
        found[m.group(1)] = fields
    return found


def _typescript_blocks(section: str) -> str:
    return "\n".join(re.findall(r"```typescript\n(.*?)```", section, flags=re.S))


def documented_methods() -> dict[str, tuple[str | None, str | None]]:
    """method -> (params interface, result interface or None for `null`/none)."""
    text = DOCS.read_text(encoding="utf-8")
    out: dict[str, tuple[str | None, str | None]] = {}
    parts = re.split(r"^### `(dsh/[^`]+)`\n", text, flags=re.M)
    for method, section in zip(parts[1::2], parts[2::2], strict=True):
        params_part = section.split("**Params:**", 1)[1].split("**Result:**", 1)[0]
        result_part = section.split("**Result:**", 1)[1].split("**Errors:**", 1)[0]
        params = re.search(r"\binterface\s+(\w+)", params_part)
        result = re.search(r"\binterface\s+(\w+)", _typescript_blocks(result_part))
        out[method] = (params.group(1) if params else None, result.group(1) if result else None)
    return out


def _method_names() -> dict[str, str]:
    text = METHODS_TS.read_text(encoding="utf-8")
    return dict(re.findall(r"^export const ([A-Z_]+) = '([^']+)';", text, flags=re.M))


def typed_methods() -> dict[str, tuple[str, str | None]]:
    """method -> (params interface, result interface or None for null) from protocol.ts's maps."""
    names = _method_names()
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    out: dict[str, tuple[str, str | None]] = {}
    for block in ("RequestTypes", "NotificationTypes", "ServerNotificationTypes"):
        m = re.search(rf"export interface {block} \{{(.*?)\n\}}", text, flags=re.S)
        assert m, f"protocol.ts has no {block}"
        for key, value in re.findall(r"\[([A-Z_]+)\]: ([^;]+);", m.group(1)):
            pair = re.fullmatch(r"\[(\w+), (\w+)\]", value.strip())
            if pair:
                result = None if pair.group(2) == "null" else pair.group(2)
                out[names[key]] = (pair.group(1), result)
            else:
                out[names[key]] = (value.strip(), None)
    return out


DOCUMENTED = documented_methods()
TYPED = typed_methods()
DOC_INTERFACES = interfaces(_typescript_blocks(DOCS.read_text(encoding="utf-8")))
TS_INTERFACES = interfaces(PROTOCOL_TS.read_text(encoding="utf-8"))


def test_the_parsers_find_the_contract() -> None:
    # A parser that found nothing would make every comparison below vacuous.
    assert len(DOCUMENTED) >= 15 and len(TYPED) >= 15
    assert DOC_INTERFACES["StepPrepareParams"] == {
        "sessionId": False,
        "turn": False,
        "step": False,
        "prompt": True,
    }
    assert TS_INTERFACES["SessionOpenParams"] == {"cwd": False, "sessionId": True, "title": True}


def test_every_documented_method_is_typed_and_no_other() -> None:
    assert sorted(DOCUMENTED) == sorted(TYPED)


@pytest.mark.parametrize("method", sorted(DOCUMENTED))
def test_params_and_result_match_the_docs(method: str) -> None:
    doc_params, doc_result = DOCUMENTED[method]
    ts_params, ts_result = TYPED[method]
    assert doc_params is not None, f"{method}: no params interface in the docs"
    assert ts_params == doc_params, f"{method}: params are {ts_params} in protocol.ts"
    assert TS_INTERFACES[ts_params] == DOC_INTERFACES[doc_params], f"{method}: {ts_params} fields"
    assert ts_result == doc_result, f"{method}: result is {ts_result} in protocol.ts"
    if doc_result is not None:
        assert TS_INTERFACES[doc_result] == DOC_INTERFACES[doc_result], f"{method}: {doc_result}"


@pytest.mark.parametrize("doc_name", sorted(SHAPES))
def test_shared_shapes_match_the_docs(doc_name: str) -> None:
    assert TS_INTERFACES[SHAPES[doc_name]] == DOC_INTERFACES[doc_name]


def test_the_comparison_catches_drift() -> None:
    """A field made optional on one side shows up as a difference."""
    drifted = PROTOCOL_TS.read_text(encoding="utf-8").replace(
        "export interface StepEndParams {\n  sessionId: string;\n  turn: number;",
        "export interface StepEndParams {\n  sessionId: string;\n  turn?: number;",
    )
    assert drifted != PROTOCOL_TS.read_text(encoding="utf-8")
    assert interfaces(drifted)["StepEndParams"] != DOC_INTERFACES["StepEndParams"]

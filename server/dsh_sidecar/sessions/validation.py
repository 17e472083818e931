"""Validation of events a client appends (docs/protocol.md#dshsessionappend).

Every event of a call is checked before anything is written; the first bad one rejects the call
with ``invalid-event`` and a message naming the event index and the field.

An event may nest at most ``MAX_EVENT_DEPTH`` levels (the event object is level 1). Every stored
event must stay answerable: ``dsh/session/events`` and ``dsh/session/surface`` put it a few levels
deeper inside their results, and JSON encoders (Python's included) stop at some nesting depth, so
the limit sits far below theirs (docs/protocol.md, ``dsh/session/append``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import ASSISTANT_MESSAGE, SESSION_TITLE, TOOL_RESULT, USER_MESSAGE, Message
from dsh_sidecar.zones import validate_client_time_zone

from .store import EventDraft
from .surface import SurfaceOpError, replace_range

APPENDABLE = (USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT, SESSION_TITLE)
MAX_EVENT_DEPTH = 128


def _fail(index: int, message: str) -> DshError:
    return DshError(errors.INVALID_EVENT, f"events[{index}]: {message}", {"index": index})


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_message(raw: Any, role: str, where: str) -> Message:
    """A well-formed message of ``role``; raise ValueError naming what is wrong."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be an object")
    if not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ValueError(f"{where}.id must be a non-empty string")
    if raw.get("role") != role:
        raise ValueError(f"{where}.role must be {role!r}")
    content = raw.get("content")
    if not isinstance(content, list):
        raise ValueError(f"{where}.content must be a list of blocks")
    for i, block in enumerate(content):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ValueError(f"{where}.content[{i}] must be an object with a string type")
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise ValueError(f"{where}.content[{i}].text must be a string")
    source = raw.get("source")
    if not isinstance(source, Mapping) or not isinstance(source.get("kind"), str):
        raise ValueError(f"{where}.source must be an object with a string kind")
    return Message.from_json(raw)


def validate_append(raw_events: Any) -> list[EventDraft]:
    if not isinstance(raw_events, list) or not raw_events:
        raise DshError(errors.INVALID_EVENT, "events must be a non-empty list")
    drafts = []
    for index, raw in enumerate(raw_events):
        if not isinstance(raw, Mapping):
            raise _fail(index, "must be an object")
        if nesting_depth(raw) > MAX_EVENT_DEPTH:
            raise _fail(index, f"nested deeper than {MAX_EVENT_DEPTH} levels")
        kind, data = raw.get("type"), raw.get("data")
        if kind not in APPENDABLE:
            allowed = ", ".join(APPENDABLE)
            raise _fail(
                index,
                f"type {kind!r} cannot be appended (allowed: {allowed}; lifecycle events come from the step methods)",
            )
        if not isinstance(data, Mapping):
            raise _fail(index, "data must be an object")
        try:
            drafts.append(_draft(kind, dict(data), raw.get("surfaceOp")))
        except ValueError as exc:
            raise _fail(index, str(exc)) from exc
    return drafts


def nesting_depth(value: Any) -> int:
    """Levels of objects and arrays in ``value`` (a scalar is 0); iterative, so any depth is safe
    to measure."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _draft(kind: str, data: dict[str, Any], op: Any) -> EventDraft:
    if kind == SESSION_TITLE:
        if not isinstance(data.get("title"), str):
            raise ValueError("data.title must be a string")
        if op is not None:
            raise ValueError("session/title takes no surfaceOp")
        return EventDraft(kind, data)
    if op is None:
        op = "append"
    try:
        if replace_range(op) is not None:
            raise ValueError("only dsh/session/compact may replace surface nodes")
    except SurfaceOpError as exc:
        raise ValueError(str(exc)) from exc
    if kind == USER_MESSAGE:
        message = check_message(data, "user", "data")
        if message.source.get("kind") != "user":
            raise ValueError(
                "a user/message appended directly must have source.kind 'user' (context comes from dsh/step/prepare)"
            )
        _check_user_source(message.source)
        return EventDraft(kind, data, op)
    for key in ("turn", "step"):
        if not _positive_int(data.get(key)):
            raise ValueError(f"data.{key} must be a positive integer")
    check_message(
        data.get("message"), "assistant" if kind == ASSISTANT_MESSAGE else "user", "data.message"
    )
    return EventDraft(kind, data, op)


def _check_user_source(source: Mapping[str, Any]) -> None:
    """The fields of a direct user source that later steps read back.

    time-context trusts a logged prompt's ``clientTimeZone`` and rejects every later step of the
    turn when it is not canonical, so an appended message must pass the check ``prepare`` applies
    (and already be in the canonical spelling ``prepare`` would have stored).
    """
    if "rpcId" in source and not isinstance(source["rpcId"], str):
        raise ValueError("data.source.rpcId must be a string")
    if "clientTimeZone" in source:
        zone = source["clientTimeZone"]
        try:
            canonical: str | None = validate_client_time_zone(zone)
        except DshError:
            canonical = None
        if canonical is None or canonical != zone:
            raise ValueError(
                f"data.source.clientTimeZone must be UTC or a canonical IANA Area/Location zone, got {zone!r}"
            )

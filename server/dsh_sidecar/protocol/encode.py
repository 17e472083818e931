"""Wire types to JSON: the one encoding every ``dsh/`` result and the CLI's ``--json`` share.

Keys are the camelCased attribute names, in declaration order. An optional field (one with a
default) without a value is left out (protocol.md, Conventions); a required field is always sent,
as ``null`` when it may have no value (``bytes`` of a ``ScopeFile``, ``capturedThroughSeq`` of a
surface). Durable JSON objects (messages, events, changes) pass through untouched.
"""

from __future__ import annotations

import json
from typing import Any

import attrs


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_PLAIN = (str, int, float, bool, type(None))
_PLAIN_TYPES = frozenset(_PLAIN)  # exact types: one set look-up instead of an isinstance
# Per attrs class: (attribute, wire key, whether a missing value is left out), in order.
_PLANS: dict[type, tuple[tuple[str, str, bool], ...]] = {}


def _plan(cls: type) -> tuple[tuple[str, str, bool], ...]:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = tuple(
            (f.name, camel(f.name), f.default is not attrs.NOTHING) for f in attrs.fields(cls)
        )
    return plan


def to_json(value: Any) -> Any:
    # Every result goes through here on the event loop, so the common cases come first, a
    # class's field list is worked out once, and plain values are never a call of their own.
    cls = type(value)
    if cls in _PLAIN_TYPES or isinstance(value, _PLAIN):
        return value
    plan = _PLANS.get(cls)
    if plan is None and attrs.has(cls):
        plan = _plan(cls)
    if plan is not None:
        out: dict[str, Any] = {}
        for name, key, optional in plan:
            item = getattr(value, name)
            if item is None:
                if not optional:
                    out[key] = None
                continue
            out[key] = item if type(item) in _PLAIN_TYPES else to_json(item)
        return out
    if isinstance(value, list | tuple):
        return [item if type(item) in _PLAIN_TYPES else to_json(item) for item in value]
    if isinstance(value, dict):
        return {
            key: item if type(item) in _PLAIN_TYPES else to_json(item)
            for key, item in value.items()
        }
    return value


class Encoded(dict[str, Any]):
    """A JSON object that carries its own encoding (``json.dumps`` with the defaults): a message
    sent again and again unchanged (one waiting in a session's inbox). Equal to the plain object
    for whoever reads it; ``spliced`` puts ``text`` in instead of encoding the object again."""

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any], text: str) -> None:
        super().__init__(value)
        self.text = text


def encoded(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as an ``Encoded`` (itself if it is not plain JSON)."""
    try:
        return Encoded(value, json.dumps(value))
    except (TypeError, ValueError):
        return value


def spliced(value: Any) -> str | None:
    """``json.dumps(to_json(value))`` for a wire object whose list fields hold ``Encoded``
    objects (``PendingResult``), without encoding those again; None for any other shape."""
    plan = _PLANS.get(type(value))
    if plan is None:
        if not attrs.has(type(value)):
            return None
        plan = _plan(type(value))
    values = [(key, optional, getattr(value, name)) for name, key, optional in plan]
    if not any(type(item) is list and item and type(item[0]) is Encoded for _, _, item in values):
        return None  # nothing to splice: the plain encoding is as quick
    parts = []
    for key, optional, item in values:
        if item is None:
            if optional:
                continue
            text = "null"
        elif type(item) is list and all(type(each) is Encoded for each in item):
            text = "[" + ", ".join(each.text for each in item) + "]"
        elif type(item) in _PLAIN_TYPES:
            text = json.dumps(item)
        else:
            return None
        parts.append(json.dumps(key) + ": " + text)
    return "{" + ", ".join(parts) + "}"

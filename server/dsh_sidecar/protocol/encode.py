"""Wire types to JSON: the one encoding every ``dsh/`` result and the CLI's ``--json`` share.

Keys are the camelCased attribute names, in declaration order. An optional field (one with a
default) without a value is left out (protocol.md, Conventions); a required field is always sent,
as ``null`` when it may have no value (``bytes`` of a ``ScopeFile``, ``capturedThroughSeq`` of a
surface). Durable JSON objects (messages, events, changes) pass through untouched.
"""

from __future__ import annotations

from typing import Any

import attrs


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_PLAIN = (str, int, float, bool, type(None))
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
    # Every result goes through here on the event loop, so the common cases come first and a
    # class's field list is worked out once.
    if isinstance(value, _PLAIN):
        return value
    cls = type(value)
    if cls in _PLANS or attrs.has(cls):
        out: dict[str, Any] = {}
        for name, key, optional in _plan(cls):
            item = getattr(value, name)
            if item is None and optional:
                continue
            out[key] = to_json(item)
        return out
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return value

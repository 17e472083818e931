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

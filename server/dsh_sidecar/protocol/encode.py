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


def to_json(value: Any) -> Any:
    if attrs.has(type(value)):
        out: dict[str, Any] = {}
        for field in attrs.fields(type(value)):
            item = getattr(value, field.name)
            if item is None and field.default is not attrs.NOTHING:
                continue
            out[camel(field.name)] = to_json(item)
        return out
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return value

"""The one cattrs converter: pygls' (lsprotocol's, camelCasing) with strict primitives.

cattrs would turn ``"sessionId": 5`` into ``"5"`` and ``"turn": "1"`` into ``1``; a client that
sends those has a bug we want to report as InvalidParams, not paper over. Our own wire types are
unstructured by ``protocol.encode.to_json``, the encoding the CLI's ``--json`` uses too.
"""

from __future__ import annotations

import re
from typing import Any

import cattrs
from pygls.protocol import default_converter

from dsh_sidecar.config.secrets import shown
from dsh_sidecar.protocol import types as wire_types
from dsh_sidecar.protocol.encode import to_json
from dsh_sidecar.protocol.types import RangeError


def _strict(kind: type, check: Any) -> Any:
    def structure(value: Any, _: type) -> Any:
        if not check(value):
            # Quoted with secret-named keys hidden: a client's token must not come back.
            given = shown(value)
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__} {given}")
        return value

    return structure


def make_converter() -> cattrs.Converter:
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(str, _strict(str, lambda v: isinstance(v, str)))
    converter.register_structure_hook(
        int, _strict(int, lambda v: isinstance(v, int) and not isinstance(v, bool))
    )
    converter.register_structure_hook(bool, _strict(bool, lambda v: isinstance(v, bool)))
    converter.register_structure_hook(
        float, _strict(float, lambda v: isinstance(v, int | float) and not isinstance(v, bool))
    )

    # One encoding for our results (nullable fields such as ScopeFile.bytes sent as null).
    converter.register_unstructure_hook_func(_is_wire_type, to_json)
    return converter


def _is_wire_type(cls: Any) -> bool:
    return isinstance(cls, type) and cls.__module__ == wire_types.__name__


def _camel(match: re.Match[str]) -> str:
    head, *rest = match[1].split("_")
    return "." + head + "".join(part.title() for part in rest)


_FIELD_MARK = "\x00"


def _format(exc: BaseException, kind: Any) -> str:
    if isinstance(exc, RangeError):
        # Raised by the class's validator, so cattrs knows only the class's path: carry the
        # field along and attach it to the path below.
        return f"{_FIELD_MARK}{exc.field}{_FIELD_MARK}{exc}"
    return cattrs.v.format_exception(exc, kind)


def _with_field(note: str) -> str:
    match = re.fullmatch(f"{_FIELD_MARK}(\\w+){_FIELD_MARK}(.*) @ (.*)", note, re.DOTALL)
    return f"{match[2]} @ {match[3]}.{match[1]}" if match else note


def describe_structure_error(exc: BaseException) -> str:
    """A one-line message naming the offending field(s) of a cattrs failure, in wire names."""
    if isinstance(exc, cattrs.BaseValidationError):
        notes = cattrs.transform_error(exc, path="params", format_exception=_format)
        return "; ".join(
            re.sub(r"\.([a-z0-9]+(?:_[a-z0-9]+)+)", _camel, _with_field(note)) for note in notes
        )
    return str(exc)

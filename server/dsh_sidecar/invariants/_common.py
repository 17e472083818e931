"""Shape helpers shared by the per-source validators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

MAX_SAFE_INTEGER = 2**53 - 1


def is_safe_int(value: Any, minimum: int = 0) -> bool:
    """A JS safe integer ``>= minimum`` (bools are not numbers)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and minimum <= value <= MAX_SAFE_INTEGER
    )


def digits_number(digits: str) -> int:
    """``Number(digits)`` for an ASCII digit run; beyond 2^53 it only needs to compare as unsafe."""
    return int(digits) if len(digits) <= 20 else MAX_SAFE_INTEGER + 1


def has_exact_keys(value: Any, keys: set[str]) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(value, Mapping) and set(value) == keys


def single_text_block(data: Mapping[str, Any]) -> str | None:
    """The text of a message whose content is exactly one ``{type: 'text', text}`` block."""
    content = data.get("content")
    if not isinstance(content, list | tuple) or len(content) != 1:
        return None
    block = content[0]
    if not has_exact_keys(block, {"type", "text"}) or block["type"] != "text":
        return None
    text = block["text"]
    return text if isinstance(text, str) else None


def snapshot_source_matches(source: Any, plugin: str, text: str) -> bool:
    """``{kind: 'plugin', plugin, form: 'snapshot', sections: [{name: plugin, text}]}`` exactly."""
    if not has_exact_keys(source, {"kind", "plugin", "form", "sections"}):
        return False
    if source["kind"] != "plugin" or source["plugin"] != plugin or source["form"] != "snapshot":
        return False
    sections = source["sections"]
    if not isinstance(sections, list | tuple) or len(sections) != 1:
        return False
    section = sections[0]
    return (
        has_exact_keys(section, {"name", "text"})
        and section["name"] == plugin
        and section["text"] == text
    )

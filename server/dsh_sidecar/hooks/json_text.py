"""Editing a JSON object in its text, so that every byte the edit does not concern stays as it was.

``hooks install`` adds a few entries to a file that belongs to the user; writing the whole file
back from its parsed value would re-indent it, reorder nothing but reformat everything, and turn
values into Python's spelling of them. Here a container (an object or an array) is rewritten from
its own pieces instead: the kept members keep their text and the separators around them, and a
new member takes the indentation, newline and separators the file already uses.

Every function expects text that ``json.loads`` accepted (and ``json_check`` passed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SPACE = re.compile(r"[ \t\r\n]*")
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")


@dataclass(frozen=True)
class Item:
    start: int  # an object member's key, an array element's value
    value_start: int
    end: int
    key: str | None  # None in an array


@dataclass(frozen=True)
class Container:
    open: int  # the index of ``{`` or ``[``
    close: int  # the index of the matching ``}`` or ``]``
    items: tuple[Item, ...]

    def find(self, key: str) -> int | None:
        return next((i for i, item in enumerate(self.items) if item.key == key), None)


@dataclass(frozen=True)
class Style:
    newline: str
    indent: str | None  # one level of indentation; None: the file is on one line
    key_separator: str  # between a key and its value, e.g. ": "
    item_separator: str  # between members on one line, e.g. ", "


def skip_space(text: str, i: int) -> int:
    match = _SPACE.match(text, i)
    return i if match is None else match.end()


def value_end(text: str, i: int) -> int:
    if text[i] == '"':
        match = _STRING.match(text, i)
        assert match is not None
        return match.end()
    if text[i] in "{[":
        depth = 0
        for token in _NESTING.finditer(text, i):
            bracket = token.group()
            if bracket in ("{", "["):
                depth += 1
            elif bracket in ("}", "]"):
                depth -= 1
                if depth == 0:
                    return token.end()
        raise ValueError("unbalanced JSON text")
    scalar = _SCALAR.match(text, i)
    assert scalar is not None
    return scalar.end()


def container(text: str, i: int) -> Container:
    """The object or array whose opening bracket is at ``i``, with its items' spans."""
    closer = "}" if text[i] == "{" else "]"
    items: list[Item] = []
    j = skip_space(text, i + 1)
    if text[j] == closer:
        return Container(i, j, ())
    while True:
        key = None
        value_start = j
        if closer == "}":
            key_end = value_end(text, j)
            key = json.loads(text[j:key_end])
            colon = skip_space(text, key_end)
            value_start = skip_space(text, colon + 1)
        end = value_end(text, value_start)
        items.append(Item(j, value_start, end, key))
        k = skip_space(text, end)
        if text[k] == closer:
            return Container(i, k, tuple(items))
        j = skip_space(text, k + 1)  # past the comma


def detect_style(text: str, top: Container) -> Style:
    newline = "\r\n" if "\r\n" in text else "\n"
    if not top.items:
        return Style(newline, "  ", ": ", ", ")  # nothing to copy: the agents' own layout
    first = top.items[0]
    key_end = value_end(text, first.start)
    key_separator = text[key_end : first.value_start]
    if "\n" not in text[top.open : top.close]:
        separator = text[top.items[0].end : top.items[1].start] if len(top.items) > 1 else ", "
        return Style(newline, None, key_separator, separator)
    lead = text[top.open + 1 : first.start]
    child = lead.rsplit("\n", 1)[-1] if "\n" in lead else ""
    parent = line_indent(text, top.open)
    indent = child[len(parent) :] if child.startswith(parent) else child
    return Style(newline, indent, key_separator.replace("\r", "").replace("\n", ""), ", ")


def line_indent(text: str, i: int) -> str:
    start = text.rfind("\n", 0, i) + 1
    end = start
    while end < i and text[end] in " \t":
        end += 1
    return text[start:end]


def rewrite(
    text: str,
    box: Container,
    style: Style,
    *,
    remove: Collection[int] = (),
    replace: Mapping[int, str] | None = None,
    append: Sequence[tuple[str | None, Any]] = (),
) -> str:
    """The new text of ``box``: its items but ``remove``, an item's text replaced by
    ``replace[i]``, then ``append``'s (key, value) pairs, each in the container's own layout."""
    replace = replace or {}
    items = box.items
    if items:
        lead = text[box.open + 1 : items[0].start]
        trail = text[items[-1].end : box.close]
        separators = [text[items[i - 1].end : items[i].start] for i in range(1, len(items))]
        if separators:
            new_separator = separators[-1]
        else:  # one item: a newline before it says one per line, else the file's own spacing
            new_separator = "," + lead if "\n" in lead else style.item_separator
        child = lead.rsplit("\n", 1)[-1] if "\n" in lead else None
        last = separators[-1] if separators else ""
        inline = last if last and "\n" not in last else style.item_separator
    elif style.indent is None:
        lead = trail = ""
        separators, new_separator, child = [], style.item_separator, None
        inline = style.item_separator
    else:
        parent = line_indent(text, box.open)
        child = parent + style.indent
        lead, trail = style.newline + child, style.newline + parent
        separators, new_separator = [], "," + style.newline + child
        inline = style.item_separator
    pieces: list[tuple[int | None, str]] = [
        (i, replace.get(i, text[items[i].start : items[i].end]))
        for i in range(len(items))
        if i not in remove
    ]
    pieces += [(None, render_item(key, value, style, child, inline)) for key, value in append]
    if not pieces:
        return text[box.open] + text[box.close]
    out = [text[box.open], lead]
    for n, (i, piece) in enumerate(pieces):
        if n:
            out.append(separators[i - 1] if i is not None and i > 0 else new_separator)
        out.append(piece)
    out += [trail, text[box.close]]
    return "".join(out)


def render_item(key: str | None, value: Any, style: Style, child: str | None, inline: str) -> str:
    """A new member or element: on several lines indented like its siblings when the container
    spans lines, else on one line with the container's separators."""
    if child is None or style.indent is None:
        rendered = json.dumps(value, ensure_ascii=False, separators=(inline, style.key_separator))
    else:
        rendered = json.dumps(
            value, ensure_ascii=False, indent=style.indent, separators=(",", style.key_separator)
        ).replace("\n", style.newline + child)
    if key is None:
        return rendered
    return json.dumps(key, ensure_ascii=False) + style.key_separator + rendered

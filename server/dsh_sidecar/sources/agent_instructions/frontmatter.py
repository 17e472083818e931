"""The YAML frontmatter block of a rule file, read leniently.

Rule files put a few keys between ``---`` lines: strings (quoted or bare), booleans, and lists
(``[a, b]`` or ``- a`` lines). Agents' own readers are lenient too (Cursor documents bare,
unquoted globs such as ``globs: **/*.ts``, which strict YAML rejects), so this reader takes the
small subset those files use instead of a YAML library. It never raises: a line it does not
understand is skipped, and a block that never closes counts as no frontmatter at all.

Lines are taken apart with string methods, never a regular expression: each is looked at a
bounded number of times, so a 60 KB run of spaces in a line costs what 60 KB of anything costs
(docs/protocol.md, "Repository text in linear time").
"""

from __future__ import annotations

FrontValue = str | bool | list[str] | None

MAX_LINES = 200
_KEY_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_KEY_REST = _KEY_START | frozenset("0123456789-")
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_NULL = frozenset({"", "~", "null", "Null", "NULL"})


def read_frontmatter(text: str) -> dict[str, FrontValue] | None:
    """The keys of the leading ``---`` block of ``text``, or None when there is none."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].rstrip("\r").strip() != "---":
        return None
    body: list[str] = []
    for line in lines[1 : MAX_LINES + 1]:
        line = line.rstrip("\r")
        if line.strip() in ("---", "..."):
            return _parse(body)
        body.append(line)
    return None


def _parse(lines: list[str]) -> dict[str, FrontValue]:
    out: dict[str, FrontValue] = {}
    key: str | None = None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _list_item(line)
        current = out.get(key) if key is not None else False
        if item is not None and key is not None and (current is None or isinstance(current, list)):
            listed = current if isinstance(current, list) else []
            listed.append(_unquote(_strip_comment(item)))
            out[key] = listed
            continue
        pair = _key_value(line)
        if pair is None:
            key = None
            continue
        key = pair[0]
        out[key] = _scalar(_strip_comment(pair[1]))
    return out


def _list_item(line: str) -> str | None:
    """The value of a ``- value`` line: indented, a dash, then anything; or at the margin, a
    dash, whitespace, then anything. None for any other line."""
    body = line.lstrip()
    if not body.startswith("-"):
        return None
    rest = body[1:]
    if len(body) == len(line) and rest[:1].strip():
        return None  # "-x" at the margin is not an item
    if len(body) == len(line) and not rest:
        return None  # nor is a lone "-" there
    return rest.strip()


def _key_value(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` line (``key:`` alone has the value ""); None when
    the line is not one (``key:value`` without a space is not)."""
    if not line or line[0] not in _KEY_START:
        return None
    end = 1
    while end < len(line) and line[end] in _KEY_REST:
        end += 1
    rest = line[end:].lstrip()
    if not rest.startswith(":"):
        return None
    value = rest[1:]
    if value[:1].strip():
        return None  # something right after the colon
    return line[:end], value.strip()


def _scalar(raw: str) -> FrontValue:
    if raw in _NULL:
        return None
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    if raw.startswith("[") and raw.endswith("]"):
        return [_unquote(part) for part in _split_inline(raw[1:-1]) if part.strip()]
    return _unquote(raw)


def _unquote(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def _strip_comment(raw: str) -> str:
    """Drop a `` #`` comment that is not inside quotes."""
    if "#" not in raw:
        return raw.strip()  # no comment can start: one pass in C, not a step per character
    quote: str | None = None
    for index, char in enumerate(raw):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or raw[index - 1] in " \t"):
            return raw[:index].rstrip()
    return raw.strip()


def _split_inline(raw: str) -> list[str]:
    """Split ``a, "b,c", {d,e}`` on top-level commas. Only quotes, braces and commas change
    anything, so the loop visits those (found by ``str.find`` in C) and not every character:
    a glob of 64 alternatives is some 70 steps, not 400."""
    parts: list[str] = []
    start = 0
    quote: str | None = None
    depth = 0
    for index in offsets_of(raw, "'\"{},"):
        char = raw[index]
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(raw[start:index])
            start = index + 1
    parts.append(raw[start:])
    return [p.strip() for p in parts]


def offsets_of(text: str, chars: str) -> list[int]:
    """The offsets of ``chars`` in ``text``, in order: one ``str.find`` pass per character kind,
    so the text is read a bounded number of times."""
    found: list[int] = []
    for char in chars:
        at = text.find(char)
        while at != -1:
            found.append(at)
            at = text.find(char, at + 1)
    found.sort()
    return found

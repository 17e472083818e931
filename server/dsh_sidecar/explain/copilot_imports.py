"""GitHub Copilot CLI's ``@path`` imports, as its native runtime (1.0.102, ``runtime.node``)
scans an instruction file; where in its code: docs/reference/agent-models.md.

- Code is skipped line by line: a line whose text, after leading whitespace, starts with three
  backticks or three tildes opens a fence, and the next such line of the same character closes
  it (the fence lines are code too). Outside fences, a run of backticks opens an inline span
  that the next run of the same length on that line closes; an unclosed span hides the rest of
  its line only. Indented blocks and HTML comments hide nothing.
- An ``@`` counts unless the character before it is an ASCII letter or digit, ``%``, ``+``,
  ``-``, ``.`` or ``_``. The path runs to whitespace or one of ``"'<>``\\` ``, and then loses
  trailing ``!),.:;?]}``.
- A path holding ``/`` or ``\\`` is a reference; one without is a reference only when it holds
  a ``.``, does not start with ``@`` and names a regular file. A reference that starts with
  ``~/``, ``/``, ``\\`` or a drive (``C:/``) is dropped; the rest are taken relative to the
  importing file's directory (no ``~``, no absolute path).

Each scan moves forward only, so any text costs linear work.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from .agent_imports import AgentImport

# Rust's char::is_whitespace (Python's isspace also takes U+001C..U+001F).
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
)
_ENDS_PATH = _WHITESPACE | frozenset("\"'<>`")
_TRIMMED = "!),.:;?]}"
_NOT_BEFORE = frozenset("%+-._")
_FENCES = ("```", "~~~")


def copilot_imports(
    text: str, importer_dir: str, is_file: Callable[[str], bool]
) -> list[AgentImport]:
    def bare_name(raw: str) -> bool:
        # A name without a slash counts only when that file is there (checked as it scans).
        path = _resolved(raw, importer_dir)
        return path is not None and is_file(path)

    out: list[AgentImport] = []
    for offset, line in _lines_outside_fences(text):
        for at, end, raw in _references(line, bare_name):
            path = _resolved(raw, importer_dir)
            if path is not None:  # a reference to ~/ or an absolute path is dropped
                out.append(AgentImport(offset + at, offset + end, _tidy(path, is_file)))
    return out


def _tidy(path: str, is_file: Callable[[str], bool]) -> str:
    """``path`` without ``.`` and ``..`` steps when that names the same file. Copilot CLI opens
    the path as joined, so ``x.md/`` or ``missing/../x.md`` fail there and stay as they are."""
    tidy = os.path.normpath(path)
    if tidy == path or not is_file(path):
        return path
    return tidy if os.path.realpath(tidy) == os.path.realpath(path) else path


def _lines_outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """Each line outside fenced code, with its offset in ``text``."""
    fence: str | None = None
    offset = 0
    for line in text.split("\n"):
        start = offset
        offset += len(line) + 1
        marker = _fence_marker(line)
        if fence is not None:
            if marker == fence:
                fence = None
            continue
        if marker is not None:
            fence = marker
            continue
        yield start, line


def _fence_marker(line: str) -> str | None:
    body = line.lstrip("".join(_WHITESPACE))
    return next((m for m in _FENCES if body.startswith(m)), None)


def _references(line: str, bare_name: Callable[[str], bool]) -> Iterator[tuple[int, int, str]]:
    """Each reference outside inline code: where its ``@`` is, where its path ends, and the
    path with its trailing punctuation taken off. After a reference the scan goes on at its
    end, after anything else at the next character."""
    span = 0  # the length of the backtick run that opened the current inline span, or 0
    i = 0
    while i < len(line):
        char = line[i]
        if char == "`":
            run = i
            while i < len(line) and line[i] == "`":
                i += 1
            length = i - run
            if not span:
                span = length
            elif length == span:
                span = 0
            continue
        if char != "@" or span or (i > 0 and _joins(line[i - 1])):
            i += 1
            continue
        end = i + 1
        while end < len(line) and line[end] not in _ENDS_PATH:
            end += 1
        raw = line[i + 1 : end].rstrip(_TRIMMED)
        if _reference(raw, bare_name):
            yield i, end, raw
            i = end
        else:
            i += 1


def _joins(before: str) -> bool:
    """Whether the character before an ``@`` makes it part of a word (an e-mail address)."""
    return (before.isascii() and before.isalnum()) or before in _NOT_BEFORE


def _reference(raw: str, bare_name: Callable[[str], bool]) -> bool:
    if not raw:
        return False
    if "/" in raw or "\\" in raw:
        return True
    return not raw.startswith("@") and "." in raw and bare_name(raw)


def _resolved(raw: str, importer_dir: str) -> str | None:
    # A NUL names no file: no system call takes such a path, Copilot's runtime's open neither.
    if raw.startswith(("~/", "~\\", "/", "\\")) or _drive(raw) or "\x00" in raw:
        return None
    return os.path.join(importer_dir, raw)


def _drive(raw: str) -> bool:
    return (
        len(raw) >= 3
        and raw[0].isascii()
        and raw[0].isalpha()
        and raw[1] == ":"
        and (raw[2] in "/\\")
    )

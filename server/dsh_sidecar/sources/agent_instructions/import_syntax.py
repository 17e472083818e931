"""``@path`` imports inside instruction files (Claude Code's ``@path``, Gemini CLI's ``@file.md``).

An import is an ``@`` at the start of a line or after whitespace, followed by a path. Both agents
document that imports inside Markdown code (fenced blocks and inline code spans) are not
evaluated, so those are blanked out first (``markdown_code``: CommonMark's fences and spans, by a
linear scan). Paths are relative to the importing file, absolute, or
(``~/``) below the home directory. Only targets that exist are imports: an ``@name`` naming no
file (a handle, a decorator in prose) is left alone, as the agents leave it.
"""

from __future__ import annotations

import os
import re

import attrs

from .markdown_code import Steps, blank_code

# Linear: it can only start at an "@", and the path is one greedy class with nothing after it,
# so a failed attempt never backtracks, and finditer resumes after each match.
_IMPORT = re.compile(r"(?:(?<=\s)|^)@(?P<path>[^\s`<>\"'|*?\x00]+)", re.MULTILINE)
_TRAILING = ".,;:!)]}"
_EXTENSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# One more than the 64 files a scope imports (imports.MAX_IMPORTED_FILES), so that limit is
# reached, and reported, before this one cuts anything.
MAX_IMPORTS_PER_FILE = 65


def outside_code(text: str, *, keep_offsets: bool = False, steps: Steps | None = None) -> str:
    """``text`` with fenced code blocks and inline code spans blanked out. With
    ``keep_offsets`` a blanked line keeps its length (spaces), so offsets still point into
    ``text``."""
    return blank_code(text, keep_offsets=keep_offsets, steps=steps)


@attrs.frozen
class ImportSpan:
    """One ``@path`` of a text: where it is (offsets of the ``@`` and after the path), the path
    as written, and the absolute path it names."""

    start: int
    end: int
    raw: str
    path: str

    @property
    def looks_like_a_path(self) -> bool:
        """Whether a missing target is worth reporting: ``@docs/a.md`` or ``@notes.md`` is
        meant as a file, ``@alice`` or ``@here`` in prose is not."""
        return "/" in self.raw or _has_extension(self.raw)


def import_spans(text: str, importer_dir: str, home: str) -> list[ImportSpan]:
    """Every ``@`` import of ``text`` outside code, in order (repeats included), at most
    ``MAX_IMPORTS_PER_FILE`` distinct paths."""
    out: list[ImportSpan] = []
    distinct: set[str] = set()
    for match in _IMPORT.finditer(outside_code(text, keep_offsets=True)):
        raw = match["path"].rstrip(_TRAILING)
        if not raw:
            continue
        path = _import_target(raw, importer_dir, home)
        if path not in distinct:
            if len(distinct) >= MAX_IMPORTS_PER_FILE:
                break
            distinct.add(path)
        out.append(ImportSpan(match.start(), match.start() + 1 + len(raw), raw, path))
    return out


def import_paths(text: str, importer_dir: str, home: str) -> list[str]:
    """Absolute candidate paths of the ``@`` imports of ``text``, in order, without repeats."""
    out: list[str] = []
    for match in _IMPORT.finditer(outside_code(text)):
        raw = match["path"].rstrip(_TRAILING)
        if not raw:
            continue
        path = _import_target(raw, importer_dir, home)
        if path not in out:
            out.append(path)
        if len(out) >= MAX_IMPORTS_PER_FILE:
            break
    return out


def _has_extension(raw: str) -> bool:
    """Whether ``raw`` ends in ``.`` and one to eight ASCII letters or digits."""
    _, dot, extension = raw[-9:].rpartition(".")
    return bool(dot) and 1 <= len(extension) <= 8 and set(extension) <= _EXTENSION_CHARS


def _import_target(raw: str, importer_dir: str, home: str) -> str:
    """Where an import written ``raw`` leads: ``~/`` from the home directory, an absolute path
    as it is, anything else from the importing file's directory; normalized."""
    if raw == "~" or raw.startswith("~/"):
        path = os.path.join(home, raw[2:])
    elif os.path.isabs(raw):
        path = raw
    else:
        path = os.path.join(importer_dir, raw)
    return os.path.normpath(path)

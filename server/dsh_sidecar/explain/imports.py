"""``@path`` imports inside instruction files (Claude Code's ``@path``, Gemini CLI's ``@file.md``).

An import is an ``@`` at the start of a line or after whitespace, followed by a path. Both agents
document that imports inside Markdown code (fenced blocks and inline code spans) are not
evaluated, so those are blanked out first. Paths are relative to the importing file, absolute, or
(``~/``) below the home directory. Only targets that exist are imports: an ``@name`` naming no
file (a handle, a decorator in prose) is left alone, as the agents leave it.
"""

from __future__ import annotations

import os
import re

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_IMPORT = re.compile(r"(?:(?<=\s)|^)@(?P<path>[^\s`<>\"'|*?\x00]+)", re.MULTILINE)
_TRAILING = ".,;:!)]}"
MAX_IMPORTS_PER_FILE = 64


def outside_code(text: str) -> str:
    """``text`` with fenced code blocks and inline code spans blanked out."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is None and match is not None:
            fence = match.group(1)[0] * 3
            kept.append("")
            continue
        if fence is not None:
            if match is not None and match.group(1).startswith(fence):
                fence = None
            kept.append("")
            continue
        kept.append(line)
    return _SPAN.sub(lambda m: " " * len(m.group(0)), "\n".join(kept))


def import_paths(text: str, importer_dir: str, home: str) -> list[str]:
    """Absolute candidate paths of the ``@`` imports of ``text``, in order, without repeats."""
    out: list[str] = []
    for match in _IMPORT.finditer(outside_code(text)):
        raw = match["path"].rstrip(_TRAILING)
        if not raw:
            continue
        if raw == "~" or raw.startswith("~/"):
            path = os.path.join(home, raw[2:])
        elif os.path.isabs(raw):
            path = raw
        else:
            path = os.path.join(importer_dir, raw)
        path = os.path.normpath(path)
        if path not in out:
            out.append(path)
        if len(out) >= MAX_IMPORTS_PER_FILE:
            break
    return out

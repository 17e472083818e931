"""Glob patterns as the agents' rule files write them: ``**`` spans directories, ``*`` and ``?``
stay within one path segment, ``[abc]`` / ``[!abc]`` are character classes and ``{a,b}`` lists
alternatives (nestable). A pattern matches the whole slash-separated relative path; a pattern
without a slash does not match in subdirectories (``*.py`` is the root's files only).

A rule file comes from the repository, so a pattern is untrusted input: one that is too long or
has too many wildcards is refused (``None``) rather than compiled into a regular expression that
could backtrack for a long time.
"""

from __future__ import annotations

import re

MAX_PATTERN_LENGTH = 512
MAX_WILDCARDS = 16
MAX_BRACE_DEPTH = 8


class _TooComplex(Exception):
    pass


def compile_glob(pattern: str) -> re.Pattern[str] | None:
    """The regular expression of ``pattern``, or None when it is empty or too complex."""
    text = pattern.strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text or len(text) > MAX_PATTERN_LENGTH:
        return None
    if sum(text.count(c) for c in "*?") > MAX_WILDCARDS:
        return None
    try:
        body, _ = _translate(text, 0, 0, closing=None)
    except _TooComplex:
        return None
    return re.compile(body + r"\Z", re.DOTALL)


def glob_matches(pattern: str, relative_path: str) -> bool:
    compiled = compile_glob(pattern)
    return compiled is not None and compiled.match(relative_path) is not None


def split_patterns(value: str) -> list[str]:
    """``"a/**, {b,c}/*.ts"`` -> ``["a/**", "{b,c}/*.ts"]``: commas inside braces stay."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _translate(text: str, i: int, depth: int, closing: str | None) -> tuple[str, int]:
    """Translate from ``i`` up to an unnested ``closing`` character (``,`` or ``}`` inside a
    brace group), returning the regex and the index of the stop."""
    out: list[str] = []
    n = len(text)
    while i < n:
        char = text[i]
        if closing is not None and char in closing:
            return "".join(out), i
        if char == "*":
            if text.startswith("**", i):
                at_start = i == 0 or text[i - 1] == "/"
                end = i + 2
                if at_start and end < n and text[end] == "/":
                    out.append(r"(?:[^/]*/)*")  # "**/": zero or more whole directories
                    i = end + 1
                    continue
                if at_start and end == n:
                    out.append(r".*")
                    i = end
                    continue
            out.append(r"[^/]*")
            i += 1
            while i < n and text[i] == "*":
                i += 1
            continue
        if char == "?":
            out.append(r"[^/]")
            i += 1
            continue
        if char == "[":
            end = text.find("]", i + 2 if text.startswith(("[!", "[^"), i) else i + 1)
            if end == -1:
                out.append(re.escape(char))
                i += 1
                continue
            inner = text[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            if negate:
                inner = inner[1:]
            inner = inner.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
            out.append(f"[{'^' if negate else ''}{inner.replace('/', '')}]")
            i = end + 1
            continue
        if char == "{" and _closes(text, i):
            if depth >= MAX_BRACE_DEPTH:
                raise _TooComplex
            alternatives: list[str] = []
            i += 1
            while True:
                part, i = _translate(text, i, depth + 1, closing=",}")
                alternatives.append(part)
                if text[i] == "}":
                    i += 1
                    break
                i += 1  # the comma
            out.append("(?:" + "|".join(alternatives) + ")")
            continue
        out.append(re.escape(char))
        i += 1
    return "".join(out), i


def _closes(text: str, start: int) -> bool:
    """Whether the brace at ``start`` has a matching closing brace."""
    depth = 0
    for char in text[start:]:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return True
    return False

"""Glob patterns as the agents' rule files write them: ``**`` spans directories, ``*`` and ``?``
stay within one path segment, ``[abc]`` / ``[!abc]`` are character classes and ``{a,b}`` lists
alternatives (nestable). A pattern matches the whole slash-separated relative path; a pattern
without a slash does not match in subdirectories (``*.py`` is the root's files only).

GitHub Copilot in VS Code reads ``applyTo`` differently (``compile_vscode_glob``): ``*``, ``**``
and ``**/*`` mean every file, any other pattern not starting with ``/`` or ``**/`` gets ``**/`` in
front (so ``*.py`` is every Python file and ``src/**`` matches a ``src`` folder at any depth), the
pattern is matched against the file's absolute path, and case is ignored.

Claude Code reads ``paths`` in yet another way (``compile_claude_glob``), observed with Claude Code
2.1.332 (its documentation says ``*.md`` is "Markdown files in the project root", which the CLI
does not do): a pattern not starting with ``/`` or ``**/`` matches at any depth (``*.py`` is every
Python file, ``deep/**`` matches ``src/deep/x.py``), a leading ``/`` anchors it at the root, a
pattern naming a directory covers every file below it (``src``, ``src/deep/``, ``src/*``), case is
ignored, and a ``!`` pattern applies to nothing. Matched against the path from the root.

Patterns come from the repository, so they are untrusted: matching runs the pattern as a small
automaton over the path, one step per character (no backtracking, so ``*a*a*a*b`` against a long
name costs the same as any other pattern), and a pattern that is too long or expands to too many
brace alternatives is refused (``None``), matching nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

MAX_PATTERN_LENGTH = 512
MAX_ALTERNATIVES = 64
MAX_PATH_LENGTH = 4096

# Token kinds.
_LITERAL, _ONE, _CLASS, _STAR, _DIRS, _REST = range(6)
Token = tuple[int, str, bool]  # kind, characters (literal or class), negated class


@attrs.frozen
class Glob:
    """One compiled pattern: its brace alternatives, each a token list.

    ``vscode``: the pattern is VS Code's (``compile_vscode_glob``); ``matches`` then wants the
    file's path from the project root and ``base``, the project root, to make it absolute.
    ``everything``: one of the patterns VS Code takes as every file.
    """

    pattern: str
    alternatives: tuple[tuple[Token, ...], ...]
    vscode: bool = False
    everything: bool = False
    lowercase: bool = False  # the path is matched lower-cased (the pattern already is)
    _literal_ends: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, eq=False, repr=False, alias="_literal_ends"
    )

    def matches(self, path: str, base: str = "") -> bool:
        if self.everything:
            return True
        if self.vscode:
            path = (base.rstrip("/") + "/" + path).lstrip("/").lower()
        elif self.lowercase:
            path = path.lower()
        if len(path) > MAX_PATH_LENGTH:
            return False
        for tokens, (prefix, suffix) in zip(self.alternatives, self.literal_ends, strict=True):
            # Most globs of a rule set fail on their literal ends ("src/", ".py") at once; only
            # those that pass run the automaton.
            if len(path) < len(prefix) + len(suffix):
                continue
            if path.startswith(prefix) and path.endswith(suffix) and _run(tokens, path):
                return True
        return False

    @property
    def literal_ends(self) -> tuple[tuple[str, str], ...]:
        """Per alternative, the literal text every match starts and ends with."""
        found = self._literal_ends
        if found is None:
            found = tuple(_literal_ends(tokens) for tokens in self.alternatives)
            object.__setattr__(self, "_literal_ends", found)
        return found


def compile_glob(pattern: str) -> Glob | None:
    """The compiled ``pattern``, or None when it is empty or too complex to trust."""
    text = pattern.strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text or len(text) > MAX_PATTERN_LENGTH:
        return None
    expanded = _expand(text)
    if expanded is None:
        return None
    return Glob(pattern, tuple(_tokens(alternative) for alternative in expanded))


VSCODE_EVERYTHING = frozenset({"*", "**", "**/*"})


def compile_vscode_glob(pattern: str) -> Glob | None:
    """``pattern`` as GitHub Copilot in VS Code matches an ``applyTo`` glob, or None when it is
    empty or too complex. ``matches(rel, base=project_root)`` then answers for the file at
    ``project_root/rel``."""
    text = pattern.strip()
    if text in VSCODE_EVERYTHING:
        return Glob(pattern, (), vscode=True, everything=True)
    if not text.startswith(("/", "**/")):
        text = "**/" + text
    # Matched against the absolute path without its leading "/": a pattern that starts with
    # "/" is rooted at the filesystem root, as VS Code roots it.
    text = text.lstrip("/").lower()
    if not text or len(text) > MAX_PATTERN_LENGTH:
        return None
    expanded = _expand(text)
    if expanded is None:
        return None
    return Glob(pattern, tuple(_tokens(alternative) for alternative in expanded), vscode=True)


def compile_claude_glob(pattern: str) -> Glob | None:
    """``pattern`` as Claude Code matches a rule's ``paths`` glob (module docstring), or None
    when it is empty or too complex; ``matches`` then wants the path from the project root."""
    text = pattern.strip()
    if text.startswith("!"):
        return Glob(pattern, (), lowercase=True)  # observed: a negated pattern loads nothing
    directory_only = text.endswith("/")
    text = text.rstrip("/")
    if text.startswith("/"):
        text = text.lstrip("/")
    elif not text.startswith("**/") and text != "**":
        text = "**/" + text
    text = text.lower()
    if not text or len(text) > MAX_PATTERN_LENGTH:
        return None
    expanded = _expand(text)
    if expanded is None:
        return None
    below: Token = (_REST, "", False)
    alternatives: list[tuple[Token, ...]] = []
    for alternative in expanded:
        tokens = _tokens(alternative)
        if not directory_only:
            alternatives.append(tokens)
        # A pattern that matches a directory covers everything below it.
        alternatives.append((*tokens, (_LITERAL, "/", False), below))
    return Glob(pattern, tuple(alternatives), lowercase=True)


def glob_matches(pattern: str, relative_path: str) -> bool:
    compiled = compile_glob(pattern)
    return compiled is not None and compiled.matches(relative_path)


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


# --- braces ----------------------------------------------------------------------------------


def _expand(text: str) -> list[str] | None:
    """Every alternative of the first balanced brace group, recursively; None past the cap."""
    group = _first_group(text)
    if group is None:
        return [text]
    start, end = group
    out: list[str] = []
    for option in split_top_level(text[start + 1 : end]):
        expanded = _expand(text[:start] + option + text[end + 1 :])
        if expanded is None:
            return None
        out.extend(expanded)
        if len(out) > MAX_ALTERNATIVES:
            return None
    return out


def _first_group(text: str) -> tuple[int, int] | None:
    """``(open, close)`` of the balanced brace group that opens first, in one pass: each ``}``
    closes the innermost ``{`` still open; an unmatched ``{`` is a plain character."""
    opened: list[int] = []
    first: tuple[int, int] | None = None
    for index, char in enumerate(text):
        if char == "{":
            opened.append(index)
        elif char == "}" and opened:
            start = opened.pop()
            if first is None or start < first[0]:
                first = (start, index)
    return first


def split_top_level(inner: str) -> list[str]:
    """The alternatives of a brace group's body, empty ones kept (``{a,}`` is ``a`` or none)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in inner:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


# --- tokens and the automaton ----------------------------------------------------------------


def _tokens(text: str) -> tuple[Token, ...]:
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "*":
            if text.startswith("**", i) and (i == 0 or text[i - 1] == "/"):
                if i + 2 < n and text[i + 2] == "/":
                    out.append((_DIRS, "", False))  # "**/": zero or more whole directories
                    i += 3
                    continue
                if i + 2 == n:
                    out.append((_REST, "", False))  # a final "**": everything below
                    i += 2
                    continue
            if not out or out[-1][0] != _STAR:
                out.append((_STAR, "", False))
            i += 1
            continue
        if char == "?":
            out.append((_ONE, "", False))
            i += 1
            continue
        if char == "[":
            first = i + 2 if text.startswith(("[!", "[^"), i) else i + 1
            end = text.find("]", first + 1 if first < n and text[first] == "]" else first)
            if end != -1:
                negated = first == i + 2
                out.append((_CLASS, _class_members(text[first:end]), negated))
                i = end + 1
                continue
        out.append((_LITERAL, char, False))
        i += 1
    return tuple(out)


def _class_members(body: str) -> str:
    """The characters of a class body, ranges spelled out (bounded by the pattern length)."""
    members: list[str] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = ord(body[i]), ord(body[i + 2])
            if low <= high and high - low <= 0x3000:
                members.extend(chr(c) for c in range(low, high + 1))
            i += 3
            continue
        members.append(body[i])
        i += 1
    return "".join(members)


def _literal_ends(tokens: tuple[Token, ...]) -> tuple[str, str]:
    """The literal characters at the start and at the end of a token list, not overlapping (a
    pattern without wildcards is all start)."""
    head: list[str] = []
    for kind, members, _ in tokens:
        if kind != _LITERAL:
            break
        head.append(members)
    if len(head) == len(tokens):
        return "".join(head), ""
    tail: list[str] = []
    for kind, members, _ in reversed(tokens):
        if kind != _LITERAL:
            break
        tail.append(members)
    return "".join(head), "".join(reversed(tail))


class StepCount:
    """Automaton steps taken while ``counting`` is set (states stepped, summed over the path's
    characters); the property tests compare its growth, never a time."""

    def __init__(self) -> None:
        self.count = 0


counting: StepCount | None = None


def _run(tokens: tuple[Token, ...], path: str) -> bool:
    """Simulate the pattern's automaton; a state is (token index, inside a ``**/``). Each
    character steps at most two states per token, so a run costs O(len(path) * len(tokens))."""
    end = len(tokens)
    states = _closure(tokens, {(0, False)})
    counter = counting
    for char in path:
        if counter is not None:
            counter.count += len(states)
        following: set[tuple[int, bool]] = set()
        for index, _inside in states:  # both halves of a "**/" state step alike
            if index == end:
                continue
            kind, members, negated = tokens[index]
            if kind == _LITERAL:
                if char == members:
                    following.add((index + 1, False))
            elif kind == _ONE:
                if char != "/":
                    following.add((index + 1, False))
            elif kind == _CLASS:
                if char != "/" and (char in members) != negated:
                    following.add((index + 1, False))
            elif kind == _STAR:
                if char != "/":
                    following.add((index, False))
            elif kind == _DIRS:
                following.add((index, True))
                if char == "/":
                    following.add((index + 1, False))
            elif kind == _REST:
                following.add((index, False))
        if not following:
            return False
        states = _closure(tokens, following)
    return (end, False) in states


def _closure(
    tokens: tuple[Token, ...], states: Iterable[tuple[int, bool]]
) -> set[tuple[int, bool]]:
    """Add the states reachable without consuming a character (``*``, ``**/`` and a final
    ``**`` may match nothing)."""
    out = set(states)
    pending = list(out)
    while pending:
        index, inside = pending.pop()
        if index < len(tokens) and not inside and tokens[index][0] in (_STAR, _DIRS, _REST):
            state = (index + 1, False)
            if state not in out:
                out.add(state)
                pending.append(state)
    return out

"""``.gitignore`` patterns matched in time linear in the path, whatever the pattern.

pathspec turns each gitignore pattern into a Python regular expression, and Python's ``re``
backtracks: ``*a*a*a*b`` becomes ``[^/]*a[^/]*a[^/]*a[^/]*b``, which takes about n^4 steps on a
directory name of n ``a``\\ s (a 240-character name: 9 s, holding the interpreter lock). A
repository writes both the pattern and the names, so such a pattern must not reach ``re``.

A pattern's regex is kept when it has at most one quantifier that may cross a ``/``
(``(?:.+/)?`` of an unanchored pattern, ``(?:/.+)?`` of a middle ``**``) and at most one within a
name (``[^/]*`` or ``[^/]+``): each name is then scanned a bounded number of times, so the match
is linear. Any other pattern runs as the automaton of ``globs`` (one step per character, never
backtracking), built from the same regex, so both agree on what matches and on whether it
matched through a directory (pathspec's ``ps_d`` group, which decides which of two matching
patterns wins). A regex this module does not know how to read (a future pathspec writing other
constructs) is kept only when it passes the first test; otherwise the pattern matches nothing.

The two kinds are told apart once, when a ``.gitignore`` is parsed; the spec always uses
pathspec's ``simple`` backend, which calls each pattern's own ``match_file``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pathspec
from pathspec.pattern import RegexMatchResult
from pathspec.patterns.gitignore.spec import _DIR_MARK, GitIgnoreSpecPattern

from .globs import _CLASS, _DIRS, _LITERAL, _ONE, _REST, _STAR, Token, _class_members, _run

_CROSSING = ("(?:.+/)?", "(?:/.+)?")
_WITHIN = ("[^/]*", "[^/]+")
_EXACT_OR_DIRECTORY = "(?:(?P<" + _DIR_MARK + ">/)|$)"
_DIRECTORY = "(?P<" + _DIR_MARK + ">/)"
_METACHARACTERS = frozenset("()|*+?.{}$^[]\\")


class _Mark:
    """What ``RegexMatchResult.match`` must offer the simple backend: the directory mark."""

    __slots__ = ("_mark",)

    def __init__(self, mark: str | None) -> None:
        self._mark = mark

    def groupdict(self) -> dict[str, str | None]:
        return {_DIR_MARK: self._mark}


class LinearIgnorePattern(GitIgnoreSpecPattern):
    """A gitignore pattern whose matching is linear in the path: pathspec's regex when that is
    safe, else the same regex run as an automaton."""

    # (tokens, ending): ending "either" (the path, or the path of a directory above the file),
    # "directory" (a directory above it), "prefix" (anything after), "anything" (non-empty);
    # None: the regex is used.
    _automaton: tuple[tuple[Token, ...], str] | None
    refused: bool

    def __init__(self, pattern: str, *, always_automaton: bool = False) -> None:
        super().__init__(pattern)
        self._automaton = None
        self.refused = False
        regex = self.regex
        if regex is None or (safe_for_re(regex.pattern) and not always_automaton):
            return
        automaton = automaton_of(regex.pattern)
        if automaton is None and not safe_for_re(regex.pattern):
            self.refused = True  # unknown and not safe: matches nothing rather than hang
        self._automaton = automaton

    def match_file(self, file: Any) -> RegexMatchResult | None:
        if self._automaton is None:
            if self.refused:
                return None
            found: RegexMatchResult | None = super().match_file(file)
            return found
        if not isinstance(file, str):
            return None
        mark = _match(self._automaton, file)
        if mark is False:
            return None
        return RegexMatchResult(_Mark(mark))  # type: ignore[arg-type]


def safe_for_re(regex: str) -> bool:
    """Whether ``re`` runs this pathspec regex in linear time (see the module docstring)."""
    crossing = sum(regex.count(q) for q in _CROSSING)
    within = sum(regex.count(q) for q in _WITHIN)
    return crossing <= 1 and within <= 1


def automaton_of(regex: str) -> tuple[tuple[Token, ...], str] | None:
    """The token list and ending of a pathspec gitignore regex, or None for a construct this
    reader does not know."""
    if regex == ".":
        return (), "anything"
    if not regex.startswith("^"):
        return None
    body = regex[1:]
    if body.endswith(_EXACT_OR_DIRECTORY):
        body, ending = body[: -len(_EXACT_OR_DIRECTORY)], "either"
    elif body.endswith(_DIRECTORY):
        body, ending = body[: -len(_DIRECTORY)], "directory"
    else:
        ending = "prefix"
    tokens: list[Token] = []
    i, n = 0, len(body)
    while i < n:
        if body.startswith("(?:.+/)?", i):
            tokens.append((_DIRS, "", False))
            i += 8
        elif body.startswith("(?:/.+)?/", i):
            tokens.extend([(_LITERAL, "/", False), (_DIRS, "", False)])
            i += 9
        elif body.startswith("[^/]*", i):
            tokens.append((_STAR, "", False))
            i += 5
        elif body.startswith("[^/]+", i):
            tokens.extend([(_ONE, "", False), (_STAR, "", False)])
            i += 5
        elif body.startswith("[^/]", i):
            tokens.append((_ONE, "", False))
            i += 4
        elif body[i] == "[":
            negated = body.startswith("[^", i)
            start = i + 2 if negated else i + 1
            end = body.find("]", start + 1 if body[start : start + 1] == "]" else start)
            if end == -1 or "\\" in body[start:end]:
                return None
            tokens.append((_CLASS, _class_members(body[start:end]), negated))
            i = end + 1
        elif body[i] == "\\" and i + 1 < n:
            tokens.append((_LITERAL, body[i + 1], False))
            i += 2
        elif body[i] in _METACHARACTERS:
            return None
        else:
            tokens.append((_LITERAL, body[i], False))
            i += 1
    return tuple(tokens), ending


def _match(automaton: tuple[tuple[Token, ...], str], path: str) -> str | bool | None:
    """False when ``path`` does not match; else the directory mark (``"/"`` when it matched
    through a directory above, None when it matched itself)."""
    tokens, ending = automaton
    if ending == "anything":
        return None if path else False
    if ending == "prefix":
        return None if _run((*tokens, (_REST, "", False)), path) else False
    through_directory = (*tokens, (_LITERAL, "/", False), (_REST, "", False))
    # As re finds it for these regexes: the path itself when it matches, else a directory.
    if ending == "either" and _run(tokens, path):
        return None
    return "/" if _run(through_directory, path) else False


def linear_spec(lines: Iterable[str], *, skip_bad: bool) -> pathspec.GitIgnoreSpec:
    """A spec of gitignore ``lines`` whose every match is linear in the path. With
    ``skip_bad`` a line pathspec rejects is skipped (as git skips it); else it raises
    ValueError as pathspec does."""
    patterns = []
    for line in lines:
        if not line:
            continue  # as from_lines skips them
        try:
            patterns.append(LinearIgnorePattern(line))
        except ValueError:  # pathspec's pattern errors subclass ValueError in every version
            if not skip_bad:
                raise
    # The simple backend calls each pattern's own match_file; the others compile the regexes.
    return pathspec.GitIgnoreSpec(patterns, backend="simple")

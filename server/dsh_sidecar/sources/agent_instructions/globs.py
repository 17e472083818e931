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
does not do): as in a ``.gitignore``, a pattern without a slash before its end (a trailing ``/**``
aside) matches at any depth (``*.py`` is every Python file, ``deep/**`` matches
``src/deep/x.py``), one with a slash is anchored at the root (``sub/*.py`` misses
``pkg/sub/x.py``, ``/x.py`` is the root's only), a pattern naming a directory covers every
file below it (``src``, ``src/deep/``, ``src/*``), case is ignored, and a ``!`` pattern applies to nothing. Matched against the path from the root.

Patterns come from the repository, so they are untrusted: matching runs the pattern as a small
automaton over the path, one step per character (no backtracking, so ``*a*a*a*b`` against a long
name costs the same as any other pattern), and a pattern that is too long or expands to too many
brace alternatives is refused (``None``), matching nothing. A pattern's brace alternatives run as
one automaton, not one after another: alternatives that begin alike share their states, and so
do those that end alike (``src/{a,b,…}/**/*.py`` steps through ``src/`` once and through
``/**/*.py`` once), so 64 alternatives cost about what their differences cost.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import attrs

from .frontmatter import offsets_of

MAX_PATTERN_LENGTH = 512
MAX_ALTERNATIVES = 64
MAX_PATH_LENGTH = 4096

# Token kinds.
_LITERAL, _ONE, _CLASS, _STAR, _DIRS, _REST = range(6)
Token = tuple[int, str, bool]  # kind, characters (literal or class), negated class


@attrs.frozen
class Glob:
    """One compiled pattern: its brace alternatives as one automaton (``_merge``), and the
    literal text each alternative's matches start and end with.

    ``vscode``: the pattern is VS Code's (``compile_vscode_glob``); ``matches`` then wants the
    file's path from the project root and ``base``, the project root, to make it absolute.
    ``everything``: one of the patterns VS Code takes as every file.
    """

    pattern: str
    automaton: _Merged
    # Per alternative (each distinct pair once): the literal text every match starts and ends
    # with (``{a,b}/*.py`` has one pair per first segment, ``x.{c,h}`` two).
    literal_ends: tuple[tuple[str, str], ...]
    vscode: bool = False
    everything: bool = False
    lowercase: bool = False  # the path is matched lower-cased (the pattern already is)

    def matches(self, path: str, base: str = "") -> bool:
        if self.everything:
            return True
        if self.vscode:
            path = (base.rstrip("/") + "/" + path).lstrip("/").lower()
        elif self.lowercase:
            path = path.lower()
        if len(path) > MAX_PATH_LENGTH:
            return False
        # Most globs of a rule set fail on their literal ends ("src/", ".py") at once; only
        # those that pass run the automaton (every alternative's at once: one whose ends
        # failed cannot match in it either).
        for prefix, suffix in self.literal_ends:
            if (
                len(path) >= len(prefix) + len(suffix)
                and path.startswith(prefix)
                and path.endswith(suffix)
            ):
                return _run_merged(self.automaton, path)
        return False


def _glob(
    pattern: str, expanded: list[str], below: Literal["", "also", "only"] = "", **flags: bool
) -> Glob:
    """The ``Glob`` of ``pattern``'s brace alternatives ``expanded``. ``below`` (Claude Code's
    directories): "also", each alternative matches as written and with "/**" after it
    (everything below what it names); "only", with "/**" only (a pattern ending in "/")."""
    alternatives = _tokens_of_all(expanded)
    if compiling is not None:
        compiling.count += sum(len(tokens) for tokens in alternatives)
    ends = (_literal_ends(tokens) for tokens in alternatives)
    if below:
        # A path below what an alternative names starts as its matches do, and ends otherwise.
        ends = ((prefix, "") for prefix, _ in ends)
    return Glob(pattern, _merge(alternatives, below), tuple(dict.fromkeys(ends)), **flags)


def compile_glob(pattern: str) -> Glob | None:
    """The compiled ``pattern``, or None when it is empty or too complex to trust."""
    return _compiled("root", pattern, _compile_glob)


def _compile_glob(pattern: str) -> Glob | None:
    text = pattern.strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text or len(text) > MAX_PATTERN_LENGTH:
        return None
    expanded = _expand(text)
    if expanded is None:
        return None
    return _glob(pattern, expanded)


VSCODE_EVERYTHING = frozenset({"*", "**", "**/*"})


def compile_vscode_glob(pattern: str) -> Glob | None:
    """``pattern`` as GitHub Copilot in VS Code matches an ``applyTo`` glob, or None when it is
    empty or too complex. ``matches(rel, base=project_root)`` then answers for the file at
    ``project_root/rel``."""
    return _compiled("vscode", pattern, _compile_vscode_glob)


def _compile_vscode_glob(pattern: str) -> Glob | None:
    text = pattern.strip()
    if text in VSCODE_EVERYTHING:
        return Glob(pattern, _NOTHING, (), vscode=True, everything=True)
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
    return _glob(pattern, expanded, vscode=True)


def compile_claude_glob(pattern: str) -> Glob | None:
    """``pattern`` as Claude Code matches a rule's ``paths`` glob (module docstring), or None
    when it is empty or too complex; ``matches`` then wants the path from the project root."""
    return _compiled("claude", pattern, _compile_claude_glob)


def _compile_claude_glob(pattern: str) -> Glob | None:
    text = pattern.strip()
    if text.startswith("!"):
        # Observed: a negated pattern loads nothing.
        return Glob(pattern, _NOTHING, (), lowercase=True)
    directory_only = text.endswith("/")
    text = text.rstrip("/")
    if text.startswith("/"):
        text = text.lstrip("/")
    elif "/" not in text.removesuffix("/**") and text != "**":
        # As in a .gitignore: a pattern with a slash before its end (a trailing "/**" aside,
        # which Claude Code drops) is anchored at the base; one without matches at any depth
        # (2.1.332, issue 33: "sub/*.py" misses pkg/sub/x.py, "deep/**" finds src/deep/).
        text = "**/" + text
    text = text.lower()
    if not text or len(text) > MAX_PATTERN_LENGTH:
        return None
    expanded = _expand(text)
    if expanded is None:
        return None
    # A pattern that matches a directory covers everything below it.
    return _glob(pattern, expanded, "only" if directory_only else "also", lowercase=True)


# --- compiled once ------------------------------------------------------------------------------

# Compiled globs by dialect and pattern, the most recently used kept while their automata hold
# at most this many nodes together (a node is a token and its successors: some 100 bytes). A
# request reads the same rule files more than once (the sidecar's chain, then each agent's
# simulation) and the next request reads them again, so each pattern is compiled once while it
# is in use; a glob is never changed once made, so one object serves every thread.
CACHE_NODES = 400_000
_cache: OrderedDict[tuple[str, str], Glob | None] = OrderedDict()
_cache_nodes = 0
_cache_lock = threading.Lock()


def _compiled(dialect: str, pattern: str, compile_one: Callable[[str], Glob | None]) -> Glob | None:
    global _cache_nodes
    key = (dialect, pattern)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    made = compile_one(pattern)
    size = _nodes(made)
    with _cache_lock:
        if key not in _cache and size <= CACHE_NODES:
            _cache[key] = made
            _cache_nodes += size
            while _cache_nodes > CACHE_NODES:
                _, dropped = _cache.popitem(last=False)
                _cache_nodes -= _nodes(dropped)
    return made


def _nodes(glob: Glob | None) -> int:
    return 1 if glob is None else len(glob.automaton.kinds)


def glob_matches(pattern: str, relative_path: str) -> bool:
    compiled = compile_glob(pattern)
    return compiled is not None and compiled.matches(relative_path)


def split_patterns(value: str) -> list[str]:
    """``"a/**, {b,c}/*.ts"`` -> ``["a/**", "{b,c}/*.ts"]``: commas inside braces stay. Only
    braces and commas are visited (``offsets_of``), not every character."""
    parts: list[str] = []
    depth = 0
    start = 0
    for index in offsets_of(value, "{},"):
        char = value[index]
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(value[start:index])
            start = index + 1
    parts.append(value[start:])
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
    closes the innermost ``{`` still open; an unmatched ``{`` is a plain character. Only the
    braces are visited (``offsets_of``): each of a pattern's alternatives is scanned again, and
    most have none left."""
    opened: list[int] = []
    first: tuple[int, int] | None = None
    for index in offsets_of(text, "{}"):
        char = text[index]
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
    start = 0
    depth = 0
    for index in offsets_of(inner, "{},"):
        char = inner[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif depth == 0:  # a comma
            parts.append(inner[start:index])
            start = index + 1
    parts.append(inner[start:])
    return parts


# --- tokens and the automaton ----------------------------------------------------------------


# One character class: it succeeds or fails at each character, never trying alternatives, and
# each search stops at the first wildcard after a run, so a pattern is read once.
_WILDCARD = re.compile(r"[*?\[]")


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
        # A run of plain characters up to the next wildcard, as literals at once.
        found = _WILDCARD.search(text, i + 1)
        end = n if found is None else found.start()
        out.extend((_LITERAL, plain, False) for plain in text[i:end])
        i = end
    return tuple(out)


def _tokens_of_all(expanded: list[str]) -> tuple[tuple[Token, ...], ...]:
    """``_tokens`` of each alternative, the text they all start and end with tokenized once.

    Brace alternatives differ in a middle (``**/{m0,…,m63}-7/**/*.py``): tokenizing the shared
    ends 64 times was most of compiling such a glob. A token depends on its neighbours only
    around a ``*`` (``**`` wants a ``/`` or the start before it and looks two ahead; stars
    merge) and a class (its ``]`` may lie anywhere after), so where the pattern has no ``[``,
    text cut between two characters that are not ``*`` tokenizes as its pieces do."""
    if len(expanded) < 2 or any("[" in alternative for alternative in expanded):
        return tuple(_tokens(alternative) for alternative in expanded)
    shortest = min(len(alternative) for alternative in expanded)
    head = _common_text(expanded, shortest)
    while head and not all(_cuttable(a, head) for a in expanded):
        head -= 1
    tail = _common_text([a[::-1] for a in expanded], shortest - head)
    while tail and not all(_cuttable(a, len(a) - tail) for a in expanded):
        tail -= 1
    first = expanded[0]
    before = _tokens(first[:head])
    after = _tokens(first[len(first) - tail :])
    return tuple(
        (*before, *_tokens(alternative[head : len(alternative) - tail]), *after)
        for alternative in expanded
    )


def _common_text(texts: list[str], limit: int) -> int:
    """How many leading characters all ``texts`` share, at most ``limit``: those the least and
    the greatest of them share."""
    low, high = min(texts), max(texts)
    for index in range(min(limit, len(low))):
        if low[index] != high[index]:
            return index
    return min(limit, len(low))


def _cuttable(text: str, at: int) -> bool:
    """Whether ``text`` tokenizes as ``text[:at]`` and ``text[at:]`` do (no ``[`` in it)."""
    return (at == 0 or text[at - 1] != "*") and (at == len(text) or text[at] != "*")


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
    characters), and tokens made while ``compiling`` is set (summed over a pattern's brace
    alternatives, one per compilation); the property tests compare their growth, never a
    time."""

    def __init__(self) -> None:
        self.count = 0


counting: StepCount | None = None
compiling: StepCount | None = None


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


# --- the alternatives as one automaton --------------------------------------------------------

_ACCEPT = 0  # the state past the last token of some alternative


@attrs.frozen
class _Merged:
    """Every alternative's tokens in one graph: node ``n`` (from 1) is a token (``kinds[n]``,
    ``members[n]``, ``negated[n]``) and ``after[n]`` the nodes that may come next, ``_ACCEPT``
    among them where an alternative can end. States are encoded ``node * 2 + inside`` (inside a
    ``**/``), as ``_run``'s ``(index, inside)``."""

    kinds: tuple[int, ...]
    members: tuple[str, ...]
    negated: tuple[bool, ...]
    after: tuple[tuple[int, ...], ...]  # encoded states (inside clear)
    start: tuple[int, ...]  # encoded states before the first character


def _merge(alternatives: tuple[tuple[Token, ...], ...], below: str = "") -> _Merged:
    """One graph for ``alternatives``: the tokens every alternative starts with, once; then the
    middles, as a trie (middles that begin alike share their nodes); then the tokens every
    alternative ends with, once. Brace expansion makes exactly that shape (``src/{a,b}/*.py``:
    ``src/``, then ``a`` or ``b``, then ``/*.py``), and it accepts what the alternatives
    accept: a path that one of them matches, no other. Nodes: at most the alternatives' tokens
    together, and for an expanded brace about the length of the pattern. ``below`` (Claude
    Code's directories, ``Glob.below``): after the last token, "/" and then anything, as well
    as the end ("also") or instead of it ("only")."""
    kinds, members, negated = [-1], [""], [False]
    after: list[list[int]] = [[]]

    def node(token: Token) -> int:
        kinds.append(token[0])
        members.append(token[1])
        negated.append(token[2])
        after.append([])
        return len(kinds) - 1

    def chain(tokens: Sequence[Token]) -> tuple[int, int]:
        """A run of nodes, one per token; its first and last node (``0, 0`` for none)."""
        first = last = 0
        for token in tokens:
            made = node(token)
            if last:
                after[last].append(made * 2)
            else:
                first = made
            last = made
        return first, last

    if not alternatives:
        return _NOTHING
    head = _common_start(alternatives)
    shortest = min(len(tokens) for tokens in alternatives)
    tail = min(_common_start([tokens[::-1] for tokens in alternatives]), shortest - head)
    first = alternatives[0]
    head_first, head_last = chain(first[:head])
    tail_first, tail_last = chain(first[len(first) - tail :])
    end = _ACCEPT * 2
    if below:
        slash, _ = chain(((_LITERAL, "/", False), (_REST, "", False)))
        after[slash + 1].append(_ACCEPT * 2)
        end = slash * 2
    if tail_last:
        after[tail_last].append(end)
        if below == "also":
            after[tail_last].append(_ACCEPT * 2)
    past_middle = tail_first * 2 if tail else end
    # The middles' trie: ``entries`` are the states a middle starts with; ``children`` maps a
    # node's next token to its child.
    entries: list[int] = []
    top: dict[Token, int] = {}
    children: dict[int, dict[Token, int]] = {}
    for tokens in alternatives:
        middle = tokens[head : len(tokens) - tail]
        if not middle:
            entries.append(past_middle)
            if below == "also" and not tail:
                entries.append(_ACCEPT * 2)
            continue
        level = top
        parent = 0
        for token in middle:
            child = level.get(token)
            if child is None:
                child = node(token)
                level[token] = child
                (after[parent] if parent else entries).append(child * 2)
                children[child] = {}
            parent, level = child, children[child]
        after[parent].append(past_middle)
        if below == "also" and not tail:
            after[parent].append(_ACCEPT * 2)
    entries = list(dict.fromkeys(entries))
    start: tuple[int, ...] = tuple(entries)
    if head_last:
        after[head_last].extend(entries)
        start = (head_first * 2,)
    return _Merged(
        tuple(kinds),
        tuple(members),
        tuple(negated),
        tuple(tuple(dict.fromkeys(states)) for states in after),
        start,
    )


def _common_start(sequences: Sequence[tuple[Token, ...]]) -> int:
    """How many leading tokens all ``sequences`` share: those the least and the greatest of
    them share (any other lies between the two)."""
    low, high = min(sequences), max(sequences)
    for index, token in enumerate(low):
        if token != high[index]:
            return index
    return len(low)


# The automaton of no alternative: it matches nothing.
_NOTHING = _Merged((-1,), ("",), (False,), ((),), ())

_SKIPPABLE = frozenset((_STAR, _DIRS, _REST))


def _run_merged(automaton: _Merged, path: str) -> bool:
    """``_run`` over the merged alternatives: whether any of them matches ``path``. Each
    character steps each state at most once, and there are at most two per node, so a run costs
    O(len(path) * nodes), nodes never more than the alternatives' tokens together."""
    kinds, members, negated, after = (
        automaton.kinds,
        automaton.members,
        automaton.negated,
        automaton.after,
    )
    states = _merged_closure(automaton, automaton.start)
    counter = counting
    for char in path:
        if counter is not None:
            counter.count += len(states)
        following: set[int] = set()
        for state in states:
            node = state >> 1
            kind = kinds[node]
            if kind == _LITERAL:
                if char == members[node]:
                    following.update(after[node])
            elif kind == _ONE:
                if char != "/":
                    following.update(after[node])
            elif kind == _CLASS:
                if char != "/" and (char in members[node]) != negated[node]:
                    following.update(after[node])
            elif kind == _STAR:
                if char != "/":
                    following.add(node * 2)
            elif kind == _DIRS:
                following.add(node * 2 + 1)
                if char == "/":
                    following.update(after[node])
            elif kind == _REST:
                following.add(node * 2)
            # _ACCEPT (kind -1) consumes nothing: a path longer than the match dies there.
        if not following:
            return False
        states = _merged_closure(automaton, following)
    return _ACCEPT * 2 in states


def _merged_closure(automaton: _Merged, states: Iterable[int]) -> set[int]:
    """Add the states reachable without consuming a character (``*``, ``**/`` and a final
    ``**`` may match nothing)."""
    out = set(states)
    pending = [state for state in out if not state & 1]
    kinds, after = automaton.kinds, automaton.after
    while pending:
        node = pending.pop() >> 1
        if kinds[node] in _SKIPPABLE:
            for state in after[node]:
                if state not in out:
                    out.add(state)
                    pending.append(state)
    return out

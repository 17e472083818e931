"""The files Claude Code itself counts as read by a ``Bash`` command (2.1.332).

Claude Code reads the command of every ``Bash`` call that only prints a file, and takes such a
file as read, as after its ``Read`` tool: it loads the nested ``CLAUDE.md`` files for it
(``nested_traversal``) and later reports its changes. So for these files the complement asks the
agent's model, as after a ``Read``; otherwise the hook sends those ``CLAUDE.md`` files a second
time. The facts:
docs/reference/agent-clis.md, Claude Code's own reads through Bash

Claude Code's rule, from its shipped code: nothing at all when the command holds ``|``, ``<`` or
``>``; the command split into its simple commands; with more than one, every one is a read or
starts with ``echo``, ``printf``, ``true`` or ``:``. A read is ``cat``, ``nl``, ``bat`` or
``batcat`` with one file operand and only their numbering (and for ``bat`` plain) options;
``head`` or ``tail`` with one file and at most a line count; or ``sed`` with ``-n`` (never
``-i`` or ``-e``), a ``Np`` or ``N,Mp`` script and one file; or, as the only command, ``grep``,
``egrep``, ``fgrep`` or ``rg`` with a short list of options, a pattern and one file that is not a
glob, counted only when it exits 0. The file (its path at most 4,096 characters) is then taken as
read when it is a regular file of at most 10 MiB and the slice the command printed is not blank
where the file is not. Claude Code takes nothing as read after a command that was interrupted,
moved to the background or printed an image.

The hook input tells a ``grep`` that exited 0: a non-zero exit of these commands either fails the
call (2 and up: no ``PostToolUse`` at all) or, for 1, comes with ``returnCodeInterpretation`` "No
matches found" in ``tool_response``. So a search counts only in a ``PostToolUse`` whose
``tool_response`` has no such interpretation, never before the call.

This reads fewer commands than Claude Code, never more. Quotes are read where every shell
grammar agrees on them (``_simple_commands``): a single-quoted word as written, a double-quoted
one without ``$``, a backquote, a backslash or ``!`` inside, and separators inside quotes as
text; a command with anything else (an expansion, an escape, a quote left open) is left out. A
file wrongly taken as read would lose its nested files; one left out costs a repeat.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from typing import Any

MAX_FILE_BYTES = 10 * 1024 * 1024  # Claude Code's own limit for such a read
MAX_PATH_CHARS = 4096  # a longer path is never taken as read
_DEFAULT_LINES = 10  # head's and tail's count when none is given
_SEPARATOR_AT = re.compile(r"&&|\|\||;|&|\n")
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./@%+=:,~^-]+")
# A quoted string every shell reads the same way: '...' as written, "..." with nothing inside
# that a shell would expand or unescape.
_QUOTED = re.compile(r"'[^']*'|\"[^\"$`\\!]*\"")
_FILLERS = frozenset({"echo", "printf", "true", ":"})
_PRINTERS: dict[str, frozenset[str]] = {
    "cat": frozenset({"-n", "--number"}),
    "nl": frozenset(),
    "bat": frozenset({"-n", "--number", "-p", "--plain"}),
    "batcat": frozenset({"-n", "--number", "-p", "--plain"}),
}
_SED_RANGE = re.compile(r"^(\d+),(\d+)p$")
_SED_LINE = re.compile(r"^(\d+)p$")
# grep's and rg's options Claude Code allows in such a search: clusters of short flags, a few long
# ones, and the context line counts (-A/-B/-C N, -AN, --context=N; rg also --context N).
_SEARCH_SHORT = {
    "grep": re.compile(r"^-[niwxEFGPHh]+$"),
    "rg": re.compile(r"^-[iSswxFnNHUP]+$"),
}
_SEARCH_LONG = {
    "grep": frozenset(
        {
            "--line-number",
            "--ignore-case",
            "--word-regexp",
            "--line-regexp",
            "--extended-regexp",
            "--fixed-strings",
            "--basic-regexp",
            "--perl-regexp",
            "--with-filename",
            "--no-filename",
            "--color=never",
            "--color=auto",
        }
    ),
    "rg": frozenset(
        {
            "--ignore-case",
            "--smart-case",
            "--case-sensitive",
            "--word-regexp",
            "--line-regexp",
            "--fixed-strings",
            "--line-number",
            "--no-line-number",
            "--with-filename",
            "--no-filename",
            "--multiline",
            "--pcre2",
        }
    ),
}
_SEARCHERS: dict[str, str] = {"grep": "grep", "egrep": "grep", "fgrep": "grep", "rg": "rg"}
_CONTEXT_JOINED = re.compile(r"^-[ABC]\d+$|^--(?:after-context|before-context|context)=\d+$")
_RG_CONTEXT_LONG = frozenset({"--after-context", "--before-context", "--context"})
_GLOB = re.compile(r"[*?[{]")  # as Claude Code checks it (no plain word holds these today)


# A slice of the file's lines: (first line, last line) from 1, or (-count, None) for a tail.
Slice = tuple[int, int | None] | None


def claude_reads(
    command: str, cwd: str, response: Mapping[str, Any] | None = None
) -> tuple[str, ...]:
    """Absolute paths of the files Claude Code takes as read by ``command`` run in ``cwd``.

    ``response``: the call's ``tool_response`` once it ran (``PostToolUse``); None before it,
    when a search cannot count yet (whether it exits 0 is not known)."""
    if any(c in command for c in "|<>") or (response is not None and not _reads_after(response)):
        return ()
    parts = _simple_commands(command)
    if parts is None:
        return ()
    found: list[str] = []
    for words in parts:
        read = _read_of(words)
        if read is None and len(parts) == 1 and _exited_zero(response):
            read = _search(words)
        if read is None:
            if len(parts) > 1 and words[0] in _FILLERS:
                continue
            return ()
        path, lines = read
        full = os.path.normpath(os.path.join(cwd, path))
        if len(path) <= MAX_PATH_CHARS and _printed_something(full, lines):
            found.append(full)
    return tuple(dict.fromkeys(found))


def _reads_after(response: Mapping[str, Any]) -> bool:
    """Claude Code's read step runs only after a command that was not interrupted, not moved to
    the background (a timeout does that too) and did not print an image."""
    return not (
        response.get("interrupted") is True
        or response.get("isImage") is True
        or response.get("backgroundTaskId") is not None
    )


def _exited_zero(response: Mapping[str, Any] | None) -> bool:
    """Whether a lone search's call exited 0: its response is Claude Code's Bash output (it
    says ``interrupted``) without the "No matches found" that exit 1 brings."""
    return (
        response is not None
        and isinstance(response.get("interrupted"), bool)
        and "returnCodeInterpretation" not in response
    )


def _simple_commands(command: str) -> list[list[str]] | None:
    """``command`` as its simple commands, each a list of words with their quotes removed;
    None when a part of it is not read here (an expansion, an escape, an unclosed quote).

    Words are runs of plain characters and quoted strings side by side (``a'b c'`` is one word,
    ``ab c``); ``&&``, ``||``, ``;``, ``&`` and a newline end a command outside quotes."""
    commands: list[list[str]] = []
    words: list[str] = []
    # The pieces of the word being read, joined once at its end: a model-steered command of many
    # quoted pieces side by side would cost the square of its length if each were appended.
    pieces: list[str] | None = None  # None between words
    at, end = 0, len(command)
    while at < end:
        char = command[at]
        separator = _SEPARATOR_AT.match(command, at)
        if separator or char in " \t":
            if pieces is not None:
                words.append("".join(pieces))
                pieces = None
            if separator:
                if words:
                    commands.append(words)
                words = []
                at = separator.end()
            else:
                at += 1
            continue
        plain = _PLAIN_WORD.match(command, at)
        quoted = None if plain else _QUOTED.match(command, at)
        if plain is None and quoted is None:
            return None
        pieces = [] if pieces is None else pieces
        if plain is not None:
            pieces.append(plain.group())
            at = plain.end()
        elif quoted is not None:
            pieces.append(quoted.group()[1:-1])
            at = quoted.end()
    if pieces is not None:
        words.append("".join(pieces))
    if words:
        commands.append(words)
    return commands


def _read_of(words: list[str]) -> tuple[str, Slice] | None:
    name, rest = words[0], words[1:]
    if name in _PRINTERS:
        return _printer(rest, _PRINTERS[name])
    if name in ("head", "tail"):
        return _head_tail(rest, tail=name == "tail")
    if name == "sed":
        return _sed(rest)
    return None


def _printer(rest: list[str], flags: frozenset[str]) -> tuple[str, Slice] | None:
    operands = []
    for word in rest:
        if word.startswith("-") and word != "-":
            if word not in flags:
                return None
            continue
        operands.append(word)
    if len(operands) != 1 or operands[0] == "-":
        return None
    return operands[0], (1, None)


def _head_tail(rest: list[str], *, tail: bool) -> tuple[str, Slice] | None:
    count: int | None = None
    operand: str | None = None
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in ("-n", "--lines"):
            i += 1
            if i == len(rest) or not rest[i].isdigit():
                return None
            count = int(rest[i])
        elif word.startswith("--lines=") and word[8:].isdigit():
            count = int(word[8:])
        elif re.fullmatch(r"-n\d+", word):
            count = int(word[2:])
        elif re.fullmatch(r"-\d+", word):
            count = int(word[1:])
        elif word.startswith("-"):
            return None
        elif operand is None:
            operand = word
        else:
            return None
        i += 1
    if operand is None or operand == "-" or count == 0:
        return None
    lines = count if count is not None else _DEFAULT_LINES
    return operand, ((-lines, None) if tail else (1, lines))


def _sed(rest: list[str]) -> tuple[str, Slice] | None:
    quiet = False
    operands: list[str] = []
    for word in rest:
        if word.startswith("--"):
            if word == "--in-place" or word.startswith("--in-place=") or word == "--expression":
                return None
            quiet = quiet or word in ("--quiet", "--silent")
        elif word.startswith("-"):
            if "i" in word or word == "-e":
                return None
            quiet = quiet or "n" in word
        else:
            operands.append(word)
    if not quiet or len(operands) != 2:
        return None
    script, path = operands
    if match := _SED_RANGE.match(script):
        return path, (int(match[1]), int(match[2]))
    if match := _SED_LINE.match(script):
        return path, (int(match[1]), int(match[1]))
    return None


def _search(words: list[str]) -> tuple[str, Slice] | None:
    """``grep``/``egrep``/``fgrep``/``rg`` with allowed options, a pattern and one file: the
    whole file counts as read (its printed lines are not what Claude Code checks)."""
    if words[0] not in _SEARCHERS:
        return None
    kind = _SEARCHERS[words[0]]
    operands: list[str] = []
    rest = iter(words[1:])
    for word in rest:
        if not word.startswith("-") or word == "-":
            operands.append(word)
        elif word in ("-A", "-B", "-C") or (kind == "rg" and word in _RG_CONTEXT_LONG):
            if not next(rest, "").isdigit():
                return None
        elif not (
            _CONTEXT_JOINED.match(word)
            or _SEARCH_SHORT[kind].match(word)
            or word in _SEARCH_LONG[kind]
        ):
            return None
    if len(operands) != 2 or operands[1] == "-" or _GLOB.search(operands[1]):
        return None
    return operands[1], (1, None)


def _printed_something(path: str, lines: Slice) -> bool:
    """Claude Code's own checks: a regular file of at most 10 MiB whose printed slice exists
    and is not blank unless the whole file is."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return False
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            text = handle.read().replace("\r\n", "\n")
    except (OSError, ValueError):
        return False
    if lines is None or lines == (1, None):
        return True
    all_lines = text.split("\n")
    first, last = lines
    if first < 0:  # a tail
        if all_lines and all_lines[-1] == "":
            all_lines.pop()
        if not all_lines:
            return False
        shown = all_lines[max(0, len(all_lines) + first) :]
    else:
        first = max(1, first)
        end = max(first, last if last is not None else first)
        if first > len(all_lines):
            return False
        shown = all_lines[first - 1 : end]
    return bool("\n".join(shown).strip()) or not text.strip()

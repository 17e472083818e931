"""Which files a shell command reads or writes, from its text alone.

Codex CLI has no file-read tool: the model runs ``cat pkg/x.py`` (or ``sed -n 1,80p x.py``,
``rg -n pat src/``) through its shell tool, and edits with ``apply_patch``. Its after-tool hook
gets that command as a string, so the hook learns which files were touched only by reading the
command. This module does that, purely: no filesystem access, no environment, no globbing.

It is a tokenizer and a small interpreter of the words, never regular expressions over the raw
string. The tokenizer follows the POSIX shell's quoting rules (single and double quotes,
backslashes, ``$'…'``, comments, operators, here-documents). It is written here rather than
taken from :mod:`shlex` for two reasons measured on CPython 3.11: ``shlex`` grows a word one
character at a time with ``str +=`` on an attribute, which copies the word each time (a 400 KB
quoted word took 2.1 s, and a 1 MB one several times the square of that), and it has no notion of
here-documents, so an ``apply_patch <<'EOF'`` whose patch contains an apostrophe made it fail
the whole command. Here every word is built from slices joined once, each character of the input
is looked at a bounded number of times (nested ``bash -c`` scripts are re-read at most
``_MAX_NESTING`` deep), and nothing raises: unbalanced quotes end at the end of the input, as a
best effort.

The command is the model's text, so nothing here recurses as deep as the text goes: wrappers
(``nice nice … cat x``, ``env -u A -u B … timeout -s KILL 5 …``) are stepped over with an index
into the words, never a call and a copy of the remaining words per wrapper, and brackets nested in
double quotes (``"$(cat "$(…)")"``) are kept on a list of their own. Time and memory grow in
proportion to the command's length up to the 16 MiB a hook accepts, and Python's recursion limit,
which used to end the reading and drop the touches silently, is never approached.

What is recognised (anything else contributes nothing):

- reads: ``cat``, ``tac``, ``nl``, ``head``, ``tail``, ``wc``, ``less``, ``more``, ``bat``,
  ``sed`` (script first unless ``-e``/``-f``), ``awk``, ``grep``/``egrep``/``fgrep``/``rg``
  (pattern first unless ``-e``/``-f``; ``rg --files`` has none), ``diff``, ``cmp``, ``sort``,
  the source of ``cp``, and input redirections (``< file``);
- writes: the file headers of an ``apply_patch`` patch (given as a here-document, as an
  argument, or as the whole command, which is what Codex's own ``apply_patch`` tool carries),
  ``tee``, ``touch``, ``rm``, the target of ``cp``, both sides of ``mv``, ``sed -i``,
  ``sort -o`` and output redirections (``>``, ``>>``, ``&>``, ``<>``);
- structure: ``&&``, ``||``, ``;``, ``|``, ``&``, newlines, subshells, ``cd DIR`` (and
  ``pushd``, ``env -C DIR``) changing the directory later relative paths start from, leading
  ``NAME=value`` assignments, wrappers (``env``, ``command``, ``exec``, ``nohup``, ``time``,
  ``nice``, ``timeout``, ``stdbuf``, ``sudo``) and ``bash``/``sh``/``zsh``/``dash -c SCRIPT``,
  whose script is read the same way.

A word whose value depends on the shell (``$VAR``, ``$(…)``, backquotes, a glob, ``~``, a brace
expansion) is not a path this module can know, and is left out; so is ``-`` (standard input),
anything under ``/dev/``, and a relative path after a ``cd`` into a directory longer than
``PATH_MAX`` (no file there can be named by its absolute path). Paths are made absolute against
``cwd`` and normalised lexically (``os.path.normpath``; symlinks are the caller's business, as is
whether a path exists or is a directory).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["ShellTouches", "argv_touches", "patch_touches", "shell_touches"]

# ``bash -c 'bash -c "…"'`` is read this many levels deep; deeper scripts contribute nothing.
_MAX_NESTING = 4
# Linux's PATH_MAX, in characters (each at least a byte): no longer absolute path names a file.
_PATH_MAX = 4096
# File names taken from one command, in characters, reads and writes together: far more than any
# command a person or an agent runs names (some 10,000 paths), and a bound on what a hostile one
# can make the hook hold and look up.
_MAX_TOUCH_CHARS = 1 << 20
_PATCH_BEGIN = "*** Begin Patch"
_PATCH_HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")


@dataclass(frozen=True)
class ShellTouches:
    """The files a command reads and writes: absolute, normalised, in order, each once per list.

    A file that is both read and written (``sort -o f f``) is in both lists.
    """

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    # True when the command named more file text than _MAX_TOUCH_CHARS: the rest was not taken.
    cut: bool = False


def shell_touches(command: str, cwd: str) -> ShellTouches:
    """The files ``command``, run by a POSIX shell in directory ``cwd``, reads and writes.

    ``cwd`` should be absolute; if it is not, relative paths in the command are left out (only
    absolute ones are reported). Never raises.
    """
    collector = _Collector()
    # No ``except RecursionError`` here: it once hid the touches of a command 1,000 wrappers deep.
    # The stack no longer grows with the text, and a failure reaches the hook's log.
    if command.lstrip().startswith(_PATCH_BEGIN):
        # Codex's apply_patch tool: the whole input is the patch.
        collector.patch(command, _usable_cwd(cwd))
    else:
        _run_script(command, _usable_cwd(cwd), collector, 0)
    return collector.result()


def argv_touches(argv: Sequence[str], cwd: str) -> ShellTouches:
    """As :func:`shell_touches`, for a command given as an argument vector (no shell involved,
    so every argument is taken literally, as ``execve`` would)."""
    collector = _Collector()
    words = [_Word(arg, True) for arg in argv if isinstance(arg, str)]
    _Interpreter(_usable_cwd(cwd), collector, 0).simple_command(words, [])
    return collector.result()


def patch_touches(patch: str, cwd: str) -> ShellTouches:
    """The files an ``apply_patch`` patch adds, updates, deletes or moves to (all writes)."""
    collector = _Collector()
    collector.patch(patch, _usable_cwd(cwd))
    return collector.result()


# --- tokens -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Word:
    """One shell word after quote removal. ``literal`` is false when its value depends on the
    shell (an expansion, a glob, ``~``): such a word is never reported as a path."""

    text: str
    literal: bool


@dataclass(frozen=True)
class _Op:
    """A control operator (``&&``, ``|``, ``;``, newline, ``(``…) or a redirection operator."""

    text: str


@dataclass
class _HereDoc:
    """A here-document: its body is filled in when the tokenizer reaches the end of its line."""

    delimiter: str
    strip_tabs: bool
    body: str = ""


@dataclass(frozen=True)
class _HereDocToken:
    heredoc: _HereDoc


_Token = _Word | _Op | _HereDocToken

# Longest first, so that ``&&`` is not read as two ``&``.
_OPERATORS = (
    "&>>",
    "<<<",
    "<<-",
    ";;&",
    "&&",
    "||",
    ";;",
    ";&",
    "|&",
    "<<",
    "<>",
    "<&",
    ">>",
    ">&",
    ">|",
    "&>",
    "&",
    "|",
    ";",
    "(",
    ")",
    "<",
    ">",
    "\n",
)
_OPERATOR_START = frozenset(op[0] for op in _OPERATORS)
_REDIRECTIONS = frozenset({"<", ">", ">>", ">|", "&>", "&>>", "<>", "<&", ">&", "<<<"})
_HEREDOC_OPERATORS = frozenset({"<<", "<<-"})
_BLANKS = frozenset(" \t\r")
# What ends a run of ordinary word characters.
_WORD_BREAK = _BLANKS | _OPERATOR_START | frozenset("'\"\\$`")
_GLOB = frozenset("*?[")
_ANSI_C_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
# Inside double quotes a backslash escapes only these (and a newline, which it removes).
_DOUBLE_QUOTE_ESCAPES = frozenset('$`"\\')


@dataclass(slots=True)
class _Nest:
    """An open bracket (``$(``, ``${``, ``<(``) or double quote being skipped, and how many of
    its opening brackets are still open."""

    opening: str
    closing: str
    depth: int = 0


class _Tokenizer:
    """POSIX shell words and operators, in one pass over the text.

    Every scan moves ``self.pos`` forward; the slow character loop runs only over unquoted text,
    and quoted or here-document text is skipped with ``str.find``.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.pending_heredocs: list[_HereDoc] = []

    def tokens(self) -> Iterator[_Token]:
        text, n = self.text, len(self.text)
        expect_delimiter: str | None = None
        while self.pos < n:
            c = text[self.pos]
            if c in _BLANKS:
                self.pos += 1
                continue
            if c == "\\" and text.startswith("\n", self.pos + 1):
                self.pos += 2  # a line continuation
                continue
            if c == "#":
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
                continue
            if c in _OPERATOR_START and not self._process_substitution():
                op = self._operator()
                if op == "\n":
                    self._read_heredoc_bodies()
                # ``cat << ;`` has no delimiter: a later word must not become one.
                expect_delimiter = op if op in _HEREDOC_OPERATORS else None
                yield _Op(op)
                continue
            word, io_number = self._word()
            if io_number:
                continue  # ``2>``: a file descriptor, not an argument
            if expect_delimiter is not None:
                heredoc = _HereDoc(word.text, strip_tabs=expect_delimiter == "<<-")
                self.pending_heredocs.append(heredoc)
                expect_delimiter = None
                yield _HereDocToken(heredoc)
                continue
            yield word
        # A here-document whose line never ended has an empty body, as in bash.

    def _process_substitution(self) -> bool:
        return self.text.startswith(("<(", ">("), self.pos)

    def _operator(self) -> str:
        for op in _OPERATORS:
            if self.text.startswith(op, self.pos):
                self.pos += len(op)
                return op
        raise AssertionError("unreachable: the caller checked the first character")

    def _read_heredoc_bodies(self) -> None:
        """Consume the bodies of the here-documents opened on the line that just ended."""
        text, n = self.text, len(self.text)
        for heredoc in self.pending_heredocs:
            lines: list[str] = []
            while self.pos < n:
                end = text.find("\n", self.pos)
                stop = n if end < 0 else end
                line = text[self.pos : stop]
                self.pos = stop if end < 0 else stop + 1
                if (line.lstrip("\t") if heredoc.strip_tabs else line) == heredoc.delimiter:
                    break
                lines.append(line)
            heredoc.body = "\n".join(lines)
        self.pending_heredocs = []

    def _word(self) -> tuple[_Word, bool]:
        """One word from ``self.pos``, and whether it is a file descriptor number directly
        before a redirection (``2>``)."""
        text, n = self.text, len(self.text)
        parts: list[str] = []
        literal = True
        quoted = False
        if text.startswith("~", self.pos):
            literal = False
        while self.pos < n:
            c = text[self.pos]
            if c in _BLANKS or (c in _OPERATOR_START and not self._process_substitution()):
                break
            if c == "'":
                quoted = True
                end = text.find("'", self.pos + 1)
                stop = n if end < 0 else end
                parts.append(text[self.pos + 1 : stop])
                self.pos = n if end < 0 else end + 1
            elif c == '"':
                quoted = True
                literal = self._double_quoted(parts) and literal
            elif c == "\\":
                if self.pos + 1 < n:
                    if text[self.pos + 1] != "\n":
                        parts.append(text[self.pos + 1])
                    self.pos += 2
                else:
                    self.pos += 1
            elif c == "$":
                quoted = quoted or text.startswith(("$'", '$"'), self.pos)
                literal = self._dollar(parts) and literal
            elif c == "`":
                literal = False
                self._skip_backquotes()
            elif c in "<>":  # ``<(…)``/``>(…)``: a process substitution
                literal = False
                self.pos += 1
                self._skip_balanced("(", ")")
            else:
                stop = self._plain_run()
                chunk = text[self.pos : stop]
                if _GLOB.intersection(chunk) or ("{" in chunk and "}" in chunk):
                    literal = False
                parts.append(chunk)
                self.pos = stop
        value = "".join(parts)
        io_number = not quoted and value.isdigit() and text.startswith(("<", ">"), self.pos)
        return _Word(value, literal), io_number

    def _plain_run(self) -> int:
        """The end of the run of ordinary characters from ``self.pos``."""
        text, n = self.text, len(self.text)
        i = self.pos
        while i < n:
            c = text[i]
            if c in _WORD_BREAK:
                break
            i += 1
        return max(i, self.pos + 1)

    def _double_quoted(self, parts: list[str]) -> bool:
        """Consume ``"…"``; append its value; return whether it had no expansion."""
        text, n = self.text, len(self.text)
        literal = True
        self.pos += 1
        run_start = self.pos
        while self.pos < n:
            c = text[self.pos]
            if c == '"':
                break
            if c == "\\" and self.pos + 1 < n:
                parts.append(text[run_start : self.pos])
                following = text[self.pos + 1]
                if following in _DOUBLE_QUOTE_ESCAPES:
                    parts.append(following)
                elif following != "\n":
                    parts.append("\\" + following)
                self.pos += 2
                run_start = self.pos
            elif c == "$":
                parts.append(text[run_start : self.pos])
                literal = False
                self._dollar([], in_double_quotes=True)
                run_start = self.pos
            elif c == "`":
                parts.append(text[run_start : self.pos])
                literal = False
                self._skip_backquotes()
                run_start = self.pos
            else:
                self.pos += 1
        parts.append(text[run_start : self.pos])
        self.pos = min(self.pos + 1, n)
        return literal

    def _dollar(self, parts: list[str], *, in_double_quotes: bool = False) -> bool:
        """Consume what starts at ``$``; return whether its value is known. ``$'…'`` is decoded
        into ``parts``, ``$"…"`` read as double quotes; an expansion is skipped."""
        text, n = self.text, len(self.text)
        following = text[self.pos + 1] if self.pos + 1 < n else ""
        if following == "'" and not in_double_quotes:
            self.pos += 2
            parts.append(self._ansi_c())
            return True
        if following == '"' and not in_double_quotes:
            self.pos += 1  # ``$"…"``: a translated string; its text is what the shell uses
            return self._double_quoted(parts)
        if following == "(":
            self.pos += 1
            self._skip_balanced("(", ")")
        elif following == "{":
            self.pos += 1
            self._skip_balanced("{", "}")
        else:
            self._skip_parameter()
        return False

    def _skip_parameter(self) -> None:
        """Skip ``$NAME`` (or ``$1``, ``$@``…) from the ``$`` at ``self.pos``."""
        text, n = self.text, len(self.text)
        i = self.pos + 1
        if i < n and (text[i].isdigit() or text[i] in "@*#?$!-"):
            i += 1
        else:
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
        self.pos = i

    def _ansi_c(self) -> str:
        text, n = self.text, len(self.text)
        out: list[str] = []
        run_start = self.pos
        while self.pos < n:
            c = text[self.pos]
            if c == "'":
                break
            if c == "\\" and self.pos + 1 < n:
                out.append(text[run_start : self.pos])
                following = text[self.pos + 1]
                out.append(_ANSI_C_ESCAPES.get(following, "\\" + following))
                self.pos += 2
                run_start = self.pos
            else:
                self.pos += 1
        out.append(text[run_start : self.pos])
        self.pos = min(self.pos + 1, n)
        return "".join(out)

    def _skip_balanced(self, opening: str, closing: str) -> None:
        """Skip from an opening bracket at ``self.pos`` to its match, stepping over quoted text.
        An unmatched bracket runs to the end of the input.

        Brackets and double quotes nest in each other (``"$(cat "$(…)")"``), as deep as the
        text is long; they are kept on a stack of their own rather than on Python's, where a
        few thousand levels would raise ``RecursionError``."""
        text, n = self.text, len(self.text)
        stack = [_Nest(opening, closing)]  # innermost last
        while self.pos < n and stack:
            nest = stack[-1]
            if nest.opening == '"':
                self._step_in_double_quotes(stack)
                continue
            c = text[self.pos]
            if c == "\\":
                self.pos += 2
            elif c == "'":
                end = text.find("'", self.pos + 1)
                self.pos = n if end < 0 else end + 1
            elif c == '"':
                self.pos += 1
                stack.append(_Nest('"', '"'))
            else:
                self.pos += 1
                if c == nest.opening:
                    nest.depth += 1
                elif c == nest.closing:
                    nest.depth -= 1
                    if nest.depth == 0:
                        stack.pop()
        self.pos = min(self.pos, n)

    def _step_in_double_quotes(self, stack: list[_Nest]) -> None:
        """One step of :meth:`_skip_balanced` inside a double-quoted string (the innermost
        entry of ``stack``): its end, an escape, an expansion, or an ordinary character."""
        text, n = self.text, len(self.text)
        c = text[self.pos]
        following = text[self.pos + 1] if self.pos + 1 < n else ""
        if c == '"':
            self.pos += 1
            stack.pop()
        elif c == "\\" and following:
            self.pos += 2
        elif c == "$" and following == "(":
            self.pos += 1
            stack.append(_Nest("(", ")"))
        elif c == "$" and following == "{":
            self.pos += 1
            stack.append(_Nest("{", "}"))
        elif c == "$":
            self._skip_parameter()
        elif c == "`":
            self._skip_backquotes()
        else:
            self.pos += 1

    def _skip_backquotes(self) -> None:
        text, n = self.text, len(self.text)
        i = self.pos + 1
        while i < n:
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == "`":
                self.pos = i + 1
                return
            i += 1
        self.pos = n


# --- from words to touches --------------------------------------------------------------------


@dataclass
class _Collector:
    reads: dict[str, None] = field(default_factory=dict)
    writes: dict[str, None] = field(default_factory=dict)
    chars: int = 0
    cut: bool = False

    def add(self, kind: str, word: _Word, cwd: str | None) -> None:
        path = _absolute(word, cwd)
        if path is None or self.cut:
            return
        kept = self.reads if kind == "read" else self.writes
        if path in kept:
            return
        # Each relative name is joined to the directory (up to PATH_MAX), so without a bound the
        # result could be thousands of times the command's size.
        if self.chars + len(path) > _MAX_TOUCH_CHARS:
            self.cut = True
            return
        self.chars += len(path)
        kept[path] = None

    def patch(self, patch: str, cwd: str | None) -> None:
        for line in patch.splitlines():
            stripped = line.strip()
            for header in _PATCH_HEADERS:
                if stripped.startswith(header):
                    self.add("write", _Word(stripped[len(header) :].strip(), True), cwd)
                    break

    def result(self) -> ShellTouches:
        return ShellTouches(tuple(self.reads), tuple(self.writes), self.cut)


def _within_path_max(directory: str) -> str | None:
    """``directory``, or None (not known) when it is longer than ``PATH_MAX``.

    No file under such a directory can be named by its absolute path (the kernel refuses it
    with ENAMETOOLONG), so none is worth reporting; and every relative path after the ``cd`` is
    a copy of the directory, so without this bound ``cd <100 KB>; cat f1 f2 …`` would turn each
    short name into 100 KB of output (quadratic in the command's length)."""
    return directory if len(directory) <= _PATH_MAX else None


def _usable_cwd(cwd: str) -> str | None:
    if not isinstance(cwd, str) or not cwd.startswith("/") or "\x00" in cwd:
        return None
    return os.path.normpath(cwd)


def _absolute(word: _Word, cwd: str | None) -> str | None:
    text = word.text
    if not word.literal or not text or text == "-" or "\x00" in text:
        return None
    if text.startswith("/"):
        path = os.path.normpath(text)
    elif cwd is None:
        return None
    else:
        path = os.path.normpath(os.path.join(cwd, text))
    if path.startswith("//"):  # normpath keeps a leading double slash (POSIX allows it)
        path = "/" + path.lstrip("/")
    if path == "/dev" or path.startswith("/dev/"):
        return None
    return path


def _run_script(script: str, cwd: str | None, collector: _Collector, depth: int) -> None:
    interpreter = _Interpreter(cwd, collector, depth)
    words: list[_Word] = []
    redirections: list[tuple[str, _Word | _HereDoc]] = []
    pending_redirection: str | None = None
    for token in _Tokenizer(script).tokens():
        if isinstance(token, _Word):
            if pending_redirection is not None:
                redirections.append((pending_redirection, token))
                pending_redirection = None
            else:
                words.append(token)
        elif isinstance(token, _HereDocToken):
            redirections.append(("<<", token.heredoc))
        elif token.text in _REDIRECTIONS:
            pending_redirection = token.text
        elif token.text in _HEREDOC_OPERATORS:
            pending_redirection = None  # the tokenizer turns the next word into a _HereDocToken
        else:
            interpreter.simple_command(words, redirections)
            interpreter.separator(token.text)
            words, redirections, pending_redirection = [], [], None
    interpreter.simple_command(words, redirections)


# Words that may start a command without being one.
_RESERVED = frozenset(
    {"!", "{", "}", "do", "done", "then", "else", "elif", "fi", "if", "while", "until", "esac"}
)
# Whole commands whose words are not file operands.
_SKIPPED_COMMANDS = frozenset({"for", "case", "select", "function", "[[", "xargs"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})


@dataclass(frozen=True)
class _Options:
    """How a command's options are spelt: the short and long ones that take a value."""

    short_values: str = ""
    long_values: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Parsed:
    operands: list[_Word]
    options: list[tuple[str, _Word | None]]  # (name with its dashes, value)


def _parse(words: Sequence[_Word], spec: _Options) -> _Parsed:
    """GNU-style options (anywhere among the operands, ``--`` ends them)."""
    operands: list[_Word] = []
    options: list[tuple[str, _Word | None]] = []
    # A flag given twice means what it means once: kept once, so that ``cat -nnnn…`` (a
    # megabyte of letters) costs one entry and not a tuple per letter.
    flags: set[str] = set()

    def flag(name: str) -> None:
        if name not in flags:
            flags.add(name)
            options.append((name, None))

    i, n = 0, len(words)
    while i < n:
        word = words[i]
        text = word.text
        i += 1
        if text == "--":
            operands.extend(words[i:])
            break
        if text.startswith("--"):
            name, equals, value = text.partition("=")
            if equals:
                options.append((name, _Word(value, word.literal)))
            elif name in spec.long_values and i < n:
                options.append((name, words[i]))
                i += 1
            else:
                flag(name)
        elif text.startswith("-") and len(text) > 1:
            for k in range(1, len(text)):
                letter = text[k]
                if letter in spec.short_values:
                    rest = text[k + 1 :]
                    if rest:
                        options.append(("-" + letter, _Word(rest, word.literal)))
                    elif i < n:
                        options.append(("-" + letter, words[i]))
                        i += 1
                    else:
                        flag("-" + letter)
                    break
                flag("-" + letter)
        else:
            operands.append(word)
    return _Parsed(operands, options)


def _options(short_values: str = "", long_values: str = "") -> _Options:
    """An option spelling: the short letters that take a value, and the long names that do
    (space-separated)."""
    return _Options(short_values, frozenset(long_values.split()))


_PLAIN_READERS: dict[str, _Options] = {
    "cat": _options(),
    "tac": _options("s", "--separator"),
    "nl": _options(
        "bdfhilnsvw",
        "--body-numbering --section-delimiter --footer-numbering --header-numbering"
        " --line-increment --join-blank-lines --number-format --number-separator"
        " --starting-line-number --number-width",
    ),
    "head": _options("nc", "--lines --bytes"),
    "tail": _options("ncs", "--lines --bytes --pid --sleep-interval --max-unchanged-stats"),
    "wc": _options(),
    "less": _options(
        "bhjkoOpPtTxyz#",
        "--tabs --pattern --tag --buffers --jump-target --log-file --LOG-FILE --prompt"
        " --tag-file --max-back-scroll --max-forw-scroll --window --shift",
    ),
    "more": _options("n", "--lines"),
    "bat": _options(
        "lHrm",
        "--language --highlight-line --line-range --map-syntax --style --theme --tabs --wrap"
        " --terminal-width --file-name --diff-context --pager --italic-text"
        " --nonprintable-notation --binary --strip-ansi",
    ),
    "cmp": _options("in", "--ignore-initial --bytes"),
    "diff": _options(
        "CUFILSXxWD",
        "--context --unified --label --ignore-matching-lines --show-function-line"
        " --starting-file --exclude --exclude-from --from-file --to-file --line-format"
        " --old-line-format --new-line-format --unchanged-line-format --horizon-lines --width"
        " --tabsize --color --palette",
    ),
}
_PLAIN_READERS["batcat"] = _PLAIN_READERS["bat"]

_GREP = _options(
    "efmABCdD",
    "--regexp --file --max-count --after-context --before-context --context --directories"
    " --devices --include --exclude --exclude-dir --exclude-from --label --group-separator"
    " --binary-files",
)
_RG = _options(
    "efmABCgtTMjErd",
    "--regexp --file --max-count --after-context --before-context --context --glob --iglob"
    " --type --type-not --type-add --type-clear --max-columns --threads --encoding --replace"
    " --max-depth --maxdepth --max-filesize --sort --sortr --color --colors --pre --pre-glob"
    " --path-separator --context-separator --field-match-separator --field-context-separator"
    " --ignore-file --dfa-size-limit --regex-size-limit --engine --hostname-bin"
    " --hyperlink-format --generate",
)
# Listings: each operand is a directory (or a file) looked into.
_LS = _options(
    "ITw",
    "--ignore --hide --tabsize --width --format --sort --time --time-style --block-size"
    " --indicator-style --quoting-style",
)
_TREE = _options("LPIo", "--filelimit --timefmt --charset --sort --gitfile")
_SED = _options("efl", "--expression --file --line-length")
_AWK = _options("Ffv", "--field-separator --file --assign")
_SORT = _options(
    "kotST",
    "--key --output --field-separator --buffer-size --temporary-directory --files0-from"
    " --batch-size --compress-program --parallel --random-source --sort",
)
_TEE = _options("", "--output-error")
_TOUCH = _options("drt", "--date --reference --time")
_RM = _options()
_CP_MV = _options("tS", "--target-directory --suffix --backup --sparse --reflink")

# Wrappers: (their options, how many operands they take before the wrapped command).
_WRAPPERS: dict[str, tuple[_Options, int]] = {
    "command": (_options(), 0),
    "builtin": (_options(), 0),
    "exec": (_options("a"), 0),
    "nohup": (_options(), 0),
    "time": (_options("fo", "--format --output"), 0),
    "nice": (_options("n", "--adjustment"), 0),
    "timeout": (_options("sk", "--signal --kill-after"), 1),
    "stdbuf": (_options("ioe", "--input --output --error"), 0),
    "sudo": (
        _options(
            "ugpChDrtTUR",
            "--user --group --prompt --close-from --host --chdir --role --type"
            " --command-timeout --other-user --chroot",
        ),
        0,
    ),
}


class _Interpreter:
    """Turns simple commands into touches, following ``cd`` and subshells."""

    def __init__(self, cwd: str | None, collector: _Collector, depth: int) -> None:
        self.cwd = cwd
        self.saved: list[str | None] = []
        self.collector = collector
        self.depth = depth

    def separator(self, op: str) -> None:
        if op == "(":
            self.saved.append(self.cwd)
        elif op == ")" and self.saved:
            self.cwd = self.saved.pop()

    def simple_command(
        self, words: list[_Word], redirections: list[tuple[str, _Word | _HereDoc]]
    ) -> None:
        for op, target in redirections:
            if isinstance(target, _HereDoc):
                continue
            if op in ("<&", ">&") and (target.text.isdigit() or target.text == "-"):
                continue  # duplicating a file descriptor, not naming a file
            if op == "<<<":
                continue  # a here-string: the word is the input itself
            if op in ("<", "<&"):
                self.collector.add("read", target, self.cwd)
            else:
                self.collector.add("write", target, self.cwd)
        heredocs = [t.body for _, t in redirections if isinstance(t, _HereDoc)]
        self._command(words, heredocs)

    def _command(self, words: list[_Word], heredocs: list[str]) -> None:
        """Run one simple command: step over its wrappers (``nice``, ``env``, ``timeout 5``…)
        with an index, then read the wrapped command's words.

        A loop and not a call per wrapper: the model writes the command, and ``nice`` repeated
        50,000 times must cost 50,000 steps, not a copy of the remaining words (quadratic) and a
        stack frame each (past the recursion limit, which lost the touch)."""
        saved = self.cwd
        env_seen = False  # ``env -C DIR`` changes the directory of its own command only
        i, n = 0, len(words)
        while True:
            i = _after_prefixes(words, i)
            if i >= n:
                break
            name = os.path.basename(words[i].text) if words[i].literal else ""
            if name == "env":
                env_seen = True
                i = self._env_options(words, i + 1)
            elif name in _WRAPPERS:
                if name == "command" and i + 1 < n and words[i + 1].text in ("-v", "-V"):
                    break  # ``command -v cat`` looks the name up, runs nothing
                spec, operand_count = _WRAPPERS[name]
                i = _after_options(words, i + 1, spec, operand_count)
            else:
                self._wrapped(name, words[i + 1 :], heredocs)
                break
        if env_seen:
            self.cwd = saved

    def _wrapped(self, name: str, args: list[_Word], heredocs: list[str]) -> None:
        """A command that is not a wrapper, named ``name`` (empty when the shell decides it)."""
        if name in _SKIPPED_COMMANDS or not name:
            return
        if name in _SHELLS:
            self._shell(args)
        elif name in ("cd", "pushd"):
            self._cd(args)
        elif name == "popd":
            self.cwd = None
        elif name in ("apply_patch", "applypatch"):
            for patch in [*heredocs, *(w.text for w in args)]:
                self.collector.patch(patch, self.cwd)
        else:
            self._file_command(name, args)

    def _env_options(self, words: list[_Word], i: int) -> int:
        """Step over ``env``'s options and assignments from ``words[i]``, following ``-C DIR``;
        return the index of the command it runs."""
        n = len(words)
        while i < n:
            text = words[i].text
            if text in ("-u", "--unset", "-S", "--split-string"):
                i += 2
            elif text in ("-C", "--chdir") and i + 1 < n:
                self._change_directory(words[i + 1])
                i += 2
            elif text.startswith("--chdir="):
                self._change_directory(_Word(text.partition("=")[2], words[i].literal))
                i += 1
            elif text.startswith("-") or _is_assignment(words[i]):  # ``-`` is ``-i``
                i += 1
            else:
                break
        return i

    def _shell(self, args: list[_Word]) -> None:
        """``bash -lc SCRIPT``: the script is read as a command line of its own."""
        has_c = False
        i, n = 0, len(args)
        while i < n:
            text = args[i].text
            if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if text.startswith("--"):
                i += 1
                continue
            if text.startswith(("-", "+")) and len(text) > 1:
                has_c = has_c or "c" in text[1:]
                i += 1
                continue
            break
        if has_c and i < n and self.depth + 1 < _MAX_NESTING and args[i].literal:
            _run_script(args[i].text, self.cwd, self.collector, self.depth + 1)

    def _cd(self, args: list[_Word]) -> None:
        operands = [w for w in args if not (w.text.startswith("-") and w.text != "-")]
        if not operands:
            self.cwd = None  # ``cd`` alone goes home, which is not known here
            return
        self._change_directory(operands[0])

    def _change_directory(self, target: _Word) -> None:
        if not target.literal or target.text in ("", "-") or "\x00" in target.text:
            self.cwd = None
        elif target.text.startswith("/"):
            self.cwd = _within_path_max(os.path.normpath(target.text))
        elif self.cwd is not None:
            self.cwd = _within_path_max(os.path.normpath(os.path.join(self.cwd, target.text)))

    def _file_command(self, name: str, args: list[_Word]) -> None:
        add = self.collector.add
        cwd = self.cwd
        if name in _PLAIN_READERS:
            parsed = _parse(args, _PLAIN_READERS[name])
            for word in parsed.operands:
                if not (name in ("less", "more") and word.text.startswith("+")):  # a command
                    add("read", word, cwd)
        elif name in ("grep", "egrep", "fgrep", "rg"):
            self._search(name, args)
        elif name in ("ls", "tree"):
            for word in _parse(args, _LS if name == "ls" else _TREE).operands:
                add("read", word, cwd)
        elif name == "find":
            self._find(args)
        elif name == "sed":
            parsed = _parse(args, _SED)
            in_place = any(o == "-i" or o.startswith("--in-place") for o, _ in parsed.options)
            if in_place and parsed.operands[:1] == [_Word("", True)]:
                parsed.operands.pop(0)  # BSD's ``sed -i '' SCRIPT FILE``: an empty suffix
            files = _after_script(parsed, ("-e", "--expression"), ("-f", "--file"), add, cwd)
            for word in files:
                add("write" if in_place else "read", word, cwd)
        elif name in ("awk", "gawk", "mawk", "nawk"):
            parsed = _parse(args, _AWK)
            files = _after_script(parsed, (), ("-f", "--file"), add, cwd)
            for word in files:
                if not _is_assignment(word):
                    add("read", word, cwd)
        elif name == "sort":
            parsed = _parse(args, _SORT)
            for word in parsed.operands:
                add("read", word, cwd)
            for option, value in parsed.options:
                if option in ("-o", "--output") and value is not None:
                    add("write", value, cwd)
        elif name == "tee":
            for word in _parse(args, _TEE).operands:
                add("write", word, cwd)
        elif name == "touch":
            parsed = _parse(args, _TOUCH)
            for word in parsed.operands:
                add("write", word, cwd)
        elif name == "rm":
            for word in _parse(args, _RM).operands:
                add("write", word, cwd)
        elif name in ("cp", "mv"):
            self._copy_or_move(name, args)

    def _search(self, name: str, args: list[_Word]) -> None:
        parsed = _parse(args, _RG if name == "rg" else _GREP)
        add, cwd = self.collector.add, self.cwd
        names = {option for option, _ in parsed.options}
        operands = parsed.operands
        if name == "rg" and names & {"--files", "--type-list"}:
            pass  # no pattern: every operand is a path
        elif not names & {"-e", "--regexp", "-f", "--file"}:
            operands = operands[1:]  # the first operand is the pattern
        for option, value in parsed.options:
            if option in ("-f", "--file") and value is not None:
                add("read", value, cwd)
        for word in operands:
            add("read", word, cwd)

    def _find(self, args: list[_Word]) -> None:
        """``find [-H|-L|-P] [-D DEBUG] [-OLEVEL] PATH… EXPRESSION``: the paths it starts from,
        the words before the expression (which starts with ``-``, ``(``, ``!`` or ``,``)."""
        i, n = 0, len(args)
        while i < n:
            text = args[i].text
            if text == "-D":
                i += 2
            elif text in ("-H", "-L", "-P") or text.startswith("-O"):
                i += 1
            else:
                break
        while i < n and not args[i].text.startswith(("-", "(", "!", ",")):
            self.collector.add("read", args[i], self.cwd)
            i += 1

    def _copy_or_move(self, name: str, args: list[_Word]) -> None:
        parsed = _parse(args, _CP_MV)
        add, cwd = self.collector.add, self.cwd
        target_dirs = [v for o, v in parsed.options if o in ("-t", "--target-directory") and v]
        if target_dirs:
            sources, targets = parsed.operands, target_dirs[-1:]
        else:
            sources, targets = parsed.operands[:-1], parsed.operands[-1:]
        for word in sources:
            add("write" if name == "mv" else "read", word, cwd)
        for word in targets:
            add("write", word, cwd)


def _after_script(
    parsed: _Parsed,
    script_options: tuple[str, ...],
    script_file_options: tuple[str, ...],
    add: Callable[[str, _Word, str | None], None],
    cwd: str | None,
) -> list[_Word]:
    """The file operands of a command whose first operand is its script (sed, awk) unless the
    script came with an option; a script file given with an option is itself a read."""
    given = False
    for option, value in parsed.options:
        if option in script_options:
            given = True
        elif option in script_file_options:
            given = True
            if value is not None:
                add("read", value, cwd)
    return parsed.operands if given else parsed.operands[1:]


def _after_prefixes(words: list[_Word], i: int) -> int:
    """The index of the first word from ``words[i]`` that is neither a reserved word that may
    start a command (``!``, ``then``…) nor a ``NAME=value`` assignment."""
    n = len(words)
    while i < n:
        text = words[i].text if words[i].literal else ""
        if not (text in _RESERVED or _is_assignment(words[i])):
            break
        i += 1
    return i


def _after_options(words: list[_Word], i: int, spec: _Options, operand_count: int) -> int:
    """The index of the wrapped command of a wrapper like ``timeout 5 cat x`` whose arguments
    start at ``words[i]``: past the wrapper's own options and its ``operand_count`` operands
    (options stop at the first operand)."""
    n = len(words)
    while i < n:
        text = words[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        if text.startswith("--"):
            name, equals, _ = text.partition("=")
            i += 1 if equals or name not in spec.long_values else 2
            continue
        i += 1
        for k in range(1, len(text)):
            if text[k] in spec.short_values:
                if k == len(text) - 1:
                    i += 1
                break
    return i + operand_count


def _is_assignment(word: _Word) -> bool:
    name, equals, _ = word.text.partition("=")
    return bool(equals) and name.isidentifier() and name.isascii()

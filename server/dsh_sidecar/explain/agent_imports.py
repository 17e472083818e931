"""Each command-line agent's own ``@`` import syntax, as its shipped code reads it (release in
``dsh_sidecar.agents``; docs/reference/agent-models.md says where in each CLI's code).

The sidecar's own import reader (``sources/agent_instructions/import_syntax.py``) is one
syntax for every file; the agents disagree on the details, and explain must say what each agent
does, so each has its parser here:

- Claude Code reads imports from the Markdown *text* of a file: nothing in code (fenced with
  backticks or tildes, indented blocks, code spans), nothing inside HTML comments, but an ``@``
  right after emphasis markers counts. The path runs to whitespace (``\\ `` is an escaped space),
  a ``#fragment`` is cut, and nothing else is trimmed (``@a.md.`` names ``a.md.``). It must start
  with ``./``, ``~/``, ``/`` or a letter, digit, ``.``, ``_`` or ``-``. A file whose extension is
  not a text one is skipped.
- Gemini CLI scans the raw text: an ``@`` at the start or after a space, tab or line break,
  the path running to the next such character and starting with ``.``, ``/`` or an ASCII letter;
  only backtick code (spans and fences) hides one, so ``~~~`` blocks, indented blocks and HTML
  comments do not. Its imported text replaces the ``@path`` in the importer.
- Qwen Code finds ``@`` paths as Gemini CLI does, but its code is Markdown's as its bundled
  ``marked`` lexes it (``qwen_markdown``): fences of backticks or tildes, indented blocks and
  code spans, with the gaps of its token walk (nothing in a list or a table is code to it).
  An ``http://``, ``https://`` or ``file://`` path is refused.

Every scan here moves forward only (no pattern that can backtrack over the text), so repository
text of any shape costs linear work.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator

import attrs

# Claude Code skips an imported file whose extension is none of these (its text-file list).
CLAUDE_TEXT_EXTENSIONS = frozenset(
    [
        ".md",
        ".txt",
        ".text",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".xml",
        ".csv",
        ".html",
        ".htm",
        ".css",
        ".scss",
        ".sass",
        ".less",
        ".js",
        ".ts",
        ".tsx",
        ".jsx",
        ".mjs",
        ".cjs",
        ".mts",
        ".cts",
        ".py",
        ".pyi",
        ".pyw",
        ".rb",
        ".erb",
        ".rake",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".c",
        ".cpp",
        ".cc",
        ".cxx",
        ".h",
        ".hpp",
        ".hxx",
        ".cs",
        ".swift",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".bat",
        ".cmd",
        ".env",
        ".ini",
        ".cfg",
        ".conf",
        ".config",
        ".properties",
        ".sql",
        ".graphql",
        ".gql",
        ".proto",
        ".vue",
        ".svelte",
        ".astro",
        ".ejs",
        ".hbs",
        ".pug",
        ".jade",
        ".php",
        ".pl",
        ".pm",
        ".lua",
        ".r",
        ".dart",
        ".ex",
        ".exs",
        ".erl",
        ".hrl",
        ".clj",
        ".cljs",
        ".cljc",
        ".edn",
        ".hs",
        ".lhs",
        ".elm",
        ".ml",
        ".mli",
        ".f",
        ".f90",
        ".f95",
        ".for",
        ".cmake",
        ".make",
        ".makefile",
        ".gradle",
        ".sbt",
        ".rst",
        ".adoc",
        ".asciidoc",
        ".org",
        ".tex",
        ".latex",
        ".lock",
        ".log",
        ".diff",
        ".patch",
    ]
)
# An @ at the start, after whitespace, or after the markers that open emphasis; the path is a
# run of non-space characters or escaped spaces (disjoint alternatives: no backtracking).
_CLAUDE = re.compile(
    r"(?:(?<=\s)|^|(?<=[\s*_]\*)|(?<=^\*)|(?<=[\s*_]_)|(?<=^_))@((?:[^\s\\]|\\ )+)"
)
_CLAUDE_FIRST = re.compile(r"[a-zA-Z0-9._-]")
_GEMINI_SPACE = " \t\n\r"
_URL = re.compile(r"(?:file|https?)://")


@attrs.frozen
class AgentImport:
    """One import: where its ``@path`` is in the text and the absolute path it names."""

    start: int
    end: int
    path: str


def claude_imports(text: str, importer_dir: str, home: str) -> list[AgentImport]:
    # Loaded only for a text with an "@" (the hooks' path stays light otherwise).
    from dsh_sidecar.sources.agent_instructions.markdown_code import blank_code

    visible = _without_comments(_without_indented_code(blank_code(text, keep_offsets=True)))
    out: list[AgentImport] = []
    for match in _CLAUDE.finditer(visible):
        raw = match[1]
        if match.start() > 0 and visible[match.start() - 1] in "*_":
            raw = raw.rstrip("*_")  # the emphasis closes around the path
        raw = raw.split("#", 1)[0].replace("\\ ", " ")
        if not raw or raw == "/" or raw.startswith("@") or "\x00" in raw:
            continue  # a NUL: no file has such a name (Node refuses the path before any open)
        if not (
            raw.startswith(("./", "~/", "/")) or (_CLAUDE_FIRST.match(raw) and raw[0] not in "#")
        ):
            continue
        if raw == "~" or raw.startswith("~/"):
            path = os.path.join(home, raw[2:])
        else:
            path = os.path.join(importer_dir, raw)
        extension = os.path.splitext(raw)[1].lower()
        if extension and extension not in CLAUDE_TEXT_EXTENSIONS:
            continue
        out.append(AgentImport(match.start(), match.end(), os.path.normpath(path)))
    return out


def gemini_imports(text: str, importer_dir: str) -> list[AgentImport]:
    code = _backtick_regions(text)
    out: list[AgentImport] = []
    region = 0
    for at, end in _at_words(text):
        raw = text[at + 1 : end]
        while region < len(code) and code[region][1] <= at:
            region += 1
        hidden = region < len(code) and code[region][0] <= at
        # A NUL names no file (Node refuses such a path before any open).
        if (
            raw
            and (raw[0] in "./" or "a" <= raw[0].lower() <= "z")
            and not hidden
            and "\x00" not in raw
        ):
            out.append(AgentImport(at, end, os.path.normpath(os.path.join(importer_dir, raw))))
    return out


def qwen_imports(text: str, importer_dir: str) -> list[AgentImport]:
    # Loaded only for a text with an "@" (the hooks' path stays light otherwise).
    from bisect import bisect_right

    from .qwen_markdown import code_regions

    # marked lexes the text with its line breaks made LF, and Qwen Code applies those offsets
    # to the text as read: after a CR the two drift apart, in Qwen Code too.
    regions = code_regions(text.replace("\r\n", "\n").replace("\r", "\n"))
    starts = [start for start, _ in regions]
    ends = list(itertools.accumulate((end for _, end in regions), max))
    out: list[AgentImport] = []
    for at, end in _at_words(text):
        raw = text[at + 1 : end]
        n = bisect_right(starts, at)
        if n and ends[n - 1] > at:
            continue  # in code: some region starting at or before it reaches past it
        if not raw or not (raw[0] in "./" or "a" <= raw[0].lower() <= "z") or "\x00" in raw:
            continue
        if _URL.match(raw):
            continue
        out.append(AgentImport(at, end, os.path.normpath(os.path.join(importer_dir, raw))))
    return out


def _at_words(text: str) -> Iterator[tuple[int, int]]:
    """Each ``@`` at the start or after a space, tab or line break, with the end of the word
    it starts; the scan goes on after the character that ends it (Gemini CLI's and Qwen
    Code's findImports)."""
    at = 0
    while True:
        at = text.find("@", at)
        if at < 0:
            return
        if at > 0 and text[at - 1] not in _GEMINI_SPACE:
            at += 1
            continue
        end = at + 1
        while end < len(text) and text[end] not in _GEMINI_SPACE:
            end += 1
        yield at, end
        at = end + 1


def _backtick_regions(text: str) -> list[tuple[int, int]]:
    """Gemini CLI's code: a run of backticks up to the next run of the same length, anywhere
    (line breaks included); a run with no closer hides nothing. Runs are indexed by length so
    each closer is found by one forward look."""
    runs: list[tuple[int, int]] = []
    at = text.find("`")
    while at >= 0:
        end = at
        while end < len(text) and text[end] == "`":
            end += 1
        runs.append((at, end - at))
        at = text.find("`", end)
    by_length: dict[int, list[int]] = {}
    for index, (_, length) in enumerate(runs):
        by_length.setdefault(length, []).append(index)
    heads = dict.fromkeys(by_length, 0)
    regions: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, length = runs[index]
        same = by_length[length]
        while heads[length] < len(same) and same[heads[length]] <= index:
            heads[length] += 1
        if heads[length] >= len(same):
            index += 1
            continue
        closer = same[heads[length]]
        regions.append((start, runs[closer][0] + length))
        index = closer + 1
    return regions


def _without_comments(text: str) -> str:
    """HTML comments blanked (offsets kept); an unclosed one hides nothing after it."""
    parts: list[str] = []
    at = 0
    while True:
        start = text.find("<!--", at)
        if start < 0:
            break
        end = text.find("-->", start + 4)
        if end < 0:
            break
        end += 3
        parts.append(text[at:start])
        parts.append(re.sub(r"[^\n]", " ", text[start:end]))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _without_indented_code(text: str) -> str:
    """Indented code blocks blanked (offsets kept): lines indented by four spaces or a tab that
    follow a blank line (or open the text), and the indented lines after them."""
    lines = text.split("\n")
    in_code = False
    previous_blank = True
    for n, line in enumerate(lines):
        blank = not line.strip()
        indented = line.startswith(("    ", "\t"))
        if indented and (in_code or previous_blank) and not blank:
            in_code = True
            lines[n] = " " * len(line)
        elif not blank:
            in_code = False
        previous_blank = blank
    return "\n".join(lines)


def sent_claude_text(data: bytes) -> bytes:
    """What Claude Code sends of an instruction file: without a byte order mark, its YAML
    frontmatter and, when it holds comment blocks, those (line breaks then normalised to LF)."""

    # Observed (2.1.332): a leading byte order mark is not sent either.
    body = data.removeprefix(b"\xef\xbb\xbf")
    body = body[frontmatter_bytes(body) :]
    text = body.decode("utf-8", "replace")
    if "<!--" not in text:
        return body
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _strip_comment_blocks(text).encode("utf-8")


# Qwen Code's rule frontmatter: "---" lines around it at the very start (line ends made LF).
_QWEN_FRONTMATTER = re.compile(r"---\n[\s\S]*?\n---(?:\n|\Z)")


def sent_qwen_rule_text(data: bytes) -> bytes:
    """What Qwen Code sends of a rule file (its parseRuleFile): the text without a byte order
    mark, line ends made LF, its YAML frontmatter left out, its HTML comments taken out (again
    until none is left, then any opener without a closer), trimmed."""
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    front = _QWEN_FRONTMATTER.match(text)
    body = text[front.end() :] if front else text
    while True:
        kept = _remove_comments(body)
        if kept == body:
            break
        body = kept
    body = body.replace("<!--", "")
    return body.strip().strip("\ufeff").strip().encode("utf-8")


def _strip_comment_blocks(text: str) -> str:
    """Comment blocks removed: a block from a line opening with ``<!--`` (up to three spaces
    in) to the first line holding ``-->`` loses its comments, and goes whole when nothing but
    whitespace is left; comments inside other text stay (Claude Code strips only such blocks)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    n = 0
    # Once a search for "-->" runs to the end, no later block can close either: never search
    # again (each line is then looked at a bounded number of times, whatever the text holds).
    closers_left = True
    while n < len(lines):
        line = lines[n]
        lead = len(line) - len(line.lstrip(" "))
        if closers_left and lead <= 3 and line.lstrip(" ").startswith("<!--"):
            last = n
            while last < len(lines) and "-->" not in lines[last][(lead + 4 if last == n else 0) :]:
                last += 1
            closers_left = last < len(lines)
            if closers_left:
                block = "".join(lines[n : last + 1])
                rest = _remove_comments(block)
                out.append(rest if rest.strip() else "")
                n = last + 1
                continue
        out.append(line)
        n += 1
    return "".join(out)


def _remove_comments(text: str) -> str:
    parts: list[str] = []
    at = 0
    while True:
        start = text.find("<!--", at)
        end = text.find("-->", start + 4) if start >= 0 else -1
        if start < 0 or end < 0:
            break
        parts.append(text[at:start])
        at = end + 3
    parts.append(text[at:])
    return "".join(parts)


def frontmatter_bytes(data: bytes) -> int:
    """The length of a leading ``---`` YAML block with its closing line, 0 without one."""
    if not data.startswith(b"---"):
        return 0
    first = data.find(b"\n")
    if first < 0 or data[:first].strip() != b"---":
        return 0
    at = first + 1
    while at < len(data):
        end = data.find(b"\n", at)
        line = data[at:] if end < 0 else data[at:end]
        if line.strip() == b"---":
            return len(data) if end < 0 else end + 1
        if end < 0:
            return 0
        at = end + 1
    return 0

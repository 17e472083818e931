"""Where Qwen Code 0.24.4 sees code in an instruction file, so that an ``@`` there imports nothing.

Qwen Code lexes the file with its bundled ``marked`` (GFM on) and walks the tokens: a ``code``
token (a fence of backticks or tildes, or an indented block) and a ``codespan`` hide what they
cover, found in the text by adding up the top-level tokens' raw lengths and, below them, by
looking each child's raw up in its parent's. That walk only goes down through a token's
``tokens``, so much is *not* code to it although Markdown says so: anything in a list (a list
keeps its items elsewhere), a table's cells, a block quote's children whose raw the quote does
not hold verbatim (a quote of more than one marked line), and everything after a link
definition shifts by the definition's length (marked keeps no token for it).

This module follows marked's block rules line by line for the constructs that decide those
offsets (blank lines, indented code, fences, headings, rules, quotes, lists, HTML blocks,
definitions, tables, paragraphs) and its inline rules for code spans (escapes, tags and
autolinks before backticks). Every step moves forward over the text, so any text costs linear
work: a closer is searched for once, and a tag, autolink or strike-through only within a
window. The facts:
docs/reference/agent-models.md, Qwen Code 0.24.4
"""

from __future__ import annotations

import re

import attrs

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}(?=[^`\n]*(?:\n|$))|~{3,})")
_HEADING = re.compile(r" {0,3}(#{1,6})(?=\s|$)")
_HR = re.compile(r" {0,3}(?:(?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})$")
_QUOTE = re.compile(r" {0,3}>")
_QUOTE_MARK = re.compile(r"^ {0,3}> ?")
_LIST = re.compile(r"( {0,3}(?:[*+-]|\d{1,9}[.)]))([ \t][^\n]+)?$")
_CODE_LINE = re.compile(r"(?: {4}| {0,3}\t)[^\n]")
_SETEXT = re.compile(r" {0,3}(?:=+|-+) *$")
_SETEXT_STOP = re.compile(
    r"(?:[*+-]|\d{1,9}[.)]) |(?: {4}| {0,3}\t)| {0,3}(?:`{3,}|~{3,}|>|#{1,6})"
    r"| {0,3}<[^\n>]+>$| {0,3}\|?(?:[:\- ]*\|)+[:\- ]*$"
)
_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|meta|nav|noframes|"
    "ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|"
    "tr|track|ul"
)
_ATTRIBUTE = r""" +[a-zA-Z:_][\w.:-]*(?: *= *"[^"\n]*"| *= *'[^'\n]*'| *= *[^\s"'=<>`]+)?"""
_UNTIL_BLANK = r"[\s\S]*?(?:(?:\n[ \t]*)+\n|$)"
# marked's HTML block, alternative by alternative (case-insensitive, as marked compiles it).
_HTML = re.compile(
    r" {0,3}(?:<(script|pre|style|textarea)[\s>][\s\S]*?(?:</\1>[^\n]*\n+|$)"
    r"|<!--(?:-?>|[\s\S]*?(?:-->|$))[^\n]*(?:\n+|$)"
    r"|<\?[\s\S]*?(?:\?>\n*|$)"
    r"|<![A-Z][\s\S]*?(?:>\n*|$)"
    r"|<!\[CDATA\[[\s\S]*?(?:\]\]>\n*|$)"
    rf"|</?(?:{_TAGS})(?: +|\n|/?>){_UNTIL_BLANK}"
    rf"|<(?!script|pre|style|textarea)(?:[a-z][\w-]*)(?:{_ATTRIBUTE})*? */?>(?=[ \t]*(?:\n|$))"
    rf"{_UNTIL_BLANK}"
    rf"|</(?!script|pre|style|textarea)[a-z][\w-]*\s*>(?=[ \t]*(?:\n|$)){_UNTIL_BLANK})",
    re.IGNORECASE | re.ASCII,
)
# Where a paragraph line stops one: the HTML starts marked's paragraph rule names.
_PARAGRAPH_HTML = re.compile(
    rf"</?(?:{_TAGS})(?: +|\n|/?>)|<(?:script|pre|style|textarea|!--)", re.IGNORECASE
)
_DEF = re.compile(
    r" {0,3}\[(?!\s*\])(?:\\.|[^\[\]\\])+\]: *(?:\n[ \t]*)?(?:[^<\s][^\s]*|<[^\n]*?>)"
    r"""(?:(?: +(?:\n[ \t]*)?| *\n[ \t]*)(?:"(?:\\"?|[^"\\])*"|'[^'\n]*(?:\n[^'\n]+)*\n?'"""
    r"|\([^()]*\)))? *(?:\n+|$)"
)
_TABLE_DELIMITER = re.compile(r" {0,3}((?:\| *)?:?-+:? *(?:\| *:?-+:? *)*(?:\| *)?)$")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[]\\^_`{|}~")
_AUTOLINK = re.compile(
    r"<(?:[a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s\x00-\x1f<>]*"
    r"|[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+(?![-_]))>"
)
# GFM's bare link; its text stops before one (case matters there) and it runs to a space or
# "<" (what marked then trims off its end holds no backtick).
_URL_START = re.compile(r"https?://|ftp://|www\.")
_URL = re.compile(r"(?:(?:ftp|https?)://|www\.)[a-zA-Z0-9-]+[^\s<]*", re.IGNORECASE)
# GFM's strike-through, whose text is lexed on (a tilde that opens none starts text).
_DEL = re.compile(r"(~~?)(?=[^\s~])(?:\\.|[^\\])*?(?:\\.|[^\s~\\])\1(?=[^~]|$)")
# An opening or closing tag (an inline comment, processing instruction, declaration or CDATA
# section is found with its closer, _tag_end).
_INLINE_TAG = re.compile(
    r"</[a-zA-Z][\w:-]*\s*>"
    r"""|<[a-zA-Z][\w-]*(?:\s+[a-zA-Z:_][\w.:-]*(?:\s*=\s*"[^"]*"|\s*=\s*'[^']*'"""
    r"""|\s*=\s*[^\s"'=<>`]+)?)*?\s*/?>""",
    re.ASCII,
)
_DECLARATION = re.compile(r"<![a-zA-Z]+\s")
# How far a tag or an autolink (and a strike-through) is looked for: marked has no bound, but a
# pattern that may scan to the end of the text, tried at every "<" or "~", would cost quadratic
# time on hostile text; instruction files hold no longer ones.
_WINDOW = 4096
_DEL_WINDOW = 256

Region = tuple[int, int]
# Quotes nested deeper than this are taken whole, their code not looked for: each level lexes its
# text again (and the stack would run out), and no instruction file nests quotes this deep.
MAX_QUOTE_DEPTH = 32


@attrs.define
class _Token:
    """A block token: its raw text and the code regions inside it (offsets into ``raw``)."""

    kind: str
    raw: str
    regions: list[Region] = attrs.field(factory=list)
    text: str = ""  # a paragraph's text, which later lines can be merged into
    # A quote's paragraph: the later chunks' raws that go on it, and where its text stops being
    # its raw (indented code merged in without its indent), joined once the quote is read.
    more: list[str] = attrs.field(factory=list)
    lost_at: int | None = None


def code_regions(text: str) -> list[Region]:
    """The code regions Qwen Code finds in ``text`` (offsets in the text with its line breaks
    made LF, as marked lexes it), sorted by start."""
    regions: list[Region] = []
    offset = 0
    for token in _blocks(text):
        regions.extend((offset + s, offset + e) for s, e in token.regions)
        offset += len(token.raw)
    return sorted(regions)


def _lines_end(src: str, pos: int) -> int:
    end = src.find("\n", pos)
    return len(src) if end < 0 else end


def _blocks(src: str, depth: int = 0) -> list[_Token]:
    """marked's top-level block lexing of ``src`` (its state "top"), in its tokenizers' order."""
    tokens: list[_Token] = []
    pos = 0
    clipped = False  # the next paragraph joins the last one (a quote's lazy lines)
    no_setext = [0]  # no setext heading starts before this offset (_setext)
    while pos < len(src):
        space = _space(src, pos)
        if space:
            if space == 1 and tokens:
                tokens[-1].raw += "\n"
            else:
                tokens.append(_Token("space", src[pos : pos + space]))
            pos += space
            continue
        token, consumed = _block(src, pos, no_setext, depth)
        if token is None:  # a definition: consumed, but marked keeps no token for it
            pos += consumed
            continue
        if token.kind == "paragraph" and clipped and tokens and tokens[-1].kind == "paragraph":
            last = tokens[-1]
            last.raw += "\n" + token.raw
            last.text += "\n" + token.text
            last.regions = _span_regions(last.text)
        else:
            tokens.append(token)
        pos += consumed
    return tokens


def _space(src: str, pos: int) -> int:
    """The length of the blank lines at ``pos`` (marked's newline rule)."""
    at = pos
    while at < len(src):
        end = _lines_end(src, at)
        if src[at:end].strip(" \t"):
            break
        at = min(end + 1, len(src))
    return at - pos


def _block(src: str, pos: int, no_setext: list[int], depth: int) -> tuple[_Token | None, int]:
    line = src[pos : _lines_end(src, pos)]
    for tokenizer in (_indented, _fence, _heading, _hr):
        found = tokenizer(src, pos, line)
        if found is not None:
            return found, len(found.raw)
    for nested in (_quote, _list, _html):
        found = nested(src, pos, line) if nested is not _quote else _quote(src, pos, line, depth)
        if found is not None:
            return found, len(found.raw)
    definition = _DEF.match(src, pos)
    if definition:
        return None, definition.end() - pos
    paragraph = _paragraph(src, pos, no_setext)
    return paragraph, len(paragraph.raw)


def _indented(src: str, pos: int, line: str) -> _Token | None:
    if not _CODE_LINE.match(line):
        return None
    at = pos
    while at < len(src):  # an indented line, then any blank lines, as long as lines indent
        end = _lines_end(src, at)
        if not _CODE_LINE.match(src, at, end):
            break
        at = min(end + 1, len(src))
        while at < len(src):
            blank_end = _lines_end(src, at)
            if src[at:blank_end].strip(" \t"):
                break
            at = min(blank_end + 1, len(src))
    raw = src[pos:at]
    return _Token("code", raw, [(0, len(raw))])


def _fence(src: str, pos: int, line: str) -> _Token | None:
    opener = _FENCE_OPEN.match(line)
    if opener is None:
        return None
    mark = opener[1]
    at = _lines_end(src, pos) + 1
    while at <= len(src):
        end = _lines_end(src, at)
        closer = src[at:end]
        stripped = closer.lstrip(" ")
        rest = stripped[len(mark) :].rstrip(" ").lstrip("`~")
        if len(closer) - len(stripped) <= 3 and stripped.startswith(mark) and not rest:
            raw = src[pos:end]
            return _Token("code", raw, [(0, len(raw))])
        at = end + 1
    raw = src[pos:]  # no closer: the code runs to the end
    return _Token("code", raw, [(0, len(raw))])


def _heading(src: str, pos: int, line: str) -> _Token | None:
    opener = _HEADING.match(line)
    if opener is None:
        return None
    end = pos + len(line)
    while end < len(src) and src[end] == "\n":
        end += 1
    text = line[opener.end() :].strip()
    if text.endswith("#"):
        trimmed = text.rstrip("#")
        if not trimmed or trimmed.endswith(" "):
            text = trimmed.strip()
    raw = src[pos:end]
    # Its children are looked up in the raw from its start: the text's first occurrence.
    at = raw.find(text) if text else 0
    return _Token("heading", raw, [(at + s, at + e) for s, e in _span_regions(text)])


def _hr(src: str, pos: int, line: str) -> _Token | None:
    return _Token("hr", line) if _HR.match(line) else None


def _quote(src: str, pos: int, line: str, depth: int = 0) -> _Token | None:
    if not _QUOTE.match(line):
        return None
    lines = _quote_lines(src, pos)
    if depth >= MAX_QUOTE_DEPTH:
        return _Token("blockquote", "\n".join(lines))  # taken whole, its code not looked for
    taken = 0
    children: list[_Token] = []
    while taken < len(lines):
        chunk = _quote_chunk(lines, taken)
        taken += len(chunk)
        inner = "\n".join(_QUOTE_MARK.sub("", item, count=1) for item in chunk)
        more = _blocks_clipped(inner, clipped=bool(children), depth=depth + 1)
        _join_clipped(children, more)
        if taken == len(lines) or not children or children[-1].kind == "code":
            break
    for child in children:
        _join_more(child)
    raw = "\n".join(lines[:taken])
    return _Token("blockquote", raw, _child_regions(raw, children))


def _quote_lines(src: str, pos: int) -> list[str]:
    """The lines marked's quote rule takes: ``>`` lines, and after a ``>`` line with text the
    lines that would go on its paragraph (lazy lines)."""
    out: list[str] = []
    at = pos
    lazy_ok = False
    while at < len(src):
        end = _lines_end(src, at)
        line = src[at:end]
        if _QUOTE.match(line):
            lazy_ok = bool(_QUOTE_MARK.sub("", line, count=1))
        elif not (lazy_ok and _continues_paragraph(src, at, line, in_quote=True)):
            break
        out.append(line)
        at = end + 1
    return out


def _quote_chunk(lines: list[str], start: int) -> list[str]:
    """From ``start``, leading lazy lines and the ``>`` lines after them (marked lexes a quote
    chunk by chunk)."""
    n = start
    seen_mark = False
    while n < len(lines):
        if _QUOTE.match(lines[n]):
            seen_mark = True
        elif seen_mark:
            break
        n += 1
    return lines[start:n]


def _blocks_clipped(src: str, clipped: bool, depth: int) -> list[_Token]:
    tokens = _blocks(src, depth)
    if clipped and tokens and tokens[0].kind in ("paragraph", "code"):
        tokens[0].kind += "-continued"
    return tokens


def _join_clipped(children: list[_Token], more: list[_Token]) -> None:
    """A quote's later chunk goes on its last paragraph: a paragraph, and indented code too
    (marked adds it to the paragraph's text without its indent, so the walk loses its place
    there: no span from that point is found)."""
    for token in more:
        last = children[-1] if children and children[-1].kind != "code" else None
        if token.kind.endswith("-continued"):
            token.kind = token.kind.removesuffix("-continued")
            if last is not None and last.kind == "paragraph":
                if token.kind == "code" and last.lost_at is None:
                    last.lost_at = len(last.raw) + sum(len(m) + 1 for m in last.more)
                last.more.append(token.raw)
                continue
        children.append(token)


def _join_more(token: _Token) -> None:
    """A quote's paragraph with the chunks that went on it, and its spans (only those before
    the place its walk lost)."""
    if not token.more:
        return
    token.raw = "\n".join([token.raw, *token.more])
    token.more = []
    if token.lost_at is None:
        token.regions = _span_regions(token.raw)
    else:
        token.regions = [
            r for r in _span_regions(token.raw[: token.lost_at]) if r[1] <= token.lost_at
        ]
    token.text = token.raw


def _child_regions(raw: str, children: list[_Token]) -> list[Region]:
    """Each child looked up in its parent's raw after the previous one, as Qwen Code's walk
    does; at the first child not found verbatim the walk gives up on the rest."""
    out: list[Region] = []
    at = 0
    for child in children:
        found = raw.find(child.raw, at)
        if found < 0:
            break
        out.extend((found + s, found + e) for s, e in child.regions)
        at = found + len(child.raw)
    return out


def _list(src: str, pos: int, line: str) -> _Token | None:
    """marked's list rule, item by item; a list holds no region Qwen Code finds."""
    first = _LIST.match(line)
    if first is None:
        return None
    bullet = first[1].strip()
    ordered = len(bullet) > 1
    mark = r"\d{1,9}" + re.escape(bullet[-1]) if ordered else re.escape(bullet)
    item = re.compile(rf"( {{0,3}}{mark})((?:[\t ][^\n]*)?(?:\n|$))")
    at = pos
    while at < len(src):
        cap = item.match(src, at)
        if cap is None or _HR.match(src[at : _lines_end(src, at)]):
            break
        at = _list_item_end(src, cap)
    raw = src[pos:at].rstrip()
    return _Token("list", raw) if raw else None


def _list_item_end(src: str, cap: re.Match[str]) -> int:
    at = cap.end()
    first = cap[2].split("\n", 1)[0]
    line = re.sub(r"^\t+", lambda m: "   " * len(m[0]), first)
    blank = not line.strip()
    if blank:
        indent = len(cap[1]) + 1
    else:
        indent = len(cap[2]) - len(cap[2].lstrip(" "))
        indent = (1 if indent > 4 else indent) + len(cap[1])
    next_line = src[at : _lines_end(src, at)]
    if blank and not next_line.strip(" \t") and at < len(src):
        return _lines_end(src, at) + 1
    limit = min(3, indent - 1)
    # What ends the item at a line, and (lazy_stops) what the line before must not be for a
    # line indented too little to go on it.
    lazy_stops = re.compile(
        rf" {{0,{limit}}}(?:```|~~~|#|(?:- *){{3,}}$|(?:_ *){{3,}}$|(?:\* *){{3,}}$)"
    )
    stops = re.compile(
        rf"{lazy_stops.pattern}| {{0,{limit}}}(?:(?:[*+-]|\d{{1,9}}[.)])(?:[ \t][^\n]*)?$"
        r"|<(?:[a-z].*>|!--))",
        re.IGNORECASE,
    )
    while at < len(src):
        end = _lines_end(src, at)
        raw_line = src[at:end]
        if stops.match(raw_line):
            break
        untabbed = raw_line.replace("\t", "    ")
        if raw_line.strip() and len(untabbed) - len(untabbed.lstrip(" ")) < indent:
            # Not indented enough: it goes on only as the last line's lazy continuation.
            last = line.replace("\t", "    ")
            if blank or len(last) - len(last.lstrip(" ")) >= 4 or lazy_stops.match(line):
                break
        if not blank and not raw_line.strip():
            blank = True
        at = end + 1
        line = untabbed[indent:]
    return min(at, len(src))


def _html(src: str, pos: int, line: str) -> _Token | None:
    found = _HTML.match(src, pos)
    return _Token("html", found[0]) if found else None


def _paragraph(src: str, pos: int, no_setext: list[int]) -> _Token:
    """A paragraph (or a setext heading, whose underline line it then holds), its lines up to
    a blank one or a line that starts a block marked lets interrupt it."""
    table = _table(src, pos)
    if table is not None:
        return table
    heading = None if pos < no_setext[0] else _setext(src, pos, no_setext)
    if heading is not None:
        return heading
    end = _lines_end(src, pos)
    while end < len(src):
        at = end + 1
        line = src[at : _lines_end(src, at)]
        if not _continues_paragraph(src, at, line, in_quote=False):
            break
        end = _lines_end(src, at)
    raw = src[pos:end]
    return _Token("paragraph", raw, _span_regions(raw), raw)


def _setext(src: str, pos: int, no_setext: list[int]) -> _Token | None:
    """marked's setext heading: lines up to the first underline of ``=`` or ``-``, none of
    them blank or opening a block its rule names (its own list, unlike a paragraph's). When
    none is found before the line that stops the search, no start before that line finds one
    either: ``no_setext`` keeps that line, so the lines are searched once."""
    at = pos
    while True:
        end = _lines_end(src, at)
        if _SETEXT_STOP.match(src, at, end) or (at > pos and not src[at:end].strip()):
            no_setext[0] = at
            return None
        if end >= len(src):
            no_setext[0] = len(src)
            return None
        underline = _SETEXT.match(src[end + 1 : _lines_end(src, end + 1)])
        if underline:
            text_end = end
            end = _lines_end(src, end + 1)
            while end < len(src) and src[end] == "\n":
                end += 1
            return _Token("heading", src[pos:end], _span_regions(src[pos:text_end]))
        at = end + 1


def _continues_paragraph(src: str, at: int, line: str, in_quote: bool) -> bool:
    if not line.strip(" ") or (line.startswith(" ") and not line.strip(" ")):
        return False
    if _HR.match(line) or re.match(r" {0,3}#{1,6}(?:\s|$)", line) or _QUOTE.match(line):
        return False
    has_break = _lines_end(src, at) < len(src)
    if re.match(r" {0,3}(?:`{3,}(?=[^`\n]*$)|~{3,})", line) and has_break:
        return False
    if re.match(r" {0,3}(?:[*+-]|1[.)]) ", line) or _PARAGRAPH_HTML.match(line):
        return False
    # GFM's paragraph (outside a quote, whose rule is the plain one) stops at a table.
    return in_quote or _table(src, at) is None


def _table(src: str, pos: int) -> _Token | None:
    header_end = _lines_end(src, pos)
    header = src[pos:header_end]
    if header_end >= len(src) or not header.lstrip(" ") or header.lstrip(" ")[0] == "\n":
        return None
    delimiter_end = _lines_end(src, header_end + 1)
    delimiter = _TABLE_DELIMITER.match(src[header_end + 1 : delimiter_end])
    if delimiter is None or not re.search(r"[:|]", delimiter[1]):
        return None
    aligns = re.sub(r"^\||\| *$", "", delimiter[1]).split("|")
    if len(_cells(header.lstrip(" "))) != len(aligns):
        return None
    at = delimiter_end + 1
    while at < len(src):
        end = _lines_end(src, at)
        line = src[at:end]
        if not line.strip(" ") or _row_stops(src, at, line):
            break
        at = end + 1
    at = min(at, len(src))
    while at < len(src) and src[at] == "\n":
        at += 1
    return _Token("table", src[pos:at])


def _row_stops(src: str, at: int, line: str) -> bool:
    has_break = _lines_end(src, at) < len(src)
    fence = re.match(r" {0,3}(?:`{3,}(?=[^`\n]*$)|~{3,})", line) and has_break
    return bool(
        _HR.match(line)
        or re.match(r" {0,3}#{1,6}(?:\s|$)", line)
        or _QUOTE.match(line)
        or _CODE_LINE.match(line)
        or fence
        or re.match(r" {0,3}(?:[*+-]|1[.)]) ", line)
        or _PARAGRAPH_HTML.match(line)
    )


def _cells(row: str) -> list[str]:
    """marked's cell split of a table row: at each pipe not escaped by a backslash, the
    empty cells before a leading and after a trailing pipe dropped."""
    cells: list[str] = []
    start = 0
    for n, char in enumerate(row):
        if char == "|":
            slashes = len(row[:n]) - len(row[:n].rstrip("\\"))
            if slashes % 2 == 0:
                cells.append(row[start:n])
                start = n + 1
    cells.append(row[start:])
    if cells and not cells[0].strip():
        cells.pop(0)
    if cells and not cells[-1].strip():
        cells.pop()
    return cells


def _span_regions(text: str) -> list[Region]:
    """The code spans marked's inline rules find in ``text``: a run of backticks up to the next
    run of the same length; a backslash escape, an autolink, a bare link or an HTML tag comes
    first and holds no span."""
    out: list[Region] = []
    closers = _Runs(text)
    found = _Closers(text)
    at = 0
    n = len(text)
    while at < n:
        char = text[at]
        if char == "\\" and at + 1 < n and text[at + 1] in _PUNCTUATION:
            at += 2
        elif char == "<":
            at = _tag_end(text, at, found) or at + 1
        elif char in "hfw" and _URL_START.match(text, at) and _URL.match(text, at):
            url = _URL.match(text, at)
            assert url is not None
            at = url.end()
        elif char == "`" or (char == "~" and _tick_run_not_del(text, at)):
            run_end = at
            while run_end < n and text[run_end] == "`":
                run_end += 1
            close = closers.after(run_end, run_end - at) if run_end > at else None
            if close is None:
                # Not a span: GFM's text takes the whole run of backticks and tildes.
                while run_end < n and text[run_end] in "`~":
                    run_end += 1
                at = run_end
            else:
                out.append((at, close))
                at = close
        else:
            at += 1
    return out


def _tick_run_not_del(text: str, at: int) -> bool:
    """Whether GFM's text takes the run of tildes and backticks at ``at`` (a ``~``) whole, a
    backtick in it; only such a run can hide a span's opener, so the strike-through rule (which
    wins when it matches) is tried for it alone."""
    end = at
    while end < len(text) and text[end] in "`~":
        end += 1
    return "`" in text[at:end] and not _DEL.match(text[at : at + _DEL_WINDOW])


def _tag_end(text: str, at: int, found: _Closers) -> int | None:
    """The end of the tag or autolink marked's inline rules take at ``at`` (a ``<``), if any."""
    for opener, closer, shortest in (("<!--", "-->", ("<!-->", "<!--->")), ("<?", "?>", ())):
        if text.startswith(opener, at):
            for short in shortest:
                if text.startswith(short, at):
                    return at + len(short)
            end = found.after(closer, at + len(opener))
            return end + len(closer) if end >= 0 else None
    if text.startswith("<![CDATA[", at):
        end = found.after("]]>", at + 9)
        return end + 3 if end >= 0 else None
    window = text[at : at + _WINDOW]
    declaration = _DECLARATION.match(window)
    if declaration:
        end = found.after(">", at + declaration.end())
        return end + 1 if end >= 0 else None
    tag = _INLINE_TAG.match(window) or _AUTOLINK.match(window)
    return at + tag.end() if tag else None


class _Closers:
    """Where each closing string next occurs, kept between questions: they come left to right,
    so each string is searched for over the text about once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.known: dict[str, int] = {}

    def after(self, closer: str, start: int) -> int:
        """The first index of ``closer`` at or after ``start``, -1 when there is none."""
        known = self.known.get(closer)
        if known is None or 0 <= known < start:
            known = self.text.find(closer, start)
            self.known[closer] = known
        return known


class _Runs:
    """The text's maximal backtick runs by length, each list read forward once: the spans are
    looked for left to right, so a closer before the last question is never needed again."""

    def __init__(self, text: str) -> None:
        self.by_length: dict[int, list[tuple[int, int]]] = {}
        at = text.find("`")
        while at >= 0:
            end = at
            while end < len(text) and text[end] == "`":
                end += 1
            self.by_length.setdefault(end - at, []).append((at, end))
            at = text.find("`", end)
        self.heads = dict.fromkeys(self.by_length, 0)

    def after(self, start: int, length: int) -> int | None:
        """The end of the first run of exactly ``length`` backticks starting at or after
        ``start``."""
        runs = self.by_length.get(length)
        if runs is None:
            return None
        head = self.heads[length]
        while head < len(runs) and runs[head][0] < start:
            head += 1
        self.heads[length] = head
        return runs[head][1] if head < len(runs) else None

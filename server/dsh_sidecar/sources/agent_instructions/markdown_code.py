"""Where Markdown code is in repository text: fenced code blocks and inline code spans, found by
a single forward scan (docs/protocol.md, "Repository text in linear time").

The rules are CommonMark's, as far as they matter for telling code from prose:

- A fence opens on a line indented by at most three spaces with three or more backticks or
  tildes (a backtick fence's info string holds no backtick). It closes on a line, indented by at
  most three spaces, holding only a run of the *same* character at least as long as the opening
  run (and trailing whitespace). A ```` fence is therefore not closed by ```. A fence never
  closed runs to the end of the text.
- A code span opens with a run of N backticks and closes at the next run of *exactly* N
  backticks within the same paragraph (a blank line ends a paragraph); a run with no such closer
  is plain text.

Every loop below moves forward only: each line is looked at once, each backtick run is measured
once and each run's closer is found through a per-length queue whose head only advances, so the
work is linear in the length of the text whatever it holds (a run of 400 backticks, thousands of
unclosed openers). ``Steps`` counts that work for the property tests.
"""

from __future__ import annotations

from collections import deque

import attrs

_WHITESPACE = " \t\r\x0b\x0c"


@attrs.define
class Steps:
    """How much scanning a call did (characters and runs looked at); tests compare growth."""

    count: int = 0


def code_ranges(text: str, steps: Steps | None = None) -> list[tuple[int, int, bool]]:
    """``(start, end, is_block)`` for every line of a fenced block (line break excluded) and
    every code span of ``text``, in order, not overlapping."""
    counter = steps if steps is not None else Steps()
    out: list[tuple[int, int, bool]] = []
    paragraph_start: int | None = None  # offset where the current run of prose lines began
    fence_char = ""
    fence_length = 0
    offset = 0
    length = len(text)
    while offset <= length:
        end = text.find("\n", offset)
        if end == -1:
            end = length
        counter.count += 1
        if fence_char:
            out.append((offset, end, True))
            if _closes(text, offset, end, fence_char, fence_length, counter):
                fence_char = ""
        else:
            opened = _opens(text, offset, end, counter)
            blank = _blank(text, offset, end, counter)
            if opened is not None or blank:
                if paragraph_start is not None:
                    out.extend(_spans(text, paragraph_start, offset, counter))
                    paragraph_start = None
            elif paragraph_start is None:
                paragraph_start = offset
            if opened is not None:
                fence_char, fence_length = opened
                out.append((offset, end, True))
        offset = end + 1
    if paragraph_start is not None:
        out.extend(_spans(text, paragraph_start, length, counter))
    return out


def blank_code(text: str, *, keep_offsets: bool, steps: Steps | None = None) -> str:
    """``text`` with code blanked out. With ``keep_offsets`` every blanked character becomes a
    space (line breaks inside a span too), so offsets still point into ``text``; without it a
    fenced block's lines become empty and a span still becomes spaces."""
    pieces: list[str] = []
    last = 0
    for start, end, block in code_ranges(text, steps):
        pieces.append(text[last:start])
        pieces.append("" if block and not keep_offsets else " " * (end - start))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _indent(text: str, start: int, end: int, counter: Steps) -> int | None:
    """Offset after at most three leading spaces, or None when the line is indented more."""
    index = start
    while index < end and index - start < 4 and text[index] == " ":
        index += 1
    counter.count += index - start
    return None if index - start > 3 else index


def _run(text: str, start: int, end: int, char: str, counter: Steps) -> int:
    index = start
    while index < end and text[index] == char:
        index += 1
    counter.count += index - start
    return index - start


def _opens(text: str, start: int, end: int, counter: Steps) -> tuple[str, int] | None:
    index = _indent(text, start, end, counter)
    if index is None or index >= end or text[index] not in "`~":
        return None
    char = text[index]
    run = _run(text, index, end, char, counter)
    if run < 3:
        return None
    if char == "`":
        counter.count += end - index - run
        if text.find("`", index + run, end) != -1:
            return None  # a backtick fence's info string holds no backtick: this is a span
    return char, run


def _closes(text: str, start: int, end: int, char: str, length: int, counter: Steps) -> bool:
    index = _indent(text, start, end, counter)
    if index is None:
        return False
    run = _run(text, index, end, char, counter)
    return run >= length and _blank(text, index + run, end, counter)


def _blank(text: str, start: int, end: int, counter: Steps) -> bool:
    counter.count += end - start
    return not text[start:end].strip(_WHITESPACE)


def _spans(text: str, start: int, end: int, counter: Steps) -> list[tuple[int, int, bool]]:
    """The code spans of the prose ``text[start:end]`` (one paragraph)."""
    runs: list[tuple[int, int]] = []  # (offset, length) of every backtick run
    index = text.find("`", start, end)
    while index != -1:
        run = _run(text, index, end, "`", counter)
        runs.append((index, run))
        counter.count += 1
        index = text.find("`", index + run, end)
    # For each length, the indices into ``runs`` of the runs of that length, in order; a
    # queue's head only moves forward, so finding every closer costs O(runs) in all.
    by_length: dict[int, deque[int]] = {}
    for number, (_, run) in enumerate(runs):
        by_length.setdefault(run, deque()).append(number)
    out: list[tuple[int, int, bool]] = []
    number = 0
    while number < len(runs):
        offset, run = runs[number]
        queue = by_length[run]
        while queue and queue[0] <= number:
            queue.popleft()
            counter.count += 1
        if not queue:
            number += 1  # no closer of this length in the paragraph: plain backticks
            continue
        closer = queue.popleft()
        close_offset, close_run = runs[closer]
        out.append((offset, close_offset + close_run, False))
        number = closer + 1
    return out

"""Model-visible rendering of workspace instructions under a per-block byte budget.

Implements docs/reference/agent-instructions.md, Rendering and budget; Templates; with the variant of its Variant choices: the UTF-8 cut backs off
to a lead byte (never U+FFFD), and a file only counts as represented when its section kept at
least one content byte or its content is genuinely empty. Every string here is protocol and must
stay byte-identical to upstream.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, assert_never

import attrs

from dsh_sidecar.jsutil import js_number, utf8_len

from .escaping import escape_frame_tags, one_line

OPEN_TAG = "<system-reminder>"
CLOSE_TAG = "</system-reminder>"
# A backslash before the slash keeps the text readable while no longer closing the frame.
ESCAPED_CLOSE_TAG = "<\\/system-reminder>"

BASELINE_INTRO = (
    "The following workspace instructions may be relevant to your work. "
    "Use them as guidance when applicable. More specific instructions take precedence over "
    "broader ones. They do not override system, developer, or direct user instructions."
)
_REPLACES_EARLIER = (
    "This complete workspace instruction baseline replaces all earlier workspace instruction "
    "baselines. "
)
REPLACEMENT_INTRO = _REPLACES_EARLIER + BASELINE_INTRO
EMPTY_REPLACEMENT_INTRO = _REPLACES_EARLIER + "No workspace instructions are currently active."
COMPACT_INTRO = (
    "Workspace instructions were omitted or truncated to fit the configured byte budget."
)

_SET_GUIDANCE = (
    "These instructions apply to work under `{scope}`. Use them as guidance when relevant; "
    "more specific instructions take precedence. They do not override system, developer, or "
    "direct user instructions."
)
# A path-scoped rule (instructions.ruleSets) says which files it concerns instead of a directory.
_RULE_GUIDANCE = (
    "These instructions apply to {applies}. Use them as guidance when relevant; more specific "
    "instructions take precedence. They do not override system, developer, or direct user "
    "instructions."
)
_REPLACE_GUIDANCE = (
    "This file changed after it was loaded. Use the following content instead of the "
    "previously loaded instructions from this file."
)
_REMOVE_GUIDANCE = "The previously loaded instructions from this file no longer apply."

_BLOCK_SEPARATOR = "\n\n"

ItemKind = Literal["baseline", "set", "replace", "remove"]
_KINDS: frozenset[str] = frozenset({"baseline", "set", "replace", "remove"})


def escape(text: str) -> str:
    """Neutralize every frame tag (``escaping``), so the body can neither end the frame early
    nor open another one; the exact closing tag becomes upstream's ``<\\/system-reminder>``."""
    return escape_frame_tags(text)


def frame(body: str) -> str:
    """Wrap ``body`` in one ``<system-reminder>`` frame, escaping it first."""
    return f"{OPEN_TAG}\n{escape(body)}\n{CLOSE_TAG}"


EMPTY_REPLACEMENT_BASELINE = frame(EMPTY_REPLACEMENT_INTRO)


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that fits in ``max_bytes`` UTF-8 bytes, whole code points only.

    Variant cut (docs/reference/agent-instructions.md, Variant choices): when the budget lands inside a code point, back off to its lead byte instead of
    decoding a partial sequence (which would leave U+FFFD in model text).
    """
    # surrogatepass keeps byte counts consistent with utf8_len (lone surrogates are 3 bytes).
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    end = max(0, max_bytes)
    while end > 0 and data[end] & 0xC0 == 0x80:
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass")


@attrs.frozen
class Truncation:
    """Byte accounting for the one file whose content was cut to fit."""

    path: str
    original_bytes: int
    included_bytes: int


def budget_marker(max_bytes: float, omitted: Sequence[str], truncated: Sequence[Truncation]) -> str:
    """T7 budget marker (unescaped); ``""`` when nothing was omitted or truncated."""
    parts: list[str] = []
    if omitted:
        parts.append("omitted " + ", ".join(one_line(p) for p in omitted))
    if truncated:
        cuts = (
            f"{one_line(t.path)} from {t.original_bytes} to {t.included_bytes} bytes"
            for t in truncated
        )
        parts.append("truncated " + ", ".join(cuts))
    if not parts:
        return ""
    return f"Workspace instruction budget {js_number(max_bytes)} bytes: " + "; ".join(parts)


@attrs.frozen
class RenderItem:
    """One file (baseline) or one dynamic transition to render, in broadest-first order."""

    kind: ItemKind = attrs.field(validator=attrs.validators.in_(_KINDS))
    path: str
    content: str = ""
    scope_dir: str = "."
    applies_to: str | None = None  # a rule's files ("files matching `*.py`"), for a set


def _content(item: RenderItem) -> str:
    # A removal renders no content, so it has nothing to truncate: its O is 0.
    return "" if item.kind == "remove" else item.content


def section(item: RenderItem, content: str | None = None) -> str:
    """The unescaped section for ``item``; ``content`` replaces the item's own content.

    Names are written on one line (``escaping.one_line``): a line break in a directory or file
    name must not start a template line of its own.
    """
    text = item.content if content is None else content
    kind = item.kind
    path = one_line(item.path)
    if kind == "baseline":
        return f"Instructions from: {path}\n\n{text}"
    if kind == "set":
        if item.applies_to is not None:
            guidance = _RULE_GUIDANCE.format(applies=one_line(item.applies_to))
        else:
            guidance = _SET_GUIDANCE.format(scope=one_line(item.scope_dir))
        return f"Additional instructions from: {path}\n\n{guidance}\n\n{text}"
    if kind == "replace":
        return f"Updated instructions from: {path}\n\n{_REPLACE_GUIDANCE}\n\n{text}"
    if kind == "remove":
        return f"Instructions removed: {path}\n\n{_REMOVE_GUIDANCE}"
    assert_never(kind)


@attrs.frozen
class RenderResult:
    """Rendered block text plus what the budget did to the items.

    ``represented`` holds indices into the rendered items; it is not the complement of
    ``omitted``: a file truncated to zero bytes, or one named only by the notice, is in neither.
    """

    text: str
    omitted: tuple[str, ...]
    truncated: tuple[Truncation, ...]
    represented: frozenset[int]


def _build(sections: Sequence[str], marker: str, intro: str) -> str:
    blocks = [block for block in (marker, intro, *sections) if block]
    return frame(_BLOCK_SEPARATOR.join(blocks))


def _fits(text: str, max_bytes: float) -> bool:
    return utf8_len(text) <= max_bytes


def render(items: Sequence[RenderItem], max_bytes: float, intro: str | None) -> RenderResult:
    """Render ``items`` (broadest first) into one block of at most ``max_bytes`` UTF-8 bytes.

    ``intro`` is the baseline intro, or ``None`` for a dynamic batch (which has no intro but
    still gets the compact intro as its second truncation attempt).
    """
    paths = tuple(item.path for item in items)
    if not math.isfinite(max_bytes) or max_bytes <= 0:
        return RenderResult("", paths, (), frozenset())
    style_intro = intro or ""
    if not items and not style_intro:
        # Nothing to say: an empty frame would carry no information.
        return RenderResult("", (), (), frozenset())
    sections = [section(item) for item in items]

    full = _build(sections, "", style_intro)
    if _fits(full, max_bytes):
        return RenderResult(full, (), (), frozenset(range(len(items))))
    if not items:
        return RenderResult("", (), (), frozenset())

    # Broader files go first, whole, so the most specific instructions survive untouched.
    for start in range(1, len(items)):
        marker = budget_marker(max_bytes, paths[:start], ())
        text = _build(sections[start:], marker, style_intro)
        if _fits(text, max_bytes):
            return RenderResult(text, paths[:start], (), frozenset(range(start, len(items))))

    for candidate_intro in (style_intro, COMPACT_INTRO):
        fitted = _truncate_last(items, max_bytes, candidate_intro)
        if fitted is not None:
            return fitted
    return _unframed_fallback(items, max_bytes)


def _truncated_build(
    last: RenderItem, content: str, omitted: Sequence[str], max_bytes: float, intro: str
) -> tuple[str, Truncation]:
    # The marker reports the bytes actually kept after the code-point cut, not the probe size.
    cut = Truncation(last.path, utf8_len(_content(last)), utf8_len(content))
    marker = budget_marker(max_bytes, omitted, (cut,))
    return _build([section(last, content)], marker, intro), cut


def _truncate_last(
    items: Sequence[RenderItem], max_bytes: float, intro: str
) -> RenderResult | None:
    """Step 4: drop all broader items and binary-search the last item's content length."""
    last = items[-1]
    omitted = tuple(item.path for item in items[:-1])
    content = _content(last)
    lo, hi = 0, utf8_len(content)
    best = cut_utf8(content, 0)
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = cut_utf8(content, mid)
        text, _ = _truncated_build(last, candidate, omitted, max_bytes, intro)
        if _fits(text, max_bytes):
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    text, cut = _truncated_build(last, best, omitted, max_bytes, intro)
    if not _fits(text, max_bytes):
        return None
    # A heading with no content bytes says nothing about a non-empty file, so it does not count.
    kept = cut.included_bytes > 0 or cut.original_bytes == 0
    represented = frozenset({len(items) - 1}) if kept else frozenset()
    return RenderResult(text, omitted, (cut,), represented)


def _unframed_fallback(items: Sequence[RenderItem], max_bytes: float) -> RenderResult:
    """Step 5: no frame fits, so emit the notice (with the empty heading if it fits) bare."""
    last = items[-1]
    omitted = tuple(item.path for item in items[:-1])
    cut = Truncation(last.path, utf8_len(_content(last)), 0)
    notice = escape(budget_marker(max_bytes, omitted, (cut,)))
    with_heading = escape(notice + _BLOCK_SEPARATOR + section(last, ""))
    if _fits(with_heading, max_bytes):
        represented = frozenset({len(items) - 1}) if cut.original_bytes == 0 else frozenset()
        return RenderResult(with_heading, omitted, (cut,), represented)
    if _fits(notice, max_bytes):
        return RenderResult(notice, omitted, (cut,), frozenset())
    # A frame tag found in a prefix would be one in the whole escaped notice, which has none,
    # so cutting stays safe.
    return RenderResult(cut_utf8(notice, math.trunc(max_bytes)), omitted, (cut,), frozenset())

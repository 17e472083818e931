"""Per-source byte retention (reference context-sources.md §2.9, upstream ``TextRetainer``).

The serialized, tag-safe data object of one referenced session must fit ``maxReferenceBytes``.
First whole items are dropped (oldest first; never a compaction checkpoint, never the newest),
then the largest remaining text is cut to a head and tail with a notice. The binary search and
the trimming are ported exactly, because trimming makes "fits" non-monotonic and the output
depends on the search path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.jsutil import js_json, utf8_len

BUDGET_MESSAGE = "referenced session snapshot cannot fit the configured byte budget"


def tag_safe_json(value: Any) -> str:
    """Compact ``JSON.stringify`` with every ``<`` written as ``\\u003c`` (and its fullwidth and
    small forms as ``\\uff1c`` and ``\\ufe64``)."""
    # A lenient reader also takes the fullwidth and small forms of "<" for one (docs/protocol.md,
    # "What is escaped"); JSON can write them as escapes too, so no tag can start in the data.
    text = js_json(value).replace("<", "\\u003c")
    return text.replace("\ufe64", "\\ufe64").replace("\uff1c", "\\uff1c")


@attrs.frozen
class ConversationItem:
    role: Literal["user", "assistant"]
    text: str
    checkpoint: bool = False


@attrs.frozen
class RetentionStats:
    compacted: bool
    original_messages: int
    retained_messages: int
    omitted_messages: int
    omitted_bytes: int
    truncated: bool


@attrs.frozen
class RetainedSource:
    """The data object (keys in upstream order) and its retention statistics."""

    data: dict[str, Any]
    stats: RetentionStats


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def head_tail(data: bytes, head: int, tail: int) -> tuple[bytes, bytes]:
    """The first ``head`` and last ``tail`` bytes, trimmed to whole code points."""
    end = min(head, len(data))
    while 0 < end < len(data) and _is_continuation(data[end]):
        end -= 1
    start = len(data) - tail if tail > 0 else len(data)
    start = max(start, end)
    while start < len(data) and _is_continuation(data[start]):
        start += 1
    return data[:end], data[start:]


def _notice(omitted: int) -> str:
    return f"\n[… omitted {omitted} UTF-8 bytes …]"


def truncate_with_notice(text: str, target: int) -> tuple[str, int]:
    """Largest head+tail+notice that fits ``target`` bytes: ``(text, omitted bytes)``.

    When even the bare notice does not fit, the text becomes ``""`` and every byte is omitted.
    """
    data = _encode(text)
    total = len(data)
    best: tuple[str, int] | None = None
    lo, hi = 0, target
    while lo <= hi:
        mid = (lo + hi) // 2
        head, tail = head_tail(data, (mid + 1) // 2, mid // 2)
        omitted = total - len(head) - len(tail)
        candidate = _decode(head) + _decode(tail) + _notice(omitted)
        if utf8_len(candidate) <= target:
            best = (candidate, omitted)
            lo = mid + 1
        else:
            hi = mid - 1
    return best if best is not None else ("", total)


@attrs.define
class _Slot:
    item: ConversationItem
    text: str
    omitted_bytes: int = 0


def _data(
    session_id: str, label: str, cwd: str | None, captured: int | None, slots: Sequence[_Slot]
) -> dict[str, Any]:
    return {
        "sessionId": session_id,
        "label": label,
        "cwd": cwd,
        "capturedThroughSeq": captured,
        "conversation": [{"role": s.item.role, "text": s.text} for s in slots],
    }


def budget_exceeded() -> DshError:
    return DshError(errors.SESSION_REFERENCE_BUDGET_EXCEEDED, BUDGET_MESSAGE)


def retain_source(
    *,
    session_id: str,
    label: str,
    cwd: str | None,
    captured_through_seq: int | None,
    items: Sequence[ConversationItem],
    max_bytes: int,
) -> RetainedSource:
    """Fit one source into ``max_bytes`` of tag-safe JSON or raise ``BUDGET_EXCEEDED``."""
    slots = [_Slot(item, item.text) for item in items]

    def size() -> int:
        return utf8_len(tag_safe_json(_data(session_id, label, cwd, captured_through_seq, slots)))

    omitted_messages = 0
    dropped_bytes = 0
    while size() > max_bytes:
        index = next(
            (i for i, s in enumerate(slots) if not s.item.checkpoint and i != len(slots) - 1),
            None,
        )
        if index is None:
            break
        dropped = slots.pop(index)
        omitted_messages += 1
        dropped_bytes += utf8_len(dropped.item.text)

    while (current := size()) > max_bytes:
        widest: _Slot | None = None
        widest_bytes = 0
        for slot in slots:
            length = utf8_len(slot.text)
            if widest is None or length > widest_bytes:
                widest, widest_bytes = slot, length
        if widest is None or widest_bytes == 0:
            raise budget_exceeded()
        target = max(0, widest_bytes - (current - max_bytes))
        text, omitted = truncate_with_notice(widest.item.text, target)
        if text == widest.text:
            raise budget_exceeded()
        widest.text, widest.omitted_bytes = text, omitted

    omitted_bytes = sum(s.omitted_bytes for s in slots) + dropped_bytes
    stats = RetentionStats(
        compacted=any(item.checkpoint for item in items),
        original_messages=len(items),
        retained_messages=len(slots),
        omitted_messages=omitted_messages,
        omitted_bytes=omitted_bytes,
        truncated=omitted_messages > 0 or omitted_bytes > 0,
    )
    return RetainedSource(_data(session_id, label, cwd, captured_through_seq, slots), stats)

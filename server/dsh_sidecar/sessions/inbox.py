"""The durable next-step inbox: every change is logged as one ``agent/inbox/spliced`` event."""

from __future__ import annotations

from collections.abc import Sequence

from dsh_sidecar.model import INBOX_SPLICED, Message

from .store import EventDraft


def same_inbox(a: Sequence[Message], b: Sequence[Message]) -> bool:
    return [m.id for m in a] == [m.id for m in b] and all(
        x.same_payload(y) for x, y in zip(a, b, strict=True)
    )


def splice_draft(old: Sequence[Message], new: Sequence[Message]) -> EventDraft | None:
    """One splice turning ``old`` into ``new`` (common prefix and suffix kept), or None."""
    if same_inbox(old, new):
        return None
    start = 0
    while start < min(len(old), len(new)) and old[start].id == new[start].id:
        start += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - start
        and old[len(old) - 1 - tail].id == new[len(new) - 1 - tail].id
    ):
        tail += 1
    removed = len(old) - start - tail
    inserted = new[start : len(new) - tail]
    data: dict[str, object] = {"target": "next-step", "start": start}
    if removed:
        data["removedCount"] = removed
    data["inserted"] = [m.to_json() for m in inserted]
    return EventDraft(INBOX_SPLICED, data)

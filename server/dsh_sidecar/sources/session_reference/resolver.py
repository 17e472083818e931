"""Candidates, preparation and batch rewriting for session references.

Upstream behaviour: docs/reference/session-reference.md, Candidates, through Pre-step.

Pure over its inputs: the caller supplies the session list, the titles and a ``read_surface``
callable, and handles cancellation (an ``errors.Cancelled`` raised by ``read_surface`` propagates
untouched). Every failure is a ``DshError`` with a ``SESSION_REFERENCE_*`` code; the caller
rejects the whole step on any of them, so nothing is written.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from dsh_sidecar import errors
from dsh_sidecar.config import MAX_SAFE_INTEGER, SessionReferenceSettings
from dsh_sidecar.errors import Cancelled, DshError
from dsh_sidecar.jsutil import js_json_string
from dsh_sidecar.model import (
    ASSISTANT_MESSAGE,
    USER_MESSAGE,
    Message,
    SessionHeader,
    SurfaceSnapshot,
)
from dsh_sidecar.sources.session_reference.prompt import render_prompt
from dsh_sidecar.sources.session_reference.retention import (
    ConversationItem,
    RetainedSource,
    retain_source,
)
from dsh_sidecar.sources.session_reference.uri import (
    SessionReferenceInput,
    format_session_reference_mention,
    parse_session_reference_text,
)

MAX_REFERENCES = 3
DEFAULT_CANDIDATE_LIMIT = 50
DEFAULT_MAX_REFERENCE_BYTES = 65536


def _error(code: str, message: str, **data: Any) -> DshError:
    return DshError(code, message, data or None)


# --- candidates -----------------------------------------------------------------------------


@attrs.frozen
class Candidate:
    session_id: str
    label: str
    cwd: str | None
    created_at: int
    mention: str

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": self.session_id, "label": self.label}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        out["createdAt"] = self.created_at
        out["mention"] = self.mention
        return out


def _is_positive_safe_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SAFE_INTEGER


def _rank(candidate_cwd: str | None, target_cwd: str | None) -> int:
    if candidate_cwd is not None and target_cwd is not None and candidate_cwd == target_cwd:
        return 0
    if candidate_cwd is None:
        return 1
    return 2


def list_candidates(
    *,
    target_id: str,
    target_cwd: str | None,
    query: str,
    limit: int,
    sessions: Sequence[SessionHeader],
    titles: Mapping[str, str | None],
) -> list[Candidate]:
    """Sessions other than the target, same-cwd first, filtered by ``query``, at most ``limit``.

    ``sessions`` is newest first. The label is the title from ``titles`` (falling back to the
    header's title, then the id). A non-empty query keeps a session whose id, cwd or label
    contains it, case-insensitively.
    """
    if not _is_positive_safe_int(limit):
        raise _error(
            errors.SESSION_REFERENCE_INVALID_REFERENCE,
            "candidate limit must be a positive safe integer",
        )
    needle = (query or "").lower()
    ranked: list[tuple[int, int, Candidate]] = []
    for index, header in enumerate(sessions):
        if header.id == target_id:
            continue
        title = titles.get(header.id, header.title)
        label = header.id if title is None else title
        cwd: str | None = header.cwd
        if needle and not (
            needle in header.id.lower()
            or (cwd is not None and needle in cwd.lower())
            or needle in label.lower()
        ):
            continue
        mention = format_session_reference_mention(header.id, label)
        candidate = Candidate(header.id, label, cwd, header.created_at, mention)
        ranked.append((_rank(cwd, target_cwd), index, candidate))
    ranked.sort(key=lambda entry: (entry[0], entry[1]))
    return [candidate for _, _, candidate in ranked[:limit]]


# --- preparation ----------------------------------------------------------------------------


@attrs.frozen
class NormalizedReference:
    session_id: str
    label: str


def _input_fields(reference: Any) -> tuple[Any, Any, bool]:
    """``(sessionId, label, label present)`` of an input, or raise for a non-object."""
    if isinstance(reference, SessionReferenceInput):
        return reference.session_id, reference.label, reference.label is not None
    if isinstance(reference, Mapping):
        return reference.get("sessionId"), reference.get("label"), "label" in reference
    raise _error(errors.SESSION_REFERENCE_INVALID_REFERENCE, "session reference must be an object")


def normalize_references(
    target_id: str, references: Sequence[Any], max_references: int
) -> list[NormalizedReference]:
    """Validate in order, skip duplicates (the first label wins), then check the count."""
    seen: dict[str, NormalizedReference] = {}
    for reference in references:
        session_id, label, has_label = _input_fields(reference)
        if not isinstance(session_id, str) or (has_label and not isinstance(label, str)):
            raise _error(
                errors.SESSION_REFERENCE_INVALID_REFERENCE,
                "session reference must contain a string sessionId and optional string label",
            )
        if session_id == target_id:
            raise _error(
                errors.SESSION_REFERENCE_SELF_REFERENCE,
                f"session {js_json_string(session_id)} cannot reference itself",
                sessionId=session_id,
            )
        if session_id not in seen:
            seen[session_id] = NormalizedReference(
                session_id, label if isinstance(label, str) else session_id
            )
    if len(seen) > max_references:
        raise _error(
            errors.SESSION_REFERENCE_TOO_MANY,
            f"a message may reference at most {max_references} sessions",
            maxReferences=max_references,
        )
    return list(seen.values())


def _is_checkpoint(source: Mapping[str, Any]) -> bool:
    return source.get("kind") == "plugin" and source.get("plugin") == "compact"


def project_snapshot(snapshot: SurfaceSnapshot) -> list[ConversationItem]:
    """Direct user messages, compaction checkpoints and assistant text; nothing else."""
    items: list[ConversationItem] = []
    for event in snapshot.events:
        if event.type not in (USER_MESSAGE, ASSISTANT_MESSAGE):
            continue
        message = event.message()
        if message is None:
            continue
        checkpoint = False
        if event.type == USER_MESSAGE:
            checkpoint = _is_checkpoint(message.source)
            if message.source.get("kind") != "user" and not checkpoint:
                continue
        text = "\n".join(
            b["text"]
            for b in message.content
            if b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        if not text:
            continue
        if event.type == USER_MESSAGE:
            items.append(ConversationItem("user", text, checkpoint))
        else:
            items.append(ConversationItem("assistant", text))
    return items


def _read_all(
    references: Sequence[NormalizedReference], read_surface: Callable[[str], SurfaceSnapshot]
) -> list[SurfaceSnapshot]:
    snapshots: list[SurfaceSnapshot] = []
    for reference in references:
        try:
            snapshots.append(read_surface(reference.session_id))
        except Cancelled:
            raise
        except Exception as exc:
            message = exc.message if isinstance(exc, DshError) else str(exc)
            raise _error(
                errors.SESSION_REFERENCE_READ_FAILED,
                f"failed to read referenced session: {message or type(exc).__name__}",
                sessionId=reference.session_id,
            ) from exc
    return snapshots


def reference_summary(
    snapshot: SurfaceSnapshot, retained: RetainedSource, input_index: int
) -> dict[str, Any]:
    """One entry of the source's ``references`` (fields in upstream order)."""
    stats = retained.stats
    return {
        "sessionId": snapshot.session.id,
        "label": retained.data["label"],
        "capturedThroughSeq": snapshot.captured_through_seq,
        "compacted": stats.compacted,
        "originalMessages": stats.original_messages,
        "retainedMessages": stats.retained_messages,
        "omittedMessages": stats.omitted_messages,
        "omittedBytes": stats.omitted_bytes,
        "truncated": stats.truncated,
        "inputIndex": input_index,
    }


def prepare(
    *,
    target_id: str,
    content: Sequence[Mapping[str, Any]],
    references: Sequence[Any],
    read_surface: Callable[[str], SurfaceSnapshot],
    settings: SessionReferenceSettings,
) -> tuple[list[dict[str, Any]], Message | None]:
    """A detached copy of ``content`` and the aggregated snapshot message (None without refs).

    ``references`` holds :class:`SessionReferenceInput` objects or wire mappings
    ``{sessionId, label?}``.
    """
    detached = [copy.deepcopy(dict(block)) for block in content]
    normalized = normalize_references(target_id, references, settings.max_references)
    if not normalized:
        return detached, None
    snapshots = _read_all(normalized, read_surface)
    data: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    for index, (reference, snapshot) in enumerate(zip(normalized, snapshots, strict=True)):
        retained = retain_source(
            session_id=snapshot.session.id,
            label=reference.label,
            cwd=snapshot.session.cwd,
            captured_through_seq=snapshot.captured_through_seq,
            items=project_snapshot(snapshot),
            max_bytes=settings.max_reference_bytes,
        )
        data.append(retained.data)
        summaries.append(reference_summary(snapshot, retained, index))
    source = {"kind": "session-reference", "form": "recall", "version": 1, "references": summaries}
    return detached, Message.user([render_prompt(data)], source)


def rewrite_content(
    content: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], list[SessionReferenceInput]]:
    """Parse every text block (others stay in place); mentions become ``@label``."""
    rewritten: list[dict[str, Any]] = []
    found: list[SessionReferenceInput] = []
    for block in content:
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            parsed = parse_session_reference_text(text)
            rewritten.append({**block, "text": parsed.text})
            found.extend(parsed.references)
        else:
            rewritten.append(dict(block))
    return rewritten, found


def apply_to_batch(
    *,
    target_id: str,
    batch: Sequence[Message],
    read_surface: Callable[[str], SurfaceSnapshot],
    settings: SessionReferenceSettings,
) -> list[Message]:
    """Resolve the mentions of every direct user message of the entering batch.

    Messages whose source kind is not ``user`` (context, readings, checkpoints) and user
    messages without a mention are returned as the same objects. A citing message is replaced by
    a copy with rewritten text (same id and source) followed immediately by its snapshot.
    With the source disabled the batch is returned as is.
    """
    if not settings.enabled:
        return list(batch)
    out: list[Message] = []
    for message in batch:
        if message.source.get("kind") != "user":
            out.append(message)
            continue
        rewritten, found = rewrite_content(message.content)
        if not found:
            out.append(message)
            continue
        content, context = prepare(
            target_id=target_id,
            content=rewritten,
            references=found,
            read_surface=read_surface,
            settings=settings,
        )
        out.append(attrs.evolve(message, content=tuple(content)))
        if context is not None:
            out.append(context)
    return out

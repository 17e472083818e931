"""Invariant companion of session-reference.

Upstream's companion validates nothing (snapshots are checked while they are built); ours checks
the exact durable shape: the recall source with its reference summaries in upstream field order,
and one text block that is the tag-safe snapshot prompt naming the same sessions in order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dsh_sidecar.invariants._common import has_exact_keys, is_safe_int, single_text_block
from dsh_sidecar.model import Event
from dsh_sidecar.sources.session_reference.prompt import PREFIX, SUFFIX
from dsh_sidecar.sources.session_reference.resolver import MAX_REFERENCES

PACKAGE = "@deepseek-ai/dsh-session-reference"

REFERENCE_FIELDS = (
    "sessionId",
    "label",
    "capturedThroughSeq",
    "compacted",
    "originalMessages",
    "retainedMessages",
    "omittedMessages",
    "omittedBytes",
    "truncated",
    "inputIndex",
)
DATA_FIELDS = ("sessionId", "label", "cwd", "capturedThroughSeq", "conversation")
CLOSING_TAG = "</referenced-sessions>"

MSG_SOURCE = (
    "session-reference source must be exactly {kind, form: 'recall', version: 1, references}"
)
MSG_REFERENCES = (
    f"session-reference references must be a non-empty array of at most {MAX_REFERENCES} "
    "distinct sessions"
)
MSG_BLOCK = "session-reference messages must contain exactly one text block"
MSG_PROMPT = "session-reference text must be the tag-safe referenced-sessions snapshot"
MSG_MISMATCH = "session-reference snapshot does not match its source references"


def msg_fields(index: int) -> str:
    return (
        f"session-reference reference {index} must have exactly the fields "
        + ", ".join(REFERENCE_FIELDS)
        + " in this order"
    )


def msg_stats(index: int) -> str:
    return f"session-reference reference {index} has inconsistent retention statistics"


def _reference_problem(index: int, ref: Any) -> str | None:
    if not isinstance(ref, Mapping) or tuple(ref) != REFERENCE_FIELDS:
        return msg_fields(index)
    counts = [ref[k] for k in ("originalMessages", "retainedMessages", "omittedMessages")]
    seq = ref["capturedThroughSeq"]
    if (
        not isinstance(ref["sessionId"], str)
        or not isinstance(ref["label"], str)
        or not (seq is None or is_safe_int(seq))
        or not isinstance(ref["compacted"], bool)
        or not isinstance(ref["truncated"], bool)
        or not all(is_safe_int(c) for c in counts)
        or not is_safe_int(ref["omittedBytes"])
        or ref["inputIndex"] != index
        or not is_safe_int(ref["inputIndex"])
    ):
        return msg_fields(index)
    original, retained, omitted = counts
    if (
        retained + omitted != original
        or ref["truncated"] != (omitted > 0 or ref["omittedBytes"] > 0)
        or (ref["compacted"] and original == 0)
    ):
        return msg_stats(index)
    return None


def _payload(text: str) -> Any:
    if not text.startswith(PREFIX) or not text.endswith(SUFFIX):
        return None
    body = text[len(PREFIX) : len(text) - len(SUFFIX)]
    if any(c in body for c in "<\ufe64\uff1c") or text.count(CLOSING_TAG) != 1:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def check(event: Event, history: Sequence[Event]) -> str | None:
    """The violation message for one session-reference context, or None when it is valid."""
    source = event.data.get("source")
    if not has_exact_keys(source, {"kind", "form", "version", "references"}):
        return MSG_SOURCE
    version = source["version"]
    if source["form"] != "recall" or isinstance(version, bool) or version != 1:
        return MSG_SOURCE
    references = source["references"]
    if not isinstance(references, list | tuple) or not 1 <= len(references) <= MAX_REFERENCES:
        return MSG_REFERENCES
    for index, ref in enumerate(references):
        problem = _reference_problem(index, ref)
        if problem is not None:
            return problem
    if len({ref["sessionId"] for ref in references}) != len(references):
        return MSG_REFERENCES
    text = single_text_block(event.data)
    if text is None:
        return MSG_BLOCK
    payload = _payload(text)
    if not isinstance(payload, list) or not all(
        isinstance(d, dict) and tuple(d) == DATA_FIELDS for d in payload
    ):
        return MSG_PROMPT
    if len(payload) != len(references) or any(
        d["sessionId"] != r["sessionId"]
        or d["label"] != r["label"]
        or d["capturedThroughSeq"] != r["capturedThroughSeq"]
        or not isinstance(d["conversation"], list)
        or len(d["conversation"]) != r["retainedMessages"]
        for d, r in zip(payload, references, strict=True)
    ):
        return MSG_MISMATCH
    return None

"""session-reference: bounded, read-only snapshots of other sessions as sourced context.

``uri`` (canonical URIs, mentions, parsing), ``retention`` (per-source byte budget), ``prompt``
(the model-facing text) and ``resolver`` (candidates, preparation, batch rewriting).
"""

from __future__ import annotations

from dsh_sidecar.sources.session_reference.prompt import PREFIX, SUFFIX, render_prompt
from dsh_sidecar.sources.session_reference.resolver import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_MAX_REFERENCE_BYTES,
    MAX_REFERENCES,
    Candidate,
    apply_to_batch,
    list_candidates,
    prepare,
)
from dsh_sidecar.sources.session_reference.uri import (
    SCHEME,
    ParsedText,
    SessionReferenceInput,
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

__all__ = [
    "DEFAULT_CANDIDATE_LIMIT",
    "DEFAULT_MAX_REFERENCE_BYTES",
    "MAX_REFERENCES",
    "PREFIX",
    "SCHEME",
    "SUFFIX",
    "Candidate",
    "ParsedText",
    "SessionReferenceInput",
    "apply_to_batch",
    "decode_session_reference_uri",
    "encode_session_reference_uri",
    "format_session_reference_mention",
    "list_candidates",
    "parse_session_reference_text",
    "prepare",
    "render_prompt",
]

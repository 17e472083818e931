"""Wire types of the dsh/ methods (protocol.md §3–§7): attrs classes, camelCased on the wire.

Results are encoded by ``protocol.encode.to_json``: an optional field (one with a default) is left
out when it has no value, a required one is always sent, as ``null`` if it may have none. Messages, events, sources and changes travel as their JSON objects: they are
durable log data whose exact shape (and key order) the sidecar stores and replays verbatim.
tests/protocol/test_docs_sync.py hashes these classes together with the method table, so a
change here that docs/protocol.md does not follow fails.
"""

from __future__ import annotations

from typing import Any

import attrs

JsonObject = dict[str, Any]

# --- params -------------------------------------------------------------------------------------


@attrs.define
class SessionOpenParams:
    cwd: str
    session_id: str | None = None
    title: str | None = None


@attrs.define
class SessionIdParams:
    session_id: str


@attrs.define
class SessionListParams:
    query: str | None = None
    limit: int | None = None


@attrs.define
class SessionEventsParams:
    session_id: str
    after_seq: int | None = None
    limit: int | None = None


@attrs.define
class SessionAppendParams:
    session_id: str
    events: list[Any]


@attrs.define
class SessionCompactParams:
    session_id: str
    start: int
    end: int
    summary: str
    compaction_id: str | None = None


@attrs.define
class PromptParams:
    text: str
    client_time_zone: str | None = None
    rpc_id: str | None = None


@attrs.define
class StepPrepareParams:
    session_id: str
    turn: int
    step: int
    prompt: PromptParams | None = None


@attrs.define
class StepEndParams:
    session_id: str
    turn: int
    step: int


@attrs.define
class TurnEndParams:
    session_id: str
    turn: int
    reason: str


@attrs.define
class ToolResultParams:
    session_id: str
    token: str
    name: str
    arguments: Any
    is_error: bool
    parent_token: str | None = None
    aborted: bool | None = None


@attrs.define
class ContextPreviewParams:
    cwd: str


@attrs.define
class ScopesParams:
    uri: str


@attrs.define
class CandidatesParams:
    session_id: str
    query: str | None = None


# --- results ------------------------------------------------------------------------------------


@attrs.define
class SessionHeaderWire:
    id: str
    created_at: int
    cwd: str
    title: str | None = None


@attrs.define
class SessionOpenResult:
    session: SessionHeaderWire
    resumed: bool


@attrs.define
class SessionListResult:
    sessions: list[SessionHeaderWire]


@attrs.define
class SurfaceResult:
    session: SessionHeaderWire
    captured_through_seq: int | None  # always sent, null for an empty log
    events: list[JsonObject]


@attrs.define
class EventsResult:
    events: list[JsonObject]


@attrs.define
class AppendResult:
    seqs: list[int]


@attrs.define
class CompactResult:
    seq: int


@attrs.define
class PrepareResult:
    messages: list[JsonObject]
    seqs: list[int]


@attrs.define
class PendingResult:
    messages: list[JsonObject]


@attrs.define
class ScopeFile:
    path: str
    display_path: str
    scope: str
    state: str
    bytes: int | None  # always sent, null when the file could not even be stat'ed
    digest: str | None = None
    reason: str | None = None
    included_bytes: int | None = None
    target: str | None = None  # the real path, when reached through a symlink


@attrs.define
class TruncatedFile:
    path: str
    original_bytes: int
    included_bytes: int


@attrs.define
class PreviewResult:
    text: str
    files: list[ScopeFile]
    omitted: list[str]
    truncated: list[TruncatedFile]
    baseline_identity: str
    project_root: str


@attrs.define
class SessionScopes:
    session_id: str
    active: list[JsonObject]


@attrs.define
class ScopesResult:
    project_root: str
    directory: str
    files: list[ScopeFile]
    sessions: list[SessionScopes]


@attrs.define
class CandidateWire:
    session_id: str
    label: str
    created_at: int
    mention: str
    cwd: str | None = None


@attrs.define
class CandidatesResult:
    candidates: list[CandidateWire]


@attrs.define
class ContextDidChangeParams:
    session_id: str
    pending_count: int


@attrs.define
class DshCapabilities:
    protocol_version: int
    methods: list[str]

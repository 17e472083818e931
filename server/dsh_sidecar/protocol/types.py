"""Wire types of the dsh/ methods (docs/protocol.md, Sessions through Session references): attrs classes, camelCased on the wire.

Results are encoded by ``protocol.encode.to_json``: an optional field (one with a default) is left
out when it has no value, a required one is always sent, as ``null`` if it may have none. Messages, events, sources and changes travel as their JSON objects: they are
durable log data whose exact shape (and key order) the sidecar stores and replays verbatim.
tests/protocol/test_docs_sync.py hashes these classes together with the method table, so a
change here that docs/protocol.md does not follow fails.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

JsonObject = dict[str, Any]


# --- range rules: parsed once at the wire, so the service takes values it can trust ---------------


class RangeError(ValueError):
    """A well-typed value outside its field's range; ``field`` is the wire (camelCase) name."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _wire_name(attribute: attrs.Attribute[Any]) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), attribute.name)


def _positive(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 1:
        raise RangeError(_wire_name(attribute), f"must be a positive integer, got {value}")


def _non_negative(_: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if value < 0:
        raise RangeError(_wire_name(attribute), f"must be a non-negative integer, got {value}")


def _non_empty(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value:
        raise RangeError(_wire_name(attribute), "must be a non-empty string")


# --- params -------------------------------------------------------------------------------------


@attrs.define
class SessionOpenParams:
    cwd: str
    session_id: str | None = attrs.field(default=None, validator=_non_empty)
    title: str | None = None


@attrs.define
class SessionIdParams:
    session_id: str


@attrs.define
class SessionListParams:
    query: str | None = None
    limit: int | None = attrs.field(default=None, validator=_positive)


@attrs.define
class SessionEventsParams:
    session_id: str
    after_seq: int | None = None  # any integer: below 0 reads from the start
    limit: int | None = attrs.field(default=None, validator=_positive)


@attrs.define
class SessionAppendParams:
    session_id: str
    events: list[Any]


@attrs.define
class SessionCompactParams:
    session_id: str
    start: int = attrs.field(validator=_non_negative)
    end: int = attrs.field(validator=_non_negative)
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
    turn: int = attrs.field(validator=_positive)
    step: int = attrs.field(validator=_positive)
    prompt: PromptParams | None = None


@attrs.define
class StepEndParams:
    session_id: str
    turn: int = attrs.field(validator=_positive)
    step: int = attrs.field(validator=_positive)


@attrs.define
class TurnEndParams:
    session_id: str
    turn: int = attrs.field(validator=_positive)
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
class ContextDiscardParams:
    session_id: str
    message_id: str
    scopes: list[str] | None = None


@attrs.define
class ContextPreviewParams:
    cwd: str
    compact_paths: bool = False  # docs/protocol.md, "Compact paths"


@attrs.define
class ScopesParams:
    uri: str
    compact_paths: bool = False  # docs/protocol.md, "Compact paths"


@attrs.define
class ExplainParams:
    uri: str
    cwd: str | None = None


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
    # A session an agent's hooks drive: the agent, its own session id, a subagent's parent.
    agent: str | None = None
    agent_session: str | None = None
    parent_id: str | None = None


@attrs.define
class SessionOpenResult:
    session: SessionHeaderWire
    resumed: bool


@attrs.define
class SessionListResult:
    sessions: list[SessionHeaderWire]
    # Session id -> touches its agent's hooks kept while the store was busy (sessions/spool.py),
    # not yet projected; only listed sessions that have some. Always sent.
    waiting_touches: dict[str, int]


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
class ImportedFile:
    """One ``@path`` import met while loading a file (instructions.imports)."""

    path: str
    display_path: str
    importer: str  # the file holding the @path
    state: str
    depth: int  # 1: imported by the instruction file itself
    bytes: int | None = None
    reason: str | None = None
    target: str | None = None


@attrs.define
class RuleInfo:
    """What a path-scoped rule file applies to (instructions.ruleSets)."""

    rule_set: str
    mode: str  # "always" | "globs" | "manual" | "invalid"
    globs: list[str]


@attrs.define(kw_only=True)
class ScopeFile:
    # Always set, except in an answer asked with ``compactPaths`` where the client can work
    # them out from ``scope`` and the answer's ``projectRoot`` (docs/protocol.md, "Compact
    # paths"). Keyword-only, so they keep their place first though they may be left out.
    path: str | None = None
    display_path: str | None = None
    scope: str
    state: str
    bytes: int | None  # always sent, null when the file could not even be stat'ed
    digest: str | None = None
    reason: str | None = None
    included_bytes: int | None = None
    target: str | None = None  # the real path, when reached through a symlink
    imports: list[ImportedFile] | None = None  # only when something was imported or refused
    rule: RuleInfo | None = None  # only for a rule file


@attrs.define
class TruncatedFile:
    path: str
    original_bytes: int
    included_bytes: int


@attrs.define
class NotReadFiles:
    """Instruction files on the chain that the current settings do not read (one convention)."""

    agent: str
    effect: str
    paths: list[str]
    enable: str
    setting: str | None = None  # left out when no setting reads them


@attrs.define
class PreviewResult:
    text: str
    files: list[ScopeFile]
    omitted: list[str]
    truncated: list[TruncatedFile]
    baseline_identity: str
    project_root: str
    not_read: list[NotReadFiles] | None = None  # left out when empty


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
    not_read: list[NotReadFiles] | None = None  # left out when empty


@attrs.define
class ExplainSidecarFile:
    path: str
    display_path: str
    scope: str
    state: str
    bytes: int | None = None  # left out only when the file could not even be stat'ed
    via: str | None = None
    included_bytes: int | None = None
    digest: str | None = None
    reason: str | None = None


@attrs.define
class ExplainSidecar:
    files: list[ExplainSidecarFile]
    max_bytes: float | None = None  # left out when not finite


@attrs.define
class ExplainAgentFile:
    path: str
    display_path: str
    kind: str
    state: str
    bytes: int | None = None
    kept_bytes: int | None = None
    sent_bytes: int | None = None
    when: str | None = None
    reason: str | None = None
    # Why the sidecar will not read or send this file (its trust boundary); the state is the
    # agent's own behaviour.
    boundary: str | None = None


@attrs.define
class ExplainDifference:
    path: str
    display_path: str
    reason: str


@attrs.define
class ExplainSizeLimit:
    setting: str
    bytes: int
    cut: str


@attrs.define
class ExplainVerified:
    version: str
    package: str


@attrs.define
class ExplainSource:
    url: str
    checked: str


@attrs.define
class ExplainAgent:
    id: str
    name: str
    working_directory: str
    order: str
    files: list[ExplainAgentFile]
    only_agent: list[ExplainDifference]
    only_sidecar: list[ExplainDifference]
    sources: list[ExplainSource]
    undocumented: list[str]
    size_limit: ExplainSizeLimit | None = None
    verified: ExplainVerified | None = None


@attrs.define
class ExplainResult:
    file: str
    cwd: str
    project_root: str
    sidecar: ExplainSidecar
    agents: list[ExplainAgent]


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

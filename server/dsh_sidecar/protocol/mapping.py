"""Domain objects to wire types: what ``dsh/context/preview``, ``dsh/scopes`` and the CLI's
``preview --json`` / ``scopes --json`` say about a chain, in one place.

Inputs are plain values (a ``BaselineLoad``, a project root and directory, the active changes
per session) so that neither the CLI nor the LSP layer has its own idea of a file's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from dsh_sidecar.identity_memo import IdentityMemo
from dsh_sidecar.model import Message, SessionHeader
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, ChainEntry
from dsh_sidecar.sources.agent_instructions.imports import ImportRecord
from dsh_sidecar.sources.agent_instructions.paths import split_scope
from dsh_sidecar.sources.agent_instructions.rules import Applicability
from dsh_sidecar.sources.agent_instructions.state import Change
from dsh_sidecar.sources.agent_instructions.usage import OffConvention
from dsh_sidecar.sources.session_reference.resolver import Candidate

from .encode import encoded
from .types import (
    CandidateWire,
    ImportedFile,
    NotReadFiles,
    PendingResult,
    PreviewResult,
    RuleInfo,
    ScopeFile,
    ScopesResult,
    SessionHeaderWire,
    SessionScopes,
    TruncatedFile,
)

# Each message's JSON, encoded once while the message lives. A pending message is sent with
# every ``dsh/context/pending`` until a step claims it, and re-encoding its text was most of that
# answer's cost.
_MESSAGES: IdentityMemo[dict[str, Any]] = IdentityMemo()


def message_json(message: Message) -> dict[str, Any]:
    """``message.to_json()``, carrying its encoding (``encode.Encoded``)."""
    value = _MESSAGES.get(message)
    if value is None:
        value = encoded(message.to_json())
        _MESSAGES.put(message, value)
    return value


def pending_result(messages: Sequence[Message]) -> PendingResult:
    """``dsh/context/pending`` and ``dsh/context/discard``: the inbox, in order."""
    return PendingResult([message_json(m) for m in messages])


def header(h: SessionHeader) -> SessionHeaderWire:
    return SessionHeaderWire(
        id=h.id,
        created_at=h.created_at,
        cwd=h.cwd,
        title=h.title,
        agent=h.agent,
        agent_session=h.agent_session,
        parent_id=h.parent_id,
    )


def candidate(c: Candidate) -> CandidateWire:
    return CandidateWire(
        session_id=c.session_id,
        label=c.label,
        created_at=c.created_at,
        mention=c.mention,
        cwd=c.cwd,
    )


def imported_file(record: ImportRecord) -> ImportedFile:
    return ImportedFile(
        path=record.path,
        display_path=record.display,
        importer=record.importer,
        state=record.state,
        depth=record.depth,
        bytes=record.bytes,
        reason=record.reason,
        target=record.target,
    )


def rule_info(rule_set: str, applies: Applicability) -> RuleInfo:
    return RuleInfo(rule_set=rule_set, mode=applies.mode, globs=list(applies.globs))


def scope_file(entry: ChainEntry) -> ScopeFile:
    cand = entry.candidate
    # The real path only when it says something: the file is reached through a symlink.
    target = entry.target if entry.target is not None and entry.target != cand.abs_path else None
    rule = None
    reason = entry.reason
    if cand.rule_set is not None and entry.applies is not None:
        rule = rule_info(cand.rule_set, entry.applies)
        # A list bound is said where the file is listed, never a silent cut.
        reason = reason or entry.applies.limit_note()
    return ScopeFile(
        path=cand.abs_path,
        display_path=cand.display_path,
        scope=cand.scope,
        state=entry.state,
        bytes=entry.bytes,  # None only when the file could not even be stat'ed
        digest=entry.digest,
        reason=reason,
        included_bytes=entry.included_bytes,
        target=target,
        imports=[imported_file(r) for r in entry.imports] or None,
        rule=rule,
    )


def scope_files(load: BaselineLoad) -> list[ScopeFile]:
    return [scope_file(e) for e in load.entries]


def scope_display_path(scope: str) -> str:
    """The display path a scope key names: its directory joined with its name ("." is the
    project root). A client works it out the same way (docs/protocol.md, "Compact paths")."""
    directory, name = split_scope(scope)
    return name if directory == "." else f"{directory}/{name}"


def compact_file(file: ScopeFile, project_root: str) -> ScopeFile:
    """``file`` without the paths a client can work out. Each is left out only when the
    client's rule gives it back exactly, so the rule needs no exceptions: the user-global file,
    a file outside the project or a root of ``/`` simply keep theirs."""
    display = file.display_path
    return attrs.evolve(
        file,
        path=None if file.path == f"{project_root}/{display}" else file.path,
        display_path=None if display == scope_display_path(file.scope) else display,
    )


def with_compact_paths(files: Sequence[ScopeFile], project_root: str) -> list[ScopeFile]:
    """A chain's files as an answer asked with ``compactPaths`` lists them.

    Every file of a chain carries its path three times (``path``, ``displayPath``, ``scope``),
    each as long as the chain is deep, so the answer for a chain a thousand levels deep was
    megabytes that every client copied, decoded and dropped; compact, it carries each path once.
    """
    return [compact_file(f, project_root) for f in files]


def not_read_files(found: Sequence[OffConvention]) -> list[NotReadFiles] | None:
    """The repository's conventions whose setting is off, for the wire; None when there is none."""
    out = [
        NotReadFiles(c.agent, c.effect, list(c.paths), c.enable, c.setting or None)
        for c in found
        if c.in_project
    ]
    return out or None


def preview_result(
    load: BaselineLoad, not_read: Sequence[OffConvention] = (), *, compact_paths: bool = False
) -> PreviewResult:
    files = scope_files(load)
    return PreviewResult(
        text=load.text,
        files=with_compact_paths(files, load.project_root) if compact_paths else files,
        omitted=list(load.result.omitted),
        truncated=[
            TruncatedFile(t.path, t.original_bytes, t.included_bytes) for t in load.result.truncated
        ],
        baseline_identity=load.identity,
        project_root=load.project_root,
        not_read=not_read_files(not_read),
    )


def scopes_result(
    project_root: str,
    directory: str,
    load: BaselineLoad,
    active: Mapping[str, Sequence[Change]],
    not_read: Sequence[OffConvention] = (),
    *,
    compact_paths: bool = False,
) -> ScopesResult:
    """``active``: session id -> the changes it has active for the chain's scopes."""
    sessions = [
        SessionScopes(sid, [c.to_json() for c in changes]) for sid, changes in active.items()
    ]
    files = scope_files(load)
    return ScopesResult(
        project_root,
        directory,
        with_compact_paths(files, project_root) if compact_paths else files,
        sessions,
        not_read_files(not_read),
    )

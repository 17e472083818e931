"""Conversions from domain objects to wire types."""

from __future__ import annotations

from dsh_sidecar.model import SessionHeader
from dsh_sidecar.protocol.types import (
    CandidateWire,
    PreviewResult,
    ScopeFile,
    SessionHeaderWire,
    TruncatedFile,
)
from dsh_sidecar.sessions.service import ScopesReport
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, ChainEntry
from dsh_sidecar.sources.session_reference.resolver import Candidate


def header(h: SessionHeader) -> SessionHeaderWire:
    return SessionHeaderWire(id=h.id, created_at=h.created_at, cwd=h.cwd, title=h.title)


def scope_file(entry: ChainEntry) -> ScopeFile:
    return ScopeFile(
        path=entry.candidate.abs_path,
        display_path=entry.candidate.display_path,
        scope=entry.candidate.scope,
        state=entry.state,
        bytes=entry.bytes or 0,
        digest=entry.digest,
        reason=entry.reason,
        included_bytes=entry.included_bytes,
    )


def preview(load: BaselineLoad) -> PreviewResult:
    return PreviewResult(
        text=load.text,
        files=[scope_file(e) for e in load.entries],
        omitted=list(load.result.omitted),
        truncated=[
            TruncatedFile(t.path, t.original_bytes, t.included_bytes) for t in load.result.truncated
        ],
        baseline_identity=load.identity,
        project_root=load.project_root,
    )


def candidate(c: Candidate) -> CandidateWire:
    return CandidateWire(
        session_id=c.session_id,
        label=c.label,
        created_at=c.created_at,
        mention=c.mention,
        cwd=c.cwd,
    )


def scopes_files(report: ScopesReport) -> list[ScopeFile]:
    return [scope_file(e) for e in report.load.entries]

"""The ``dsh/context/*`` requests, ``dsh/scopes``, ``dsh/explain`` and session-reference
candidates: commands go to the session service, the read-only ones to ``queries/``."""

from __future__ import annotations

from dsh_sidecar.protocol import mapping as wire
from dsh_sidecar.protocol import requests
from dsh_sidecar.protocol import types as wt

from .base import Server, request


def register(server: Server) -> None:
    async def pending(p: wt.SessionIdParams) -> wt.PendingResult:
        return wire.pending_result(await server.service.pending(p.session_id))

    async def discard(p: wt.ContextDiscardParams) -> wt.PendingResult:
        return wire.pending_result(
            await server.service.discard(p.session_id, p.message_id, p.scopes)
        )

    async def preview(p: wt.ContextPreviewParams) -> wt.PreviewResult:
        return await server.queries.preview_result(p.cwd, p.compact_paths)

    async def scopes(p: wt.ScopesParams) -> wt.ScopesResult:
        return await server.queries.scopes_result(p.uri, p.compact_paths)

    async def explain_(p: wt.ExplainParams) -> wt.ExplainResult:
        found = await server.queries.explain(p.uri, p.cwd)
        # Structured from its JSON form, so the request and `explain --json` share one mapping.
        return server.convert(found.to_json(), wt.ExplainResult)

    async def candidates(p: wt.CandidatesParams) -> wt.CandidatesResult:
        found = await server.queries.candidates(p.session_id, p.query)
        return wt.CandidatesResult([wire.candidate(c) for c in found])

    request(server, requests.CONTEXT_PENDING, pending)
    request(server, requests.CONTEXT_DISCARD, discard)
    request(server, requests.CONTEXT_PREVIEW, preview)
    request(server, requests.SCOPES, scopes)
    request(server, requests.EXPLAIN, explain_)
    request(server, requests.SESSION_REFERENCE_CANDIDATES, candidates)

"""``dsh/sessionReference/candidates``: the sessions a prompt may reference (blocking)."""

from __future__ import annotations

from dsh_sidecar.config import SessionReferenceSettings
from dsh_sidecar.model import SessionHeader
from dsh_sidecar.sessions.store import Store
from dsh_sidecar.sources.session_reference import resolver


def candidates(
    store: Store, target: SessionHeader, settings: SessionReferenceSettings, query: str
) -> list[resolver.Candidate]:
    headers = store.list_sessions()
    return resolver.list_candidates(
        target_id=target.id, target_cwd=target.cwd, query=query,
        limit=settings.candidate_limit, sessions=headers, titles={h.id: h.title for h in headers},
    )  # fmt: skip

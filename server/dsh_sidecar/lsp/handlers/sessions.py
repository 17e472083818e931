"""The ``dsh/session/*`` requests: a call into the session service, its answer as wire types."""

from __future__ import annotations

from dsh_sidecar.protocol import mapping as wire
from dsh_sidecar.protocol import requests
from dsh_sidecar.protocol import types as wt

from .base import Server, request


def register(server: Server) -> None:
    async def open_(p: wt.SessionOpenParams) -> wt.SessionOpenResult:
        header, resumed = await server.service.open_session(p.cwd, p.session_id, p.title)
        return wt.SessionOpenResult(wire.header(header), resumed)

    async def close(p: wt.SessionIdParams) -> None:
        await server.service.close_session(p.session_id)

    async def list_(p: wt.SessionListParams) -> wt.SessionListResult:
        headers = await server.service.list_sessions(p.query, p.limit)
        waiting = await server.service.waiting_touches([h.id for h in headers])
        return wt.SessionListResult([wire.header(h) for h in headers], waiting)

    async def surface(p: wt.SessionIdParams) -> wt.SurfaceResult:
        snap = await server.service.surface(p.session_id)
        return wt.SurfaceResult(
            wire.header(snap.session), snap.captured_through_seq, [e.to_json() for e in snap.events]
        )

    async def events(p: wt.SessionEventsParams) -> wt.EventsResult:
        found = await server.service.events(p.session_id, p.after_seq, p.limit)
        return wt.EventsResult([e.to_json() for e in found])

    async def append(p: wt.SessionAppendParams) -> wt.AppendResult:
        return wt.AppendResult(await server.service.append(p.session_id, p.events))

    async def compact(p: wt.SessionCompactParams) -> wt.CompactResult:
        seq = await server.service.compact(p.session_id, p.start, p.end, p.summary, p.compaction_id)
        return wt.CompactResult(seq)

    request(server, requests.SESSION_OPEN, open_)
    request(server, requests.SESSION_CLOSE, close)
    request(server, requests.SESSION_LIST, list_)
    request(server, requests.SESSION_SURFACE, surface)
    request(server, requests.SESSION_EVENTS, events)
    request(server, requests.SESSION_APPEND, append)
    request(server, requests.SESSION_COMPACT, compact)

    async def delete(p: wt.SessionIdParams) -> None:
        await server.service.delete_session(p.session_id)

    request(server, requests.SESSION_DELETE, delete)

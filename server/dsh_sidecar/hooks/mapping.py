"""One durable session per agent session: ``<agent>:<session_id>``, a subagent's a child of it."""

from __future__ import annotations

from dsh_sidecar.model import SessionHeader
from dsh_sidecar.sessions.store import Store

from .event import HookEvent


def session_id_of(agent: str, session: str, subagent: str | None = None) -> str:
    base = f"{agent}:{session}"
    return base if subagent is None else f"{base}:{subagent}"


def open_session(
    store: Store, event: HookEvent, cwd: str, now_ms: int
) -> tuple[SessionHeader, bool]:
    """The event's session, created on its first event (cwd: the hook's); ``(header, resumed)``.

    A subagent's events get a child session (its own baseline at its start), and its parent is
    created first if the subagent spoke before the main session did.
    """
    parent_id = session_id_of(event.agent, event.session_id)
    parent, resumed = store.open_or_create(
        SessionHeader(parent_id, now_ms, cwd, agent=event.agent, agent_session=event.session_id)
    )
    if event.agent_id is None:
        return parent, resumed
    child = SessionHeader(
        session_id_of(event.agent, event.session_id, event.agent_id),
        now_ms,
        cwd,
        title=event.agent_type,
        agent=event.agent,
        agent_session=event.session_id,
        parent_id=parent_id,
    )
    return store.open_or_create(child)

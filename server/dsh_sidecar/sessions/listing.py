"""``dsh-sidecar sessions``: every stored session with its agent, what it was told, what is due.

Read from the store without writing (``readonly``), so it lists the sessions of every process
sharing the store (editors, chat panels, agents' hooks) and never creates a store.

- *told*: the instruction files the session's log says the model has in effect (each file's
  latest visible change, removals left out), as ``dsh/scopes`` counts them;
- *pending*: the session's inbox, exactly what its next step (or its agent's next hook event)
  would deliver first, and the touches its hooks kept while the store was busy (``spool``),
  which that event projects first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dsh_sidecar.model import JsonObject, Message, SessionHeader
from dsh_sidecar.sources.agent_instructions.state import Change, changes_of

from .readonly import StoreReader, open_reader
from .spool import Spool, waiting_paths


@dataclass(frozen=True)
class StoredSession:
    header: SessionHeader
    told: list[Change]
    pending: list[Message]
    waiting: list[str] = field(default_factory=list)  # spooled touches, not yet projected

    def to_json(self) -> JsonObject:
        out = self.header.to_json()
        out["told"] = [c.to_json() for c in self.told]
        out["pending"] = [m.to_json() for m in self.pending]
        out["waitingTouches"] = list(self.waiting)
        return out


def list_stored_sessions(
    store: str, agent: str | None = None, spool: Spool | None = None
) -> list[StoredSession] | None:
    """The sessions of the store at ``store``, newest first (None when there is no store yet),
    with the touches ``spool`` keeps for each."""
    reader = open_reader(store)
    if reader is None:
        return None
    with reader:
        return [
            StoredSession(
                header,
                reader.instructions_in_effect(header.id),
                reader.inbox(header.id),
                _waiting(reader, spool, header.id) if spool is not None else [],
            )
            for header in reader.list_sessions()
            if agent is None or header.agent == agent
        ]


def waiting_touches(store: str, spool: Spool) -> tuple[dict[str, list[str]], list[str]]:
    """The sessions of ``store`` for which ``spool`` keeps touches, with those touches; and the
    touches kept for sessions the store does not hold (yet)."""
    reader = open_reader(store)
    if reader is None:
        return {}, waiting_paths(spool.unowned(()), lambda keys: set())
    with reader:
        ids = [h.id for h in reader.list_sessions()]
        found = {sid: _waiting(reader, spool, sid) for sid in ids}
    unowned = waiting_paths(spool.unowned(ids), lambda keys: set())
    return {sid: paths for sid, paths in found.items() if paths}, unowned


def _waiting(reader: StoreReader, spool: Spool, session_id: str) -> list[str]:
    return waiting_paths(spool.read(session_id), lambda keys: reader.answered(session_id, keys))


def session_lines(session: StoredSession) -> list[str]:
    """The session's lines for a terminal: a heading, then what it was told and what is due."""
    header = session.header
    created = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(header.created_at / 1000))
    head = f"{header.id}  {header.agent or 'panel'}  {created}  {header.cwd}"
    lines = [head]
    if header.parent_id is not None:
        lines.append(f"  subagent of {header.parent_id}")
    if header.title:
        lines.append(f"  title    {header.title}")
    told = ", ".join(c.path for c in session.told)
    lines.append(f"  told     {told or 'no instruction files'}")
    due = [describe_pending(session.pending), describe_waiting(len(session.waiting))]
    lines.append(f"  pending  {'; '.join(d for d in due if d) or 'nothing'}")
    return lines


def describe_waiting(count: int) -> str:
    """Spooled touches, said as what they are: the instructions they bring are not known yet."""
    if not count:
        return ""
    return f"{count} touch{'es' if count != 1 else ''} waiting"


def describe_pending(messages: list[Message]) -> str:
    """One short phrase per pending message: the instruction files it sets or removes, else
    the source that made it."""
    parts = []
    for message in messages:
        changes = changes_of(message)
        if changes:
            parts.append(
                ", ".join(
                    c.path if c.action != "remove" else f"{c.path} (removed)" for c in changes
                )
            )
        else:
            kind = message.source.get("kind")
            parts.append(str(kind) if isinstance(kind, str) else "a message")
    return "; ".join(parts)

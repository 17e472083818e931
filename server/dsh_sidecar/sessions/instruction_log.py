"""Agent-instructions state as the log records it: the visible messages and what they leave active."""

from __future__ import annotations

from collections.abc import Mapping

from dsh_sidecar.model import Message
from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND, Change, effective_changes

from .snapshot import frozen_changes
from .store import Store


def visible_instructions(store: Store, session_id: str) -> list[Message]:
    """The session's surface-visible agent-instructions messages, in log order."""
    out = []
    for event in store.visible_events_of_source(session_id, SOURCE_KIND):
        message = event.message()
        if message is not None:
            out.append(message)
    return out


def effective_state(
    visible: list[Message], entered: tuple[Message, ...] = ()
) -> Mapping[str, Change]:
    """The latest change per scope after ``visible`` and then ``entered``, frozen for sharing."""
    return frozen_changes(effective_changes(visible, entered))

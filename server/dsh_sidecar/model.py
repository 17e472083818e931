"""Domain value types shared by sources, sessions and the wire layer.

Messages and events keep their JSON shape (``content`` blocks and ``source`` objects stay plain
dicts) because upstream compares payloads by deep equality and stores them verbatim in the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

JsonObject = dict[str, Any]

USER_MESSAGE = "user/message"
ASSISTANT_MESSAGE = "assistant/message"
TOOL_RESULT = "tool/result"
TURN_START = "turn/start"
TURN_END = "turn/end"
STEP_START = "step/start"
STEP_END = "step/end"
INBOX_SPLICED = "agent/inbox/spliced"
# The user dropped pending context (dsh/context/discard): which changes, so they stay dropped.
INBOX_DISCARDED = "agent/inbox/discarded"
SESSION_TITLE = "session/title"

SURFACE_EVENT_TYPES = frozenset({USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT})


def new_message_id() -> str:
    # Imported here: the uuid module costs a one-shot ``dsh-sidecar hook`` process ~10 ms at
    # start-up, and most of its events make no message.
    import uuid

    return str(uuid.uuid4())


@attrs.frozen
class Message:
    """A model-visible message: ``{id, role, content: [blocks], source}``."""

    id: str
    role: Literal["user", "assistant"]
    content: tuple[JsonObject, ...]
    source: JsonObject

    @classmethod
    def user(cls, texts: Sequence[str], source: Mapping[str, Any]) -> Message:
        """A fresh user-role message with one text block per entry of ``texts``."""
        blocks = tuple({"type": "text", "text": t} for t in texts)
        return cls(id=new_message_id(), role="user", content=blocks, source=dict(source))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        return cls(
            id=str(data["id"]),
            role=data["role"],
            content=tuple(dict(b) for b in data["content"]),
            source=dict(data["source"]),
        )

    def to_json(self) -> JsonObject:
        return {
            "id": self.id,
            "role": self.role,
            "content": [dict(b) for b in self.content],
            "source": dict(self.source),
        }

    @property
    def text(self) -> str:
        """All text blocks joined with a newline."""
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text")

    def same_payload(self, other: Message) -> bool:
        """Upstream's "same payload": deep-equal content and source, ids ignored."""
        return list(self.content) == list(other.content) and self.source == other.source


SurfaceOp = Literal["append"] | JsonObject


@attrs.frozen
class Event:
    """One entry of a session's append-only log."""

    seq: int
    type: str
    time: int
    data: JsonObject
    surface_op: SurfaceOp | None = None
    source_event_seqs: tuple[int, ...] | None = None

    @property
    def is_surface(self) -> bool:
        return self.type in SURFACE_EVENT_TYPES and self.surface_op is not None

    def message(self) -> Message | None:
        """The message a surface event carries (``user/message`` data is the message itself)."""
        try:
            if self.type == USER_MESSAGE:
                return Message.from_json(self.data)
            if self.type in (ASSISTANT_MESSAGE, TOOL_RESULT):
                return Message.from_json(self.data["message"])
        except (KeyError, TypeError, ValueError):
            return None
        return None

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": self.type, "seq": self.seq, "time": self.time, "data": self.data}
        if self.surface_op is not None:
            out["surfaceOp"] = self.surface_op
        if self.source_event_seqs is not None:
            out["sourceEventSeqs"] = list(self.source_event_seqs)
        return out


@attrs.frozen
class SessionHeader:
    id: str
    created_at: int
    cwd: str
    title: str | None = None
    # Sessions an agent's hooks drive (``dsh-sidecar hook``): the agent (``claude``, ``codex``,
    # ``gemini``), that agent's own session id, and for a subagent the session it runs under.
    agent: str | None = None
    agent_session: str | None = None
    parent_id: str | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {"id": self.id, "createdAt": self.created_at, "cwd": self.cwd}
        if self.title is not None:
            out["title"] = self.title
        if self.agent is not None:
            out["agent"] = self.agent
        if self.agent_session is not None:
            out["agentSession"] = self.agent_session
        if self.parent_id is not None:
            out["parentId"] = self.parent_id
        return out


@attrs.frozen
class SurfaceSnapshot:
    """``readSurface``: the header, the last raw seq, and the visible surface events in order."""

    session: SessionHeader
    captured_through_seq: int | None
    events: tuple[Event, ...]

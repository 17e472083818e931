"""The neutral hook event every agent's payload is read into (``adapter.py``)."""

from __future__ import annotations

from typing import Literal

import attrs

from dsh_sidecar.sessions.spool import RESETS

# An agent's one id, as its record and the registry name it (dsh_sidecar/agents/registry.py).
Agent = str

# start: a session (re)starts (source startup/resume/clear/compact); prompt: the user's prompt is
# about to go to the model; after-tool: a tool finished (touched paths); pre-tool: a tool is
# about to run (the paths it will write); loaded: the agent reports instruction files it loaded
# itself (agents/record.py, ``SEAM_KINDS``).
Kind = Literal["start", "prompt", "after-tool", "pre-tool", "loaded", "other"]

# The sources of a start after which the agent's context no longer holds what the hooks gave it
# (all of it, or for a resume, what its record says a resume drops): ``answer.EventRun``
# shadows it and gives it again, or the next event does (the spool keeps the reset).
CONTEXT_RESETS = RESETS


@attrs.frozen
class HookEvent:
    agent: Agent
    kind: Kind
    name: str  # the agent's own event name, echoed as ``hookEventName``
    session_id: str
    cwd: str
    source: str | None = None  # SessionStart: startup, resume, clear, compact
    prompt: str | None = None
    touched: tuple[str, ...] = ()  # absolute paths
    # Those of ``touched`` after which the agent loads no instruction file itself (a shell
    # command, a search, a listing): the model of what it loads natively is not asked about them.
    scanned: frozenset[str] = frozenset()
    tool_use_id: str | None = None
    # A subagent's events (Claude Code: ``agent_id``/``agent_type``).
    agent_id: str | None = None
    agent_type: str | None = None
    # The agent begins to compact its history and shows this event's text to no model
    # (``Hooks.compact_event``); ``trigger``: what began it (auto, manual), when it says.
    compacting: bool = False
    trigger: str | None = None

    @property
    def context_reset(self) -> str | None:
        """The reset of the agent's context this event reports (a start's source), or None."""
        return self.source if self.kind == "start" and self.source in CONTEXT_RESETS else None

    @property
    def answer_key(self) -> str | None:
        """The key a tool event is remembered by once answered (``hook_events``): the same
        tool-use id again, a retried hook, is answered once. None: not remembered."""
        return f"{self.kind}:{self.tool_use_id}" if self.tool_use_id else None

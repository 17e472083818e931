"""The loop-side state of one open session.

Only code running on the event loop reads or changes a ``LiveSession``. Workers get frozen
values instead (``LiveView`` in a ``Snapshot``, or a job object), with one deliberate exception:
``instructions``, the session's in-memory accelerator, is lent to the one worker that holds
``lock`` (a step or a projection); the loop never looks inside it and only ever replaces it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import attrs

from dsh_sidecar.model import Message, SessionHeader
from dsh_sidecar.sources.agent_instructions.compose import SessionInstructionState
from dsh_sidecar.sources.agent_instructions.state import Change

from .snapshot import NO_CHANGES, LiveView
from .touches.gate import ExecutionTouches
from .touches.projection import ProjectionMemo, Touched
from .touches.queue import ProjectionQueue


@attrs.define(eq=False)
class LiveSession:
    header: SessionHeader
    # Serializes this session's steps, appends, compactions and projections.
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    instructions: SessionInstructionState = attrs.field(factory=SessionInstructionState)
    open_step: tuple[int, int] | None = None
    staged: list[Touched] = attrs.field(factory=list)
    # Tool-call tokens are the client's, so they are only unique within a session: two panels
    # numbering their calls alike must not hand each other a child's staged touches.
    executions: ExecutionTouches = attrs.field(factory=ExecutionTouches)
    projections: ProjectionQueue = attrs.field(factory=ProjectionQueue)
    project_root: str | None = None
    # What the model has seen, kept from the session's own writes (log events never change),
    # so hover and scopes answer without reading the store.
    effective: Mapping[str, Change] = NO_CHANGES
    # Transitions the user dropped from the pending context and that still hold (discard.py).
    dismissed: Mapping[str, Change] = NO_CHANGES
    # The next-step inbox as this process last wrote or read it (None: read it from the store),
    # so ``dsh/context/pending`` answers from memory. Like ``effective``, kept from the session's
    # own writes: a live session's inbox is written by the process it is live in.
    inbox: tuple[Message, ...] | None = None
    # Bumped whenever the visible agent-instructions messages may have changed (a step, an
    # append, a compaction): one of the inputs a kept projection rests on.
    visible_gen: int = 0
    # The surface-visible agent-instructions messages as of generation ``[0]``, when a resume
    # or a compaction has just read them: the next step or projection uses them instead of
    # reading them again. Dropped by the next step (which changes them): kept for good, every
    # live session would hold all its instruction text (docs/benchmarks.md, Memory).
    visible: tuple[int, tuple[Message, ...]] | None = None
    projection_memo: ProjectionMemo = attrs.field(factory=ProjectionMemo)

    def kept_visible(self) -> tuple[Message, ...] | None:
        """The visible instruction messages when what was kept is still current, else None."""
        kept = self.visible
        return kept[1] if kept is not None and kept[0] == self.visible_gen else None

    def view(self) -> LiveView:
        header = self.header
        return LiveView(header.id, header.cwd, self.effective, header.agent, header.created_at)

    def forget_caches(self) -> None:
        """Start the accelerators afresh, as a restarted process would (settings change, re-open)."""
        self.instructions = SessionInstructionState()
        self.projection_memo = ProjectionMemo()
        self.project_root = None
        self.inbox = None
        self.visible = None

"""The pre-step pipeline of ``dsh/step/prepare`` (docs/protocol.md#dshstepprepare, step 3).

Upstream's listeners each delegate downstream first and post-process the result, so the innermost
one acts first. Listed outermost first the chain is session-reference, agent-instructions,
time-context, tmux-context; we therefore apply tmux (prepends its reading), time (appends its
reading), agent-instructions (inserts after the last claimed message) and finally
session-reference (inserts each snapshot right after the message that cites it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from dsh_sidecar.config import Settings
from dsh_sidecar.model import Event, Message, SurfaceSnapshot
from dsh_sidecar.sources.agent_instructions.compose import (
    ComposeEnv,
    SessionInstructionState,
    compose,
    sync_inbox,
)
from dsh_sidecar.sources.agent_instructions.state import Change, is_instructions_message

if TYPE_CHECKING:
    from dsh_sidecar.sources.tmux_context import TmuxLocation

# Only the sources a step actually runs are imported (each where it runs): an agent hook is a
# process per event, and with the defaults a prompt runs none of the readings and, unless it
# mentions a session, no session reference.
MENTION_MARK = "dsh-session:"  # every session mention holds it (session_reference/uri.py)


@attrs.frozen
class StepInputs:
    session_id: str
    turn: int
    step: int
    claimed: tuple[Message, ...]
    visible_instructions: tuple[Message, ...]
    time_events: tuple[Event, ...]
    tmux_events: tuple[Event, ...]
    now_ms: int


@attrs.frozen
class StepOutcome:
    batch: tuple[Message, ...]
    inbox: tuple[Message, ...]


@attrs.frozen
class SourceHooks:
    """What the pipeline needs from its host beyond the inputs."""

    compose_env: ComposeEnv
    instruction_state: SessionInstructionState
    read_surface: Callable[[str], SurfaceSnapshot]
    tmux_query: Callable[[], TmuxLocation | None]
    fallback_zone: Callable[[], str]
    warn: Callable[[str], None]
    # Transitions the user dropped from the pending context, by scope (never offered again).
    dismissed: Mapping[str, Change] = attrs.field(factory=dict)


def run_pre_step(inputs: StepInputs, settings: Settings, hooks: SourceHooks) -> StepOutcome:
    """The final batch and the inbox left after the step; raises DshError to reject the step."""
    batch = list(inputs.claimed)
    if settings.tmux_context.enabled:
        from dsh_sidecar.sources import tmux_context

        reading = tmux_context.tmux_reading(
            events=inputs.tmux_events,
            turn=inputs.turn,
            step=inputs.step,
            now_ms=inputs.now_ms,
            settings=settings.tmux_context,
            query=hooks.tmux_query,
            warn=hooks.warn,
        )
        if reading is not None:
            batch.insert(0, reading)
    if settings.time_context.enabled:
        from dsh_sidecar.sources import time_context

        reading = time_context.time_reading(
            events=inputs.time_events,
            batch=batch,
            turn=inputs.turn,
            step=inputs.step,
            now_ms=inputs.now_ms,
            settings=settings.time_context,
            fallback_zone=hooks.fallback_zone(),
        )
        if reading is not None:
            batch.append(reading)
    batch, inbox = _agent_instructions(inputs, batch, hooks)
    if settings.session_reference.enabled and _may_mention(batch):
        from dsh_sidecar.sources.session_reference import resolver

        batch = resolver.apply_to_batch(
            target_id=inputs.session_id,
            batch=batch,
            read_surface=hooks.read_surface,
            settings=settings.session_reference,
        )
    return StepOutcome(tuple(batch), tuple(inbox))


def _may_mention(batch: Sequence[Message]) -> bool:
    """Whether a user message of ``batch`` could mention a session; without one the resolver
    returns the batch as it is, so it need not even be loaded."""
    return any(
        MENTION_MARK in block.get("text", "")
        for message in batch
        if message.source.get("kind") == "user"
        for block in message.content
        if isinstance(block.get("text"), str)
    )


def _agent_instructions(
    inputs: StepInputs, batch: list[Message], hooks: SourceHooks
) -> tuple[list[Message], list[Message]]:
    """Upstream's pre-step with the whole inbox already claimed into ``inputs.claimed``.

    docs/reference/agent-instructions.md, Pre-step.
    """
    desired = compose(
        hooks.compose_env,
        hooks.instruction_state,
        visible=inputs.visible_instructions,
        claimed=inputs.claimed,
        pending=(),
        touched=(),
        dismissed=hooks.dismissed,
    )
    if inputs.step == 1 and not batch:
        # Nothing enters at this wake-up: the context stays queued for the next one.
        return batch, sync_inbox((), desired, visible=inputs.visible_instructions)
    if desired is None or any(m.same_payload(desired) for m in batch):
        return batch, []
    claimed_ids = {m.id for m in inputs.claimed}
    anchor = max((i for i, m in enumerate(batch) if m.id in claimed_ids), default=-1)
    return [*batch[: anchor + 1], desired, *batch[anchor + 1 :]], []


def pending_instructions(inbox: Sequence[Message]) -> list[Message]:
    return [m for m in inbox if is_instructions_message(m)]

"""The pre-step pipeline of ``dsh/step/prepare`` (protocol.md §4 step 3).

Upstream's listeners each delegate downstream first and post-process the result, so the innermost
one acts first. Listed outermost first the chain is session-reference, agent-instructions,
time-context, tmux-context; we therefore apply tmux (prepends its reading), time (appends its
reading), agent-instructions (inserts after the last claimed message) and finally
session-reference (inserts each snapshot right after the message that cites it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from dsh_sidecar.config import Settings
from dsh_sidecar.model import Event, Message, SurfaceSnapshot
from dsh_sidecar.sources import time_context, tmux_context
from dsh_sidecar.sources.agent_instructions.compose import (
    ComposeEnv,
    SessionInstructionState,
    compose,
    sync_inbox,
)
from dsh_sidecar.sources.agent_instructions.state import Change, is_instructions_message
from dsh_sidecar.sources.session_reference import resolver


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
    tmux_query: Callable[[], tmux_context.TmuxLocation | None]
    fallback_zone: Callable[[], str]
    warn: Callable[[str], None]
    # Transitions the user dropped from the pending context, by scope (never offered again).
    dismissed: Mapping[str, Change] = attrs.field(factory=dict)


def run_pre_step(inputs: StepInputs, settings: Settings, hooks: SourceHooks) -> StepOutcome:
    """The final batch and the inbox left after the step; raises DshError to reject the step."""
    batch = list(inputs.claimed)
    if settings.tmux_context.enabled:
        reading = tmux_context.tmux_reading(
            events=inputs.tmux_events, turn=inputs.turn, step=inputs.step, now_ms=inputs.now_ms,
            settings=settings.tmux_context, query=hooks.tmux_query, warn=hooks.warn,
        )  # fmt: skip
        if reading is not None:
            batch.insert(0, reading)
    if settings.time_context.enabled:
        reading = time_context.time_reading(
            events=inputs.time_events, batch=batch, turn=inputs.turn, step=inputs.step,
            now_ms=inputs.now_ms, settings=settings.time_context,
            fallback_zone=hooks.fallback_zone(),
        )  # fmt: skip
        if reading is not None:
            batch.append(reading)
    batch, inbox = _agent_instructions(inputs, batch, hooks)
    if settings.session_reference.enabled:
        batch = resolver.apply_to_batch(
            target_id=inputs.session_id, batch=batch, read_surface=hooks.read_surface,
            settings=settings.session_reference,
        )  # fmt: skip
    return StepOutcome(tuple(batch), tuple(inbox))


def _agent_instructions(
    inputs: StepInputs, batch: list[Message], hooks: SourceHooks
) -> tuple[list[Message], list[Message]]:
    """Reference §2.11 with the whole inbox already claimed into ``inputs.claimed``."""
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

"""``dsh/step/prepare``'s blocking part: read the log, run the pre-step pipeline, commit once.

Runs in a store worker while the session lock is held. Everything the step needs comes in a
``StepJob`` (frozen values plus the session's instruction accelerator, which the job owns while
the lock is held); nothing here reads the service's live state. The whole step is computed first
and written in one transaction, and only if nobody cancelled it by then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import attrs

from dsh_sidecar.config import Settings
from dsh_sidecar.model import (
    ASSISTANT_MESSAGE,
    STEP_END,
    STEP_START,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    Message,
    SurfaceSnapshot,
)
from dsh_sidecar.sources import tmux_context
from dsh_sidecar.sources.agent_instructions.state import Change, is_instructions_message

from .inbox import splice_draft
from .instruction_log import effective_state, visible_instructions
from .job import SessionJob
from .pipeline import SourceHooks, StepInputs, run_pre_step
from .store import EventDraft, Store


@attrs.frozen
class PreparedStep:
    messages: tuple[Message, ...]
    seqs: tuple[int, ...]


@attrs.frozen(kw_only=True)
class StepJob(SessionJob):
    turn: int
    step: int
    prompt: Message | None
    settings: Settings
    now_ms: int
    cancelled: threading.Event
    read_surface: Callable[[str], SurfaceSnapshot]
    tmux_query: Callable[[], tmux_context.TmuxLocation | None]
    fallback_zone: Callable[[], str]
    warn: Callable[[str], None]


@attrs.frozen
class StepCommit:
    prepared: PreparedStep
    inbox_changed: bool
    pending_count: int
    inbox: tuple[Message, ...]  # the inbox the step left
    # The session's agent-instructions state once this step's messages are on the surface.
    effective: Mapping[str, Change]
    # The agent-instructions messages this step put in front of the model.
    entered: tuple[Message, ...]


def prepare_step(store: Store, job: StepJob) -> StepCommit | None:
    """Compute and commit one step; None (nothing written) when cancelled meanwhile."""
    sid, turn = job.session_id, job.turn
    settings = job.settings
    inbox = store.inbox(sid)
    claimed = (*inbox, *([job.prompt] if job.prompt is not None else []))
    visible = list(job.visible) if job.visible is not None else visible_instructions(store, sid)
    inputs = StepInputs(
        session_id=sid, turn=turn, step=job.step, claimed=claimed, visible_instructions=tuple(visible),
        time_events=tuple(time_events(store, sid, turn)) if settings.time_context.enabled else (),
        tmux_events=tuple(tmux_events(store, sid)) if settings.tmux_context.enabled else (),
        now_ms=job.now_ms,
    )  # fmt: skip
    hooks = SourceHooks(
        compose_env=job.env, instruction_state=job.instructions,
        read_surface=job.read_surface, tmux_query=job.tmux_query,
        fallback_zone=job.fallback_zone, warn=job.warn, dismissed=job.dismissed,
    )  # fmt: skip
    outcome = run_pre_step(inputs, settings, hooks)
    drafts: list[EventDraft] = []
    if job.step == 1 and not turn_open(store, sid, turn):
        drafts.append(EventDraft(TURN_START, {"turn": turn}))
    drafts.append(EventDraft(STEP_START, {"turn": turn, "step": job.step}))
    drafts.extend(EventDraft(USER_MESSAGE, m.to_json(), "append") for m in outcome.batch)
    splice = splice_draft(inbox, outcome.inbox)
    if splice is not None:
        drafts.append(splice)
    if job.cancelled.is_set():
        return None
    events = store.append(sid, drafts, inbox=outcome.inbox if splice is not None else None)
    seqs = tuple(e.seq for e in events if e.type == USER_MESSAGE)
    entered = tuple(m for m in outcome.batch if is_instructions_message(m))
    return StepCommit(
        PreparedStep(outcome.batch, seqs),
        splice is not None,
        len(outcome.inbox),
        tuple(outcome.inbox),
        effective_state(visible, entered),
        entered,
    )


def open_step_of(store: Store, session_id: str) -> tuple[int, int] | None:
    """The step a resumed session left open (started, neither ended nor closed by its turn)."""
    latest = store.latest_of_types(session_id, (STEP_START, STEP_END, TURN_END))
    if latest is not None and latest.type == STEP_START:
        return int(latest.data["turn"]), int(latest.data["step"])
    return None


def turn_open(store: Store, session_id: str, turn: int) -> bool:
    latest = store.latest_of_types(session_id, (TURN_START, TURN_END))
    return latest is not None and latest.type == TURN_START and latest.data.get("turn") == turn


def time_events(store: Store, session_id: str, turn: int) -> list[Event]:
    """The few raw events the time reading's backward scans can reach, in log order.

    The latest reading, the latest model-visible message, and everything since this turn's
    ``turn/start`` reproduce time-context's scans (docs/sources.md) without loading the whole log.
    """
    picked: dict[int, Event] = {}
    reading = store.latest_of_source(session_id, "plugin", "time-context")
    if reading is not None:
        picked[reading.seq] = reading
    latest_visible = store.latest_of_types(
        session_id, (USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT)
    )
    if latest_visible is not None:
        picked[latest_visible.seq] = latest_visible
    turn_start = store.turn_start(session_id, turn)
    if turn_start is not None:
        for event in store.events_from(session_id, turn_start.seq):
            picked[event.seq] = event
    return [picked[s] for s in sorted(picked)]


def tmux_events(store: Store, session_id: str) -> list[Event]:
    latest = store.latest_of_source(session_id, "plugin", "tmux-context")
    return [latest] if latest is not None else []

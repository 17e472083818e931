"""The work of one answered hook event: the session, touches projected, what the agent loads
itself recorded as seen, the step composed (``runtime.handle`` runs it on a private copy of the
session, without the store's write lock, and records what it wrote after).

This is the engine's side of the hook path, loaded only once an event is known to need an
answer: a repeated event (its key already answered) and a busy store never import it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence

import attrs

from dsh_sidecar.agents.registry import hooks_of
from dsh_sidecar.config import InstructionSettings, Settings
from dsh_sidecar.model import (
    STEP_END,
    STEP_START,
    TURN_END,
    TURN_START,
    USER_MESSAGE,
    Event,
    Message,
    new_message_id,
)
from dsh_sidecar.sessions.discard import dismissed_of
from dsh_sidecar.sessions.inbox import splice_draft
from dsh_sidecar.sessions.instruction_log import effective_state, visible_instructions
from dsh_sidecar.sessions.store import EventDraft, Store
from dsh_sidecar.sessions.touches.projection import ProjectionJob, Touched, project_touches
from dsh_sidecar.sources.agent_instructions.baseline import load_baseline
from dsh_sidecar.sources.agent_instructions.compose import ComposeEnv, SessionInstructionState
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser
from dsh_sidecar.sources.agent_instructions.paths import USER_GLOBAL, scope_abs_path, split_scope
from dsh_sidecar.sources.agent_instructions.render import BASELINE_INTRO, RenderItem, frame, render
from dsh_sidecar.sources.agent_instructions.state import (
    Change,
    changes_of,
    is_instructions_message,
    make_source,
    visible_baseline,
)

from .complement import native_paths
from .config import HookConfig
from .event import HookEvent
from .mapping import open_session
from .output import (
    NOTICE_ROOM,
    SEPARATOR,
    Shaped,
    cap_of,
    capped_instruction_bytes,
    shape,
    text_size,
)
from .prefetch import TmuxQuery, query_tmux

# The agent said it loaded these files itself (the model saw them), so they are recorded as seen.
NATIVE_NOTE = "Loaded by {agent} itself (not sent by the sidecar): {paths}"
NATIVE_MARK = " itself (not sent by the sidecar): "


def _trimmed_text(path: str, limit: int) -> str | None:
    """The whitespace-trimmed text of a regular file of at most ``limit`` bytes, else None.

    Only ever asked about instruction files of the chain; the ``lstat`` first means a FIFO, a
    device or a link (which may lead out of the project) is never opened.
    """
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit + 1).strip()
    except OSError:
        return None


def _is_prompt(message: Message) -> bool:
    return message.source.get("kind") == "user"


@attrs.frozen
class _Outcome:
    batch: tuple[Message, ...]
    inbox: tuple[Message, ...]


class EventRun:
    """The work of one event, inside a transaction of ``store`` (the session's copy)."""

    def __init__(
        self,
        store: Store,
        event: HookEvent,
        config: HookConfig,
        tmux_query: TmuxQuery | None = None,
        *,
        references: Store | None = None,
    ) -> None:
        self.store, self.event, self.config = store, event, config
        # Where other sessions are read (a prompt's session references): ``store`` may hold
        # only this session (``runtime``'s copy of it).
        self.references = references or store
        # Asked before the transaction (``prefetch``); None: ask when the step wants it.
        self.tmux_query = tmux_query
        self.now = config.clock()
        real_cwd = config.fs.resolve(event.cwd)
        self.header, self.resumed = open_session(store, event, real_cwd, self.now)
        self.sid = self.header.id
        instructions = config.settings.instructions
        cap = cap_of(event.agent)
        if cap is not None and instructions.max_bytes > capped_instruction_bytes(cap):
            instructions = attrs.evolve(instructions, max_bytes=capped_instruction_bytes(cap))
        self.instructions: InstructionSettings = instructions
        self.env = ComposeEnv(
            self.header.cwd,
            instructions,
            config.dsh_home,
            config.fs,
            config.os_home,
            GitUser.from_env(config.env, config.os_home),
        )
        self.root = find_project_root(self.header.cwd, instructions.project_root_markers, config.fs)
        self.state = SessionInstructionState()
        # Delivered by this event ahead of everything else (the baseline): projections see it
        # as visible already, and the step appends it.
        self.forced: list[Message] = []
        self.silent: set[str] = set()  # recorded, not printed (what the agent loaded itself)
        self.scanned_only: frozenset[str] = event.scanned

    # --- the event ---------------------------------------------------------------------------

    def answer(
        self,
        spooled: Sequence[str],
        spooled_scanned: frozenset[str] = frozenset(),
        spooled_resets: Sequence[str] = (),
    ) -> Shaped | None:
        """``spooled``: touches kept by earlier busy events of the session, delivered first;
        ``spooled_scanned``: those of them only a search, listing or shell command touched;
        ``spooled_resets``: resets of the agent's context that earlier events reported and did
        not record (kept busy, or killed before their record), carried out first."""
        event = self.event
        if event.kind == "other":
            return None
        # After which touches the agent loaded nothing itself: a path this event reads with a
        # file tool is not one, even if a kept grep touched it too.
        read_now = {p for p in event.touched if p not in event.scanned}
        self.scanned_only = (event.scanned | spooled_scanned) - read_now
        resets = [*spooled_resets, *([event.context_reset] if event.context_reset else [])]
        rearm: list[str] = []
        for reset in dict.fromkeys(resets):  # the same reset twice shadows nothing more
            rearm.extend(p for p in self._rearm(reset) if p not in rearm)
        if self._reloads_nothing_after_compaction():
            self.scanned_only |= frozenset(rearm) - read_now
        touched = [*spooled, *rearm]
        if event.kind in ("after-tool", "pre-tool"):
            touched.extend(event.touched)
        elif event.kind == "loaded":
            touched.extend(self._reported(event.touched))
        forced = self.forced
        quiet = event.kind in ("loaded", "pre-tool")  # never printed: see below
        if not quiet and visible_baseline(self._visible(), ()) is None:
            baseline = self._baseline()
            if baseline is not None:
                forced.append(baseline)
        if not quiet:
            self._leftovers_first()
        if touched:
            reported = frozenset(self._real(p) for p in touched[len(spooled) + len(rearm) :])
            self._project(touched, reported=reported if event.kind == "loaded" else None)
        if quiet:
            # Pre-tool: none of the three CLIs shows a pre-tool hook's text to the model before
            # the tool has run (Claude Code and Codex put it after the result, Gemini CLI drops
            # it), so the target's instructions wait in the inbox for the after-tool event.
            self._record_hook_event(None)
            return None
        return self._step(forced)

    def _leftovers_first(self) -> None:
        """Deliver the instructions an earlier event left pending (what did not fit under the
        cap) ahead of this event's touches, as far as they fit.

        Left in the inbox, they would be composed again with this event's touches into one
        message, and under the byte budget the renderer drops the broader files of a message
        whole: the same large file would be dropped again at every event that touches anything
        new, and arrive only at one that touches nothing else. Taken out of the inbox and
        printed first, like the baseline, this event's projection sees them as delivered.
        """
        cap = cap_of(self.event.agent)
        inbox = self.store.inbox(self.sid)
        waiting = [m for m in inbox if is_instructions_message(m)]
        if not waiting:
            return
        room = None if cap is None else cap - NOTICE_ROOM
        agent = self.event.agent
        used = sum(text_size(agent, m.text) + len(SEPARATOR) for m in self.forced)
        taken: list[Message] = []
        for message in waiting:
            size = text_size(agent, message.text) + len(SEPARATOR)
            if room is not None and used + size > room:
                break
            taken.append(message)
            used += size
        if not taken:
            return
        kept = [m for m in inbox if all(m is not t for t in taken)]
        splice = splice_draft(inbox, kept)
        if splice is not None:
            self.store.append(self.sid, [splice], inbox=kept)
        self.forced.extend(taken)

    def _reported(self, paths: Sequence[str]) -> list[str]:
        """Files Claude Code says it loaded that the sidecar's chain also holds, once its
        baseline is out (the start-up load is the baseline's business: its model)."""
        names = set(self.instructions.all_candidates)
        if visible_baseline(self._visible(), ()) is None:
            return []
        return [p for p in paths if os.path.basename(p) in names]

    def _visible(self) -> list[Message]:
        return visible_instructions(self.store, self.sid)

    def _rearm(self, reset: str) -> list[str]:
        """After the agent's context was reset (``HookEvent.context_reset``), shadow what it no
        longer holds; the nested files to send again."""
        if reset in ("compact", "clear"):
            return self._forget_what_the_agent_lost(reset)
        lost = self._lost_on_resume()
        return self._forget_prompt_context(lost) if lost else []

    def _forget_what_the_agent_lost(self, reset: str) -> list[str]:
        """After the agent compacted or cleared its context, shadow everything the sidecar had
        told it (the seed's compaction re-arm); return the nested files to send again (none
        after a clear)."""
        if reset == "compact" and hooks_of(self.event.agent).compaction == "start-keeps-call":
            from .model_calls import ModelCalls

            call = ModelCalls(self.config.dsh_home).last_message(self.sid)
            if call is not None:
                return self._forget_all_but_the_call(*call)
        visible = self._visible()
        nested = [
            self._abs(c)
            for c in effective_state(visible).values()
            if c.active and split_scope(c.scope)[0] not in (USER_GLOBAL, ".")
        ]
        size = self.store.surface_size(self.sid)
        if size:
            checkpoint = Message.user(
                [f"The agent's context was reset ({reset}); earlier context is gone."],
                {"kind": "plugin", "plugin": "compact", "compactionId": new_message_id()},
            )
            self.store.compact(self.sid, checkpoint, 0, size - 1)
        return nested if reset == "compact" else []

    def _reloads_nothing_after_compaction(self) -> bool:
        """Whether the files sent again after a reset are the sidecar's to send whatever the
        agent's model says: Copilot CLI (``event-only``) loads no nested file again after its
        compaction, while Claude Code reads its nested files again itself after its
        compaction's SessionStart."""
        return hooks_of(self.event.agent).compaction == "event-only"

    def _forget_all_but_the_call(self, after: int, through: int) -> list[str]:
        """After a compaction that kept the message its model call was sending (Qwen Code):
        shadow every message but those the hook delivered into it, the deliveries of events
        after ``after`` through ``through`` other than starts (a start's text is not in the
        history); return the nested files of the shadowed ones that the kept ones do not
        hold."""
        store, sid = self.store, self.sid
        kept: set[int] = set()
        start = False
        for event in store.events(sid, after):
            if event.seq > through:
                break
            if event.type == STEP_START:
                start = event.data.get("hook") == "start"
            elif event.type == USER_MESSAGE and not start:
                kept.add(event.seq)
        in_effect = {c.scope for c in effective_state(self._visible()).values() if c.active}
        surface = [(seq, self._nested_of(seq)) for seq in store.surface_seqs(sid)]
        # What the kept message holds, and what no longer is in effect, is not sent again.
        held = {c.scope for seq, nested in surface if seq in kept for c in nested}
        held |= {c.scope for _, nested in surface for c in nested if c.scope not in in_effect}
        lost: list[str] = []
        for position, (seq, nested) in enumerate(surface):
            if seq in kept:
                continue
            lost += [self._abs(c) for c in nested if c.scope not in held]
            checkpoint = Message.user(
                ["The agent's context was reset (compact); earlier context is gone."],
                {"kind": "plugin", "plugin": "compact", "compactionId": new_message_id()},
            )
            store.compact(sid, checkpoint, position, position)  # one node for one: positions stay
        return list(dict.fromkeys(lost))

    def _nested_of(self, seq: int) -> list[Change]:
        """The nested files (not the user's, not the root's) a surface message holds."""
        message = self.store.events(self.sid, seq - 1, 1)[0].message()
        if message is None or not is_instructions_message(message):
            return []
        return [
            c
            for c in changes_of(message)
            if c.active and split_scope(c.scope)[0] not in (USER_GLOBAL, ".")
        ]

    def _lost_on_resume(self) -> frozenset[str]:
        """The kinds of event whose texts the agent's resumed conversation no longer holds (its
        record says so): Gemini CLI's session-start and prompt-time texts, Qwen Code's
        session-start text."""
        hooks = hooks_of(self.event.agent)
        if hooks.resume_drops_prompt_context:
            return frozenset({"start", "prompt"})
        return frozenset({"start"}) if hooks.resume_drops_start_context else frozenset()

    def _forget_prompt_context(self, kinds: frozenset[str]) -> list[str]:
        """Gemini CLI 0.61 resumes a session without the text hooks put in front of its prompts
        (SessionStart, BeforeAgent), Qwen Code 0.24 without its SessionStart text; what the
        after-tool hooks added stays in the tool results. Shadow the messages the events of
        ``kinds`` delivered, one by one; return the nested files among them."""
        store, sid = self.store, self.sid
        lost: set[int] = set()
        delivering = False
        for event in store.events(sid):
            if event.type == STEP_START:
                delivering = event.data.get("hook") in kinds
            elif event.type == STEP_END:
                delivering = False
            elif (
                delivering
                and event.type == USER_MESSAGE
                and event.data.get("source", {}).get("kind") != "user"
            ):
                lost.add(event.seq)
        if not lost:
            return []
        nested: list[str] = []
        for position, seq in enumerate(store.surface_seqs(sid)):
            if seq not in lost:
                continue
            message = store.events(sid, seq - 1, 1)[0].message()
            if message is not None and is_instructions_message(message):
                nested += [
                    self._abs(c)
                    for c in changes_of(message)
                    if c.active and split_scope(c.scope)[0] not in (USER_GLOBAL, ".")
                ]
            checkpoint = Message.user(
                ["Context given before a prompt, lost when the agent resumed the session."],
                {"kind": "plugin", "plugin": "compact", "compactionId": new_message_id()},
            )
            store.compact(sid, checkpoint, position, position)  # one node for one: positions stay
        return nested

    def _abs(self, change: Change) -> str:
        return scope_abs_path(change.scope, self.root, self.config.dsh_home)

    # --- the baseline, minus what the agent loads itself -----------------------------------------

    def _native(self, files: Sequence[str | None]) -> frozenset[str]:
        if self.config.mode == "all":
            return frozenset()
        config = self.config
        return native_paths(
            self.event.agent,
            files,
            cwd=self.header.cwd,
            workspace=self.root,
            home=config.os_home,
            env=config.env,
            fs=config.fs,
        )

    def _baseline(self) -> Message | None:
        load = load_baseline(
            self.header.cwd,
            self.instructions,
            self.config.fs,
            dsh_home=self.config.dsh_home,
            os_home=self.config.os_home,
        )
        if not load.retained and not load.kept:
            return None
        native = self._native([None])
        # A file whose twin (same directory, same trimmed text) the agent loads counts as loaded:
        # the sidecar keeps one of two identical files, the agent may read the other.
        twins = {
            (os.path.dirname(f.candidate.abs_path), f.trimmed)
            for f in load.observed
            if self._real(f.candidate.abs_path) in native
        }
        native |= {
            self._real(f.candidate.abs_path)
            for f in load.kept
            if (os.path.dirname(f.candidate.abs_path), f.trimmed) in twins
        }
        own = [f for f in load.kept if self._real(f.candidate.abs_path) not in native]
        items = [RenderItem("baseline", f.candidate.display_path, f.content) for f in own]
        result = render(items, self.instructions.max_bytes, BASELINE_INTRO) if items else None
        represented = {own[i].candidate.scope for i in result.represented} if result else set()
        seen = [
            f
            for f in load.kept
            if f.candidate.scope in represented or self._real(f.candidate.abs_path) in native
        ]
        changes = [
            Change("set", f.candidate.scope, f.candidate.display_path, f.digest) for f in seen
        ]
        if not changes:
            return None
        source = make_source(changes, baseline=True, identity=load.identity)
        if result is not None and result.text:
            return Message.user([result.text], source)
        # All of it loaded by the agent itself: recorded as seen, never printed.
        paths = ", ".join(c.path for c in changes)
        note = Message.user(
            [frame(NATIVE_NOTE.format(agent=self.event.agent, paths=paths))], source
        )
        self.silent.add(note.id)
        return note

    def _real(self, path: str) -> str:
        fs = self.config.fs
        try:
            return os.path.join(fs.resolve(os.path.dirname(path)), os.path.basename(path))
        except (OSError, ValueError):
            return path

    # --- touches ----------------------------------------------------------------------------

    def _project(self, touched: Sequence[str], *, reported: frozenset[str] | None) -> None:
        """Reconcile the touched paths into the pending message; record (not send) what the
        agent loads itself for them."""
        self._project_once(touched)
        if self.config.mode == "all":
            return
        pending = [m for m in self.store.inbox(self.sid) if is_instructions_message(m)]
        if not pending:
            return
        # What the agent said it loaded (InstructionsLoaded), else what its model says about
        # the touches after which it loads anything (not a shell command, search or listing).
        asked = [p for p in dict.fromkeys(touched) if p not in self.scanned_only]
        native = reported if reported is not None else self._native(asked)
        changes = changes_of(pending[0])
        fresh = self._loaded_afresh(changes)
        loaded = [
            c
            for c in changes
            if (c.action == "set" or (c.action == "replace" and c.scope in fresh))
            and (self._real(self._abs(c)) in native or self._twin_loaded(self._abs(c), native))
        ]
        if not loaded:
            return
        paths = ", ".join(c.path for c in loaded)
        note = Message.user(
            [frame(NATIVE_NOTE.format(agent=self.event.agent, paths=paths))],
            make_source(loaded),  # upstream's exact source shape: the text says who loaded them
        )
        self.store.append(self.sid, [EventDraft(USER_MESSAGE, note.to_json(), "append")])
        self._project_once(touched)  # the same touches again: what is left is ours to send

    def _loaded_afresh(self, changes: Sequence[Change]) -> frozenset[str]:
        """Scopes of changed files that the agent loads now, for the first time, as they are: a
        nested file loaded after this touch (not at start) that only the hook had sent (no
        record says the agent loaded it). Such a file's change reaches the model with the
        agent's own load, so its replacement is the agent's too. A file the agent did load it
        keeps, and reports only the changed lines of (Claude Code): that replacement is sent."""
        if not any(c.action == "replace" for c in changes):
            return frozenset()
        at_start = self._native([None])
        by_agent: set[str] = set()
        for message in self._visible():
            if is_instructions_message(message) and NATIVE_MARK in message.text:
                by_agent |= {c.scope for c in changes_of(message)}
        return frozenset(
            c.scope
            for c in changes
            if c.action == "replace"
            and c.scope not in by_agent
            and self._real(self._abs(c)) not in at_start
        )

    def _twin_loaded(self, path: str, native: frozenset[str]) -> bool:
        """Whether the agent loads a file beside ``path`` with the same trimmed text."""
        directory = self._real(path)
        directory = os.path.dirname(directory)
        twins = [p for p in native if os.path.dirname(p) == directory]
        if not twins:
            return False
        mine = _trimmed_text(path, self.instructions.max_source_bytes)
        return mine is not None and any(
            _trimmed_text(p, self.instructions.max_source_bytes) == mine for p in twins
        )

    def _project_once(self, touched: Sequence[str]) -> None:
        job = ProjectionJob(
            session_id=self.sid,
            env=self.env,
            instructions=self.state,
            touched=tuple(Touched(p) for p in touched),
            dismissed=dismissed_of(self.store, self.sid),
            project_root=self.root,
            visible=(*self._visible(), *self.forced),
        )
        project_touches(self.store, job)

    # --- the step: what is delivered now --------------------------------------------------------

    def _step(self, forced: list[Message]) -> Shaped | None:
        store, sid, event = self.store, self.sid, self.event
        turn, step, turn_open = self._position()
        prompt = None
        if event.kind == "prompt":
            prompt = Message.user([event.prompt or ""], {"kind": "user", "rpcId": new_message_id()})
        inbox = store.inbox(sid)
        claimed = (*inbox, *([prompt] if prompt is not None else []))
        visible = [*self._visible(), *forced]
        if prompt is not None:
            batch, left = self._prompt_time(turn, step, claimed, visible)
        else:
            batch, left = self._pending_batch(claimed, visible)
        outcome = _Outcome(tuple(batch), tuple(left))
        # The prompt (session references may have rewritten its mentions) is the agent's own.
        candidates = [m for m in outcome.batch if not _is_prompt(m)]
        shaped = shape(
            event.agent, event.kind, [m for m in forced if m.id not in self.silent], candidates
        )
        printed_ids = {m.id for m in shaped.printed}
        entering = [m for m in outcome.batch if _is_prompt(m) or m.id in printed_ids]
        new_inbox = [*shaped.held, *outcome.inbox]
        if not forced and not entering and list(new_inbox) == list(inbox):
            self._record_hook_event(None)
            return shaped
        drafts: list[EventDraft] = []
        if event.kind == "prompt" and turn_open is not None:
            drafts.append(EventDraft(TURN_END, {"turn": turn_open, "reason": "completed"}))
        if step == 1:
            drafts.append(EventDraft(TURN_START, {"turn": turn}))
        # Which hook event delivered this step: a resumed Gemini CLI session has lost what went
        # in front of its prompts (see _forget_prompt_context).
        drafts.append(EventDraft(STEP_START, {"turn": turn, "step": step, "hook": event.kind}))
        drafts.extend(EventDraft(USER_MESSAGE, m.to_json(), "append") for m in forced)
        drafts.extend(EventDraft(USER_MESSAGE, m.to_json(), "append") for m in entering)
        drafts.append(EventDraft(STEP_END, {"turn": turn, "step": step}))
        splice = splice_draft(inbox, new_inbox)
        if splice is not None:
            drafts.append(splice)
        events = store.append(sid, drafts, inbox=new_inbox if splice is not None else None)
        self._record_hook_event(events[-1].seq)
        return shaped

    def _pending_batch(
        self, claimed: Sequence[Message], visible: Sequence[Message]
    ) -> tuple[list[Message], list[Message]]:
        """Between tool calls: the inbox, and what is due beyond it (a change seen without a
        touch of its own). The agent-instructions part of the pre-step pipeline, without the
        readings and the session references, so their modules are not even loaded."""
        from dsh_sidecar.sources.agent_instructions.compose import compose

        desired = compose(
            self.env,
            self.state,
            visible=visible,
            claimed=claimed,
            pending=(),
            touched=(),
            dismissed=dismissed_of(self.store, self.sid),
        )
        batch = list(claimed)
        if desired is not None and not any(m.same_payload(desired) for m in batch):
            batch.append(desired)
        return batch, []

    def _prompt_time(
        self, turn: int, step: int, claimed: Sequence[Message], visible: Sequence[Message]
    ) -> tuple[list[Message], list[Message]]:
        """The whole pre-step pipeline: readings and session references the user enabled."""
        from dsh_sidecar.sessions.pipeline import StepInputs, run_pre_step

        store, sid = self.store, self.sid
        settings = attrs.evolve(self.config.settings, instructions=self.instructions)
        inputs = StepInputs(
            session_id=sid,
            turn=turn,
            step=step,
            claimed=tuple(claimed),
            visible_instructions=tuple(visible),
            time_events=_time_events(store, sid, turn) if settings.time_context.enabled else (),
            tmux_events=_tmux_events(store, sid) if settings.tmux_context.enabled else (),
            now_ms=self.now,
        )
        outcome = run_pre_step(inputs, settings, self._source_hooks(settings))
        return list(outcome.batch), list(outcome.inbox)

    def _position(self) -> tuple[int, int, int | None]:
        """(turn, step) of this event's step, and the turn a prompt closes (None: none open)."""
        latest = self.store.latest_of_types(self.sid, (TURN_START, TURN_END))
        current = int(latest.data.get("turn", 0)) if latest is not None else 0
        is_open = latest is not None and latest.type == TURN_START
        if self.event.kind == "prompt":
            return current + 1, 1, current if is_open else None
        if not is_open:
            return current + 1, 1, None
        last = self.store.latest_of_types(self.sid, (STEP_START,))
        step = int(last.data.get("step", 0)) + 1 if last is not None else 1
        return current, max(step, 2), None

    def _source_hooks(self, settings: Settings):  # type: ignore[no-untyped-def]
        from dsh_sidecar.sessions.pipeline import SourceHooks

        env = self.config.env
        store = self.store

        def read_surface(session_id: str):  # type: ignore[no-untyped-def]
            source = store if session_id == self.sid else self.references
            snapshot = source.surface_snapshot(session_id)
            if snapshot is None:
                raise KeyError(session_id)
            return snapshot

        return SourceHooks(
            compose_env=self.env,
            instruction_state=self.state,
            read_surface=read_surface,
            tmux_query=self.tmux_query or (lambda: query_tmux(env)),
            fallback_zone=lambda: settings.time_context.time_zone or _system_time_zone(env),
            warn=lambda message: None,
            dismissed=dismissed_of(store, self.sid),
        )

    def _record_hook_event(self, seq: int | None) -> None:
        key = self.event.answer_key
        if key is not None:
            self.store.record_hook_event(self.sid, key, seq)


# The readings' modules (zoneinfo, subprocess for tmux) load only when a reading is enabled.


def _time_events(store: Store, sid: str, turn: int) -> tuple[Event, ...]:
    from dsh_sidecar.sessions.stepping import time_events

    return tuple(time_events(store, sid, turn))


def _tmux_events(store: Store, sid: str) -> tuple[Event, ...]:
    from dsh_sidecar.sessions.stepping import tmux_events

    return tuple(tmux_events(store, sid))


def _system_time_zone(env: Mapping[str, str]) -> str:
    from dsh_sidecar.sources.time_context import system_time_zone

    return system_time_zone(env)

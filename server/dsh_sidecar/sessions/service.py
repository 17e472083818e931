"""The session service: the upstream *host* for context, with no pygls in sight.

This is the one mutable object of the sidecar, and it lives on the event loop: the settings, the
live sessions (``live.py``) and their queues are read and changed only here, on the loop. Every
filesystem or SQLite call runs in a worker (``workers.py``), which gets frozen inputs: a
``Snapshot`` of the settings and live sessions, or a job object for one session. Work on one
session is serialized by its lock. Every decision reads the durable store; a cancelled or failing
step writes nothing and leaves the inbox as it was.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, TypeVar

import attrs

from dsh_sidecar import errors
from dsh_sidecar.config import Settings, os_home
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
from dsh_sidecar.model import STEP_END, TURN_END, Event, Message, SessionHeader, SurfaceSnapshot
from dsh_sidecar.sources import time_context, tmux_context
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_baseline
from dsh_sidecar.sources.agent_instructions.compose import ComposeEnv
from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser
from dsh_sidecar.sources.agent_instructions.paths import is_within
from dsh_sidecar.sources.agent_instructions.state import Change
from dsh_sidecar.sources.agent_instructions.usage import OffConvention, project_conventions
from dsh_sidecar.sources.observed import ObservedCache
from dsh_sidecar.sources.session_reference import resolver
from dsh_sidecar.zones import validate_client_time_zone

from .discard import DiscardJob, discard, dismissed_of, still_dismissed
from .instruction_log import effective_state, visible_instructions
from .live import LiveSession
from .locations import existing_cwd, parse_cwd, parse_file_uri
from .projection import ProjectionJob, Touched, project_touches, real_path, touch_path
from .scopes import ScopeChains, ScopesReport
from .snapshot import NO_CHANGES, Snapshot
from .stepping import PreparedStep, StepCommit, StepJob, open_step_of, prepare_step
from .store import EventDraft, Store, now_ms
from .surface import SurfaceOpError
from .touches import own_touch
from .validation import validate_append
from .workers import Workers

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_EVENTS_LIMIT = 1000
EXPLANATIONS_KEPT = 64
ANSWERS_KEPT = 128
REFRESH_FAILED = "workspace instruction refresh failed: %s"

__all__ = ["PreparedStep", "Prompt", "ScopesReport", "SessionService"]


@attrs.frozen
class Prompt:
    """The direct user prompt of a step, as the panel sent it."""

    text: str
    client_time_zone: str | None = None
    rpc_id: str | None = None


@attrs.frozen
class _Opened:
    """What opening a session read from the store (blocking part of ``open_session``)."""

    header: SessionHeader
    resumed: bool
    open_step: tuple[int, int] | None
    visible: tuple[Message, ...]
    effective: Mapping[str, Change]
    dismissed: Mapping[str, Change]
    root: str
    inbox: tuple[Message, ...]


class SessionService:
    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        fs: LocalFileSystem = LOCAL_FS,
        clock: Callable[[], int] = now_ms,
        env: Mapping[str, str] | None = None,
        on_inbox_changed: Callable[[str, int], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        tmux_pid: Callable[[], int] = os.getpid,
        workers: Workers | None = None,
    ) -> None:
        self.settings = settings
        self.env: Mapping[str, str] = MappingProxyType(dict(os.environ if env is None else env))
        self.store = store or open_store(settings, self.env, clock)
        self.fs = fs
        self.clock = clock
        self.on_inbox_changed = on_inbox_changed
        self.on_warning = on_warning
        self.tmux_pid = tmux_pid
        self.workers = workers or Workers()
        self.live: dict[str, LiveSession] = {}
        self._chains = self._scope_chains()
        # Answers computed over files and kept while the files they saw are unchanged (the
        # LSP layer keeps ``dsh/explain`` answers here); dropped with the settings they used.
        self.explained: ObservedCache[Any] = ObservedCache(EXPLANATIONS_KEPT)
        # Whole answers of the LSP layer (a hover's text, a dsh/scopes result) built from one
        # snapshot, keyed by its generation with what they looked at.
        self.answers: ObservedCache[Any] = ObservedCache(ANSWERS_KEPT)
        self._generation = 0  # of the snapshot: bumped whenever it is rebuilt
        self._snapshot: Snapshot | None = None
        self._dsh_home: tuple[Settings, str] | None = None
        self._closed = False
        # Editor touches not yet handed to their sessions: the batch still taking paths, and
        # every batch not done (``pending`` and steps wait for them).
        self._editor_batch: list[tuple[str, frozenset[str]]] | None = None
        self._editor_task: asyncio.Future[None] | None = None
        self._editor_touches: set[asyncio.Future[None]] = set()

    @classmethod
    async def start(cls, settings: Settings, **kwargs: Any) -> SessionService:
        """A service whose store is opened in a worker thread, never on the event loop."""
        env: Mapping[str, str] = kwargs.get("env") or os.environ
        clock = kwargs.get("clock", now_ms)
        store = await asyncio.to_thread(open_store, settings, env, clock)
        return cls(settings, store=store, **kwargs)

    # --- loop-side state ----------------------------------------------------------------------

    @property
    def dsh_home(self) -> str:
        # Asked on every touch and hover: worked out once per settings (and environment).
        found = self._dsh_home
        if found is None or found[0] is not self.settings:
            found = self._dsh_home = (self.settings, self.settings.instructions.home(self.env))
        return found[1]

    def snapshot(self) -> Snapshot:
        """Frozen settings and live sessions for a worker; rebuilt only after they change."""
        if self._snapshot is None:
            self._generation += 1
            self._snapshot = Snapshot(
                self.settings, self.env, self.dsh_home, self.fs,
                tuple(live.view() for live in self.live.values()), self._generation,
            )  # fmt: skip
        return self._snapshot

    def _changed(self) -> None:
        self._snapshot = None

    def update_settings(self, settings: Settings) -> None:
        """New settings apply from the next step; accelerators built on the old ones are dropped."""
        self.settings = settings
        self._chains = self._scope_chains()
        self.explained = ObservedCache(EXPLANATIONS_KEPT)
        self.answers = ObservedCache(ANSWERS_KEPT)
        for live in self.live.values():
            live.forget_caches()
        self._changed()

    def parts_built(self) -> int:
        """How many chains and explanations were computed rather than reused (lsp/answers.py)."""
        return self._chains.chains.built + self.explained.built

    def _scope_chains(self) -> ScopeChains:
        return ScopeChains(self.settings.instructions, self.fs, self._git_user())

    def _git_user(self) -> GitUser:
        return GitUser.from_env(self.env, self.os_home)

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        if self.on_warning is not None:
            self.on_warning(message)

    def _warner(self) -> Callable[[str], None]:
        """A warning function for a worker thread: the warning is delivered on the loop."""
        loop = asyncio.get_running_loop()

        def warn(message: str) -> None:
            loop.call_soon_threadsafe(self._warn, message)

        return warn

    def _notify_inbox(self, session_id: str, count: int) -> None:
        if self.on_inbox_changed is not None:
            self.on_inbox_changed(session_id, count)

    def _compose_env(self, live: LiveSession) -> ComposeEnv:
        return ComposeEnv(
            live.header.cwd, self.settings.instructions, self.dsh_home, self.fs, self.os_home,
            self._git_user(),
        )  # fmt: skip

    @property
    def os_home(self) -> str:
        """The home directory of this service's environment (``~`` in settings, display paths)."""
        return self.env.get("HOME") or os_home()

    async def _require_live(self, session_id: str) -> LiveSession:
        live = self.live.get(session_id)
        if live is not None:
            return live
        known = await self.workers.store(lambda: self.store.get_session(session_id) is not None)
        raise _not_open(session_id) if known else _unknown(session_id)

    def _stored_inbox(self, session_id: str) -> list[Message] | None:
        """A stored session's inbox, None when there is no such session (blocking: workers)."""
        with self.store.snapshot():
            if self.store.get_session(session_id) is None:
                return None
            return self.store.inbox(session_id)

    def _known_header(self, session_id: str) -> SessionHeader:
        """The stored header (blocking: workers only)."""
        header = self.store.get_session(session_id)
        if header is None:
            raise _unknown(session_id)
        return header

    # --- sessions -----------------------------------------------------------------------------

    async def open_session(
        self, cwd: str, session_id: str | None = None, title: str | None = None
    ) -> tuple[SessionHeader, bool]:
        directory = parse_cwd(cwd)
        sid = session_id or str(uuid.uuid4())
        live = self.live.get(sid)
        if live is not None:
            # Re-opening a live session resumes it like a new process would: caches start empty.
            live.forget_caches()
            return live.header, True
        snapshot = self.snapshot()
        markers = snapshot.settings.instructions.project_root_markers

        def work() -> _Opened:
            existing = self.store.get_session(sid)
            resumed = existing is not None
            if existing is None:
                existing_cwd(directory)
                header = SessionHeader(sid, self.clock(), directory, title)
                if not self.store.create_session(header):
                    resumed = True  # another process created it first: resume theirs
                    header = self._known_header(sid)
            else:
                header = existing
            visible = tuple(visible_instructions(self.store, sid)) if resumed else ()
            return _Opened(
                header, resumed,
                open_step=open_step_of(self.store, sid) if resumed else None,
                visible=visible,
                effective=effective_state(list(visible)),
                dismissed=dismissed_of(self.store, sid) if resumed else NO_CHANGES,
                root=find_project_root(header.cwd, markers, self.fs),
                inbox=tuple(self.store.inbox(sid)) if resumed else (),
            )  # fmt: skip

        opened = await self.workers.store(work)
        live = self.live.get(sid)
        if live is not None:  # opened twice at once: the first to finish is the live one
            return live.header, True
        self.live[sid] = LiveSession(
            opened.header, open_step=opened.open_step, project_root=opened.root,
            effective=opened.effective, dismissed=opened.dismissed, inbox=opened.inbox,
            visible=(0, opened.visible),
        )  # fmt: skip
        self._changed()
        return opened.header, opened.resumed

    async def close_session(self, session_id: str) -> None:
        live = await self._require_live(session_id)
        await asyncio.shield(live.projections.settle())
        if self.live.pop(live.header.id, None) is not None:
            self._changed()

    async def delete_session(self, session_id: str) -> None:
        """Remove a session from the store for good; a live one is closed first."""
        live = self.live.get(session_id)
        if live is not None:
            await asyncio.shield(live.projections.settle())
            if self.live.pop(session_id, None) is not None:
                self._changed()
        if not await self.workers.store(lambda: self.store.delete_session(session_id)):
            raise _unknown(session_id)

    async def list_sessions(
        self, query: str | None = None, limit: int | None = None
    ) -> list[SessionHeader]:
        def work() -> list[SessionHeader]:
            headers = self.store.list_sessions()
            if query:
                needle = query.lower()
                headers = [
                    h for h in headers
                    if needle in h.id.lower() or needle in h.cwd.lower()
                    or needle in (h.title or "").lower()
                ]  # fmt: skip
            return headers[:limit] if limit is not None else headers

        return await self.workers.store(work)

    async def surface(self, session_id: str) -> SurfaceSnapshot:
        return await self.workers.store(lambda: self.read_surface(session_id, unknown=_unknown))

    def read_surface(
        self, session_id: str, unknown: Callable[[str], DshError] | None = None
    ) -> SurfaceSnapshot:
        """Synchronous ``readSurface`` (also the session-reference seam); raises if unknown."""
        # One read transaction: capturedThroughSeq must describe exactly the events returned,
        # even while this session is being appended to by another thread or process.
        snapshot = self.store.surface_snapshot(session_id)
        if snapshot is None:
            if unknown is not None:
                raise unknown(session_id)
            raise DshError(errors.UNKNOWN_SESSION, f"SESSION_QUERY_SESSION_NOT_FOUND: {session_id}")
        return snapshot

    async def events(
        self, session_id: str, after_seq: int | None = None, limit: int | None = None
    ) -> list[Event]:
        def work() -> list[Event]:
            self._known_header(session_id)
            count = DEFAULT_EVENTS_LIMIT if limit is None else limit
            return self.store.events(session_id, after_seq, count)

        return await self.workers.store(work)

    async def append(self, session_id: str, raw_events: list[Any]) -> list[int]:
        drafts = validate_append(raw_events)

        def work() -> list[int]:
            self._known_header(session_id)
            return [e.seq for e in self.store.append(session_id, drafts)]

        live = self.live.get(session_id)
        if live is None:
            return await self.workers.store(work)
        async with live.lock:
            try:
                return await self.workers.store(work)
            finally:
                live.visible_gen += 1  # the client's events may change what the model sees

    async def compact(
        self, session_id: str, start: int, end: int, summary: str, compaction_id: str | None = None
    ) -> int:
        cid = compaction_id or str(uuid.uuid4())

        def work() -> tuple[int, tuple[Message, ...], Mapping[str, Change]]:
            self._known_header(session_id)
            checkpoint = Message.user(
                [summary], {"kind": "plugin", "plugin": "compact", "compactionId": cid}
            )
            try:
                seq = self.store.compact(session_id, checkpoint, start, end).seq
            except SurfaceOpError as exc:
                raise DshError(errors.INVALID_EVENT, str(exc)) from exc
            # A compaction can shadow agent-instructions messages: what the model sees changed.
            visible = tuple(visible_instructions(self.store, session_id))
            return seq, visible, effective_state(list(visible))

        live = self.live.get(session_id)
        if live is None:
            return (await self.workers.store(work))[0]
        async with live.lock:
            seq, visible, effective = await self.workers.store(work)
            live.visible_gen += 1
            live.visible = (live.visible_gen, visible)
            live.effective = effective
            self._changed()
        return seq

    # --- the agent loop -----------------------------------------------------------------------

    async def prepare_step(
        self, session_id: str, turn: int, step: int, prompt: Prompt | None
    ) -> PreparedStep:
        live = await self._require_live(session_id)
        prompt_message = self._prompt_message(prompt) if prompt is not None else None
        await self._editor_touches_done()
        await live.projections.drain()
        cancelled = threading.Event()
        async with live.lock:
            job = self._step_job(live, turn, step, prompt_message, cancelled)
            work = asyncio.ensure_future(self.workers.store(lambda: prepare_step(self.store, job)))
            try:
                outcome = await asyncio.shield(work)
            except asyncio.CancelledError:
                cancelled.set()
                # The worker keeps running in its thread: hold the session lock until it is done
                # (even through a second cancel), so nothing else interleaves with a commit that
                # had already passed the flag check. That commit, if any, is then the answer.
                outcome = await _uncancellable(work)
                if outcome is None:
                    raise
            assert outcome is not None  # only a cancelled step commits nothing
            self._apply_step(live, turn, step, outcome)
        if outcome.inbox_changed:
            self._notify_inbox(live.header.id, outcome.pending_count)
        return outcome.prepared

    def _apply_step(self, live: LiveSession, turn: int, step: int, outcome: StepCommit) -> None:
        live.open_step = (turn, step)
        live.inbox = outcome.inbox
        live.visible_gen += 1
        live.visible = None
        live.dismissed = still_dismissed(live.dismissed, outcome.entered)
        if outcome.effective != live.effective:
            live.effective = outcome.effective
            self._changed()

    def _prompt_message(self, prompt: Prompt) -> Message:
        source: dict[str, Any] = {"kind": "user", "rpcId": prompt.rpc_id or str(uuid.uuid4())}
        if prompt.client_time_zone is not None:
            source["clientTimeZone"] = validate_client_time_zone(prompt.client_time_zone)
        return Message.user([prompt.text], source)

    def _step_job(
        self,
        live: LiveSession,
        turn: int,
        step: int,
        prompt: Message | None,
        cancelled: threading.Event,
    ) -> StepJob:
        settings, env = self.settings, self.env
        pid = self.tmux_pid()

        def fallback_zone() -> str:
            return settings.time_context.time_zone or time_context.system_time_zone(env)

        def tmux_query() -> tmux_context.TmuxLocation | None:
            return tmux_context.query_tmux(pid, env=env)

        return StepJob(
            session_id=live.header.id, turn=turn, step=step, prompt=prompt, settings=settings,
            compose_env=self._compose_env(live), instructions=live.instructions,
            now_ms=self.clock(), cancelled=cancelled, read_surface=self.read_surface,
            tmux_query=tmux_query, fallback_zone=fallback_zone, warn=self._warner(),
            dismissed=live.dismissed, visible=live.kept_visible(),
        )  # fmt: skip

    async def end_step(self, session_id: str, turn: int, step: int) -> None:
        live = await self._require_live(session_id)
        draft = EventDraft(STEP_END, {"turn": turn, "step": step})
        async with live.lock:
            await self.workers.store(lambda: self.store.append(live.header.id, [draft]))
            live.open_step = None
            staged, live.staged = live.staged, []
        for touched in staged:
            self._queue_projection(live, touched)

    async def end_turn(self, session_id: str, turn: int, reason: str) -> None:
        live = await self._require_live(session_id)
        draft = EventDraft(TURN_END, {"turn": turn, "reason": reason})
        async with live.lock:
            await self.workers.store(lambda: self.store.append(live.header.id, [draft]))
            # Upstream quirk kept: turn/end closes the step without releasing staged touches.
            live.open_step = None

    # --- touches ------------------------------------------------------------------------------

    def tool_result(
        self,
        session_id: str,
        token: str,
        parent_token: str | None,
        name: str,
        arguments: object,
        is_error: bool,
        aborted: bool | None = False,
    ) -> None:
        """The agent's tool-result seam (a notification: a bad touch is reported, never fatal).

        Synchronous, so results are staged in exactly the order they arrived; that is also why a
        session that is not live is refused without asking the store whether it exists at all.
        """
        live = self.live.get(session_id)
        if live is None:
            raise _not_open(session_id)
        own = own_touch(name, arguments, is_error, aborted)
        for path in live.executions.settle(token, parent_token, own):
            self.touch(live, Touched(path))

    def touch(self, live: LiveSession, touched: Touched) -> None:
        """Project a touch now, or stage it until the open step ends."""
        if live.open_step is not None:
            live.staged.append(touched)
        else:
            self._queue_projection(live, touched)

    def editor_touch(self, paths: Sequence[str]) -> asyncio.Future[None]:
        """Editor document events: a touch for every live session whose project holds the file.

        Handled at once, so a ``pending``, ``prepare`` or ``discard`` that arrives after the
        editor's notification sees it: a path spelled inside a session's project goes to its
        queue now (its projection resolves it, and drops it if it really leads elsewhere); the
        rest (spelled through a link from outside, or a session whose root is not known yet)
        join the batch that has not started yet, resolved in one worker hop, and requests wait
        for those batches (``_editor_touches_done``).
        """
        unresolved: list[tuple[str, frozenset[str]]] = []
        for raw in paths:
            path = touch_path(raw)
            queued = set()
            for live in self.live.values():
                root = live.project_root
                if root is not None and is_within(path, root):
                    self.touch(live, Touched(path, editor=True))
                    queued.add(live.header.id)
            if len(queued) < len(self.live):
                unresolved.append((path, frozenset(queued)))
        if not unresolved:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        batch, task = self._editor_batch, self._editor_task
        if batch is None or task is None:
            batch = self._editor_batch = []
            task = self._editor_task = asyncio.ensure_future(self._editor_touch_batch(batch))
            self._editor_touches.add(task)
            task.add_done_callback(self._editor_touches.discard)
        batch.extend(unresolved)
        return asyncio.shield(task)

    async def _editor_touch_batch(self, batch: list[tuple[str, frozenset[str]]]) -> None:
        if self._editor_batch is batch:
            self._editor_batch = None  # from here on, touches start a batch of their own
        fs = self.fs
        real = await self.workers.fs(lambda: [real_path(fs, p) for p, _ in batch])
        markers = self.settings.instructions.project_root_markers
        for live in list(self.live.values()):
            root = live.project_root
            if root is None:
                root = await self.workers.fs(
                    partial(find_project_root, live.header.cwd, markers, self.fs)
                )
                live.project_root = root
            for path, (_, queued) in zip(real, batch, strict=True):
                if live.header.id not in queued and is_within(path, root):
                    self.touch(live, Touched(path))

    async def _editor_touches_done(self) -> None:
        """Wait for the editor touches registered so far to reach their sessions' queues."""
        if self._editor_touches:
            await asyncio.gather(*list(self._editor_touches), return_exceptions=True)

    def _queue_projection(self, live: LiveSession, touched: Touched) -> None:
        async def run(batch: list[Touched]) -> None:
            try:
                async with live.lock:
                    job = ProjectionJob(
                        live.header.id, self._compose_env(live), live.instructions, tuple(batch),
                        live.dismissed, inbox=live.inbox, visible_gen=live.visible_gen,
                        visible=live.kept_visible(), memo=live.projection_memo,
                        project_root=live.project_root,
                    )  # fmt: skip
                    result = await self.workers.store(lambda: project_touches(self.store, job))
                    live.inbox = result.inbox
            except Exception as exc:
                log.exception("projection of %d touched path(s) failed", len(batch))
                if self.on_warning is not None:
                    self.on_warning(REFRESH_FAILED % exc)
                return
            if result.changed:
                self._notify_inbox(live.header.id, result.pending_count)

        live.projections.add(touched, run)

    # --- pending context and previews -----------------------------------------------------------

    async def pending(self, session_id: str) -> list[Message]:
        """The session's inbox. A stored session that is not live here (another process's, an
        agent's hook session) is answered from the store as it stands: this process has no
        touches of it to wait for."""
        live = self.live.get(session_id)
        if live is None:
            stored = await self.workers.store(lambda: self._stored_inbox(session_id))
            if stored is None:
                raise _unknown(session_id)
            return stored
        await self._editor_touches_done()
        await live.projections.drain()
        if live.inbox is None:  # not known since the session was re-opened: ask the store
            inbox = tuple(await self.workers.store(lambda: self.store.inbox(live.header.id)))
            if live.inbox is None:
                live.inbox = inbox
        return list(live.inbox)

    async def discard(
        self, session_id: str, message_id: str, scopes: Sequence[str] | None = None
    ) -> list[Message]:
        """Drop a pending message (or some of its changes) before the next step; the new inbox."""
        live = await self._require_live(session_id)
        await self._editor_touches_done()
        await live.projections.drain()
        async with live.lock:
            job = DiscardJob(
                live.header.id, message_id, tuple(scopes) if scopes is not None else None,
                self._compose_env(live), live.instructions, live.dismissed,
            )  # fmt: skip
            result = await self.workers.store(lambda: discard(self.store, job))
            live.dismissed = result.dismissed
            live.inbox = result.inbox
        self._notify_inbox(live.header.id, len(result.inbox))
        return list(result.inbox)

    async def preview(self, cwd: str) -> tuple[BaselineLoad, tuple[OffConvention, ...]]:
        """The baseline of a new session at ``cwd``, and the repository's instruction files that
        the settings leave unread (so an empty baseline is never silently empty)."""
        directory = parse_cwd(cwd)
        snapshot = self.snapshot()
        home = self.os_home

        def work() -> tuple[BaselineLoad, tuple[OffConvention, ...]]:
            existing_cwd(directory)
            settings = snapshot.settings.instructions
            load = load_baseline(directory, settings, snapshot.fs, dsh_home=snapshot.dsh_home)
            root = load.project_root
            found = project_conventions(
                load.cwd, root, settings, snapshot.fs, home,
                confinement_once(root, settings, snapshot.fs, home), imports=False,
            )  # fmt: skip
            return load, tuple(c for c in found if c.in_project)

        return await self.workers.fs(work)

    async def scopes(self, uri: str) -> ScopesReport:
        work = self.scopes_work(uri)
        return await self.workers.fs(lambda: work(None))

    def scopes_work(self, uri: str) -> Callable[[LocalFileSystem | None], ScopesReport]:
        """``uri`` checked now (on the loop); its report for a worker to produce. Hover runs it
        in the same worker hop as the rest of its answer, through the same ``OneLook``."""
        path = parse_file_uri(uri)
        snapshot, chains = self.snapshot(), self._chains
        return lambda look: chains.report(snapshot, path, look)

    async def candidates(
        self, session_id: str, query: str | None = None
    ) -> list[resolver.Candidate]:
        live = await self._require_live(session_id)
        settings = self.settings.session_reference

        def work() -> list[resolver.Candidate]:
            headers = self.store.list_sessions()
            titles = {h.id: h.title for h in headers}
            return resolver.list_candidates(
                target_id=live.header.id, target_cwd=live.header.cwd, query=query or "",
                limit=settings.candidate_limit, sessions=headers, titles=titles,
            )  # fmt: skip

        return await self.workers.store(work)

    async def shutdown(self) -> None:
        """Let queued projections finish, then close the store; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        for live in list(self.live.values()):
            await live.projections.settle()
        self.live.clear()
        self._changed()
        await self.workers.store(self.store.close)
        self.workers.shutdown()


def open_store(settings: Settings, env: Mapping[str, str], clock: Callable[[], int]) -> Store:
    """The configured store file, opened (blocking)."""
    return Store(settings.store_path(env), clock, busy_timeout_ms=settings.store.busy_timeout_ms)


def _not_open(session_id: str) -> DshError:
    return DshError(
        errors.UNKNOWN_SESSION,
        f"session {session_id!r} is not open in this sidecar (open it with dsh/session/open)",
        {"sessionId": session_id},
    )


def _unknown(session_id: str) -> DshError:
    return DshError(
        errors.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
    )


async def _uncancellable(work: asyncio.Future[T]) -> T:
    """The result of ``work``, waiting it out however often the caller is cancelled meanwhile."""
    while True:
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            if work.cancelled():
                raise
            # Swallowed on purpose: the caller decides what the cancel means once the worker
            # has finished (nothing written: re-raise; already committed: that is the answer).

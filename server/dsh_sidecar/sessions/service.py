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
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

import attrs

from dsh_sidecar import errors
from dsh_sidecar.config import Settings
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
from dsh_sidecar.model import STEP_END, TURN_END, Event, Message, SessionHeader, SurfaceSnapshot
from dsh_sidecar.sources import time_context, tmux_context
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.agent_instructions.state import Change
from dsh_sidecar.zones import validate_client_time_zone

from .discard import DiscardJob, discard, dismissed_of, still_dismissed
from .host import Host, not_open, open_store, unknown
from .instruction_log import effective_state, visible_instructions
from .live import LiveSession
from .locations import existing_cwd, parse_cwd
from .snapshot import NO_CHANGES, Snapshot
from .spool import Spool, waiting_paths
from .stepping import PreparedStep, StepCommit, StepJob, open_step_of, prepare_step
from .store import EventDraft, Store, now_ms
from .surface import SurfaceOpError
from .touches.projector import Projector
from .touches.router import TouchRouter
from .validation import validate_append
from .workers import Workers

T = TypeVar("T")
DEFAULT_EVENTS_LIMIT = 1000

__all__ = ["PreparedStep", "Prompt", "SessionService"]


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
        frozen_env = MappingProxyType(dict(os.environ if env is None else env))
        self.host = Host(
            settings,
            frozen_env,
            store or open_store(settings, frozen_env, clock),
            fs,
            workers or Workers(),
            clock,
            on_inbox_changed,
            on_warning,
        )
        # Never replaced: the host's surroundings, named here for the commands and the LSP layer.
        self.env, self.fs = frozen_env, fs
        self.store, self.workers = self.host.store, self.host.workers
        self.clock, self.tmux_pid = clock, tmux_pid
        self.live: dict[str, LiveSession] = {}
        # Which live sessions a touch reaches, and the projections it queues (touches/).
        self.touches = TouchRouter(self.host, self.live, Projector(self.host))
        self._generation = 0  # of the snapshot: bumped whenever it is rebuilt
        self._snapshot: Snapshot | None = None
        self._closed = False

    @classmethod
    async def start(cls, settings: Settings, **kwargs: Any) -> SessionService:
        """A service whose store is opened in a worker thread, never on the event loop."""
        given: Mapping[str, str] | None = kwargs.get("env")
        env = os.environ if given is None else given  # as __init__ takes it: {} is an environment
        clock = kwargs.get("clock", now_ms)
        store = await asyncio.to_thread(open_store, settings, env, clock)
        return cls(settings, store=store, **kwargs)

    # --- loop-side state ----------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.host.settings

    @property
    def dsh_home(self) -> str:
        return self.host.dsh_home

    @property
    def os_home(self) -> str:
        """The home directory of this service's environment (``~`` in settings, display paths)."""
        return self.host.os_home

    def snapshot(self) -> Snapshot:
        """Frozen settings and live sessions for a worker; rebuilt only after they change."""
        if self._snapshot is None:
            self._generation += 1
            self._snapshot = Snapshot(
                self.settings,
                self.env,
                self.dsh_home,
                self.fs,
                tuple(live.view() for live in self.live.values()),
                self._generation,
            )
        return self._snapshot

    def _changed(self) -> None:
        self._snapshot = None
        self.touches.roots_changed()

    def update_settings(self, settings: Settings) -> None:
        """New settings apply from the next step; accelerators built on the old ones are dropped
        (and the next query takes new caches: ``queries/asked.py``)."""
        self.host.settings = settings
        for live in self.live.values():
            live.forget_caches()
        self._changed()

    async def require_live(self, session_id: str) -> LiveSession:
        live = self.live.get(session_id)
        if live is not None:
            return live
        known = await self.workers.store(lambda: self.store.get_session(session_id) is not None)
        raise not_open(session_id) if known else unknown(session_id)

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
            raise unknown(session_id)
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
            self.touches.roots_changed()
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
                header,
                resumed,
                open_step=open_step_of(self.store, sid) if resumed else None,
                visible=visible,
                effective=effective_state(list(visible)),
                dismissed=dismissed_of(self.store, sid) if resumed else NO_CHANGES,
                root=find_project_root(header.cwd, markers, self.fs),
                inbox=tuple(self.store.inbox(sid)) if resumed else (),
            )

        opened = await self.workers.store(work)
        live = self.live.get(sid)
        if live is not None:  # opened twice at once: the first to finish is the live one
            return live.header, True
        self.live[sid] = LiveSession(
            opened.header,
            open_step=opened.open_step,
            project_root=opened.root,
            effective=opened.effective,
            dismissed=opened.dismissed,
            inbox=opened.inbox,
            visible=(0, opened.visible),
        )
        self._changed()
        return opened.header, opened.resumed

    async def close_session(self, session_id: str) -> None:
        live = await self.require_live(session_id)
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
            raise unknown(session_id)

    async def list_sessions(
        self, query: str | None = None, limit: int | None = None
    ) -> list[SessionHeader]:
        def work() -> list[SessionHeader]:
            headers = self.store.list_sessions()
            if query:
                needle = query.lower()
                headers = [
                    h
                    for h in headers
                    if needle in h.id.lower()
                    or needle in h.cwd.lower()
                    or needle in (h.title or "").lower()
                ]
            return headers[:limit] if limit is not None else headers

        return await self.workers.store(work)

    async def waiting_touches(self, session_ids: list[str]) -> dict[str, int]:
        """For each of ``session_ids`` whose agent's hooks kept touches while the store was busy
        (the spool under this sidecar's DSH_HOME, the one the hooks share by default), how many
        distinct files those touches name; sessions without any are left out."""
        spool = Spool.of_home(self.dsh_home)

        def work() -> dict[str, int]:
            if not spool.has_entries():
                return {}
            counts: dict[str, int] = {}
            for sid in session_ids:
                entries = spool.read(sid)
                if not entries:
                    continue
                seen = self.store.hook_event_seen
                paths = waiting_paths(entries, lambda keys: {k for k in keys if seen(sid, k)})  # noqa: B023 (called at once)
                if paths:
                    counts[sid] = len(paths)
            return counts

        return await self.workers.store(work)

    async def surface(self, session_id: str) -> SurfaceSnapshot:
        return await self.workers.store(lambda: self.read_surface(session_id, unknown=unknown))

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
        async with live.projections.waiting(), live.lock:
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
        async with live.projections.waiting(), live.lock:
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
        live = await self.require_live(session_id)
        prompt_message = self._prompt_message(prompt) if prompt is not None else None
        await self.touches.settled()
        await live.projections.drain()
        cancelled = threading.Event()
        async with live.projections.waiting(), live.lock:
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
            self.host.notify_inbox(live.header.id, outcome.pending_count)
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
            session_id=live.header.id,
            turn=turn,
            step=step,
            prompt=prompt,
            settings=settings,
            env=self.host.compose_env(live.header),
            instructions=live.instructions,
            now_ms=self.clock(),
            cancelled=cancelled,
            read_surface=self.read_surface,
            tmux_query=tmux_query,
            fallback_zone=fallback_zone,
            warn=self.host.warner(),
            dismissed=live.dismissed,
            visible=live.kept_visible(),
        )

    async def end_step(self, session_id: str, turn: int, step: int) -> None:
        live = await self.require_live(session_id)
        draft = EventDraft(STEP_END, {"turn": turn, "step": step})
        async with live.projections.waiting(), live.lock:
            await self.workers.store(lambda: self.store.append(live.header.id, [draft]))
            live.open_step = None
        self.touches.release(live)

    async def end_turn(self, session_id: str, turn: int, reason: str) -> None:
        live = await self.require_live(session_id)
        draft = EventDraft(TURN_END, {"turn": turn, "reason": reason})
        async with live.projections.waiting(), live.lock:
            await self.workers.store(lambda: self.store.append(live.header.id, [draft]))
            # Upstream quirk kept: turn/end closes the step without releasing staged touches.
            live.open_step = None

    # --- touches (routed and projected by touches/) -----------------------------------------------

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
        self.touches.tool_result(
            session_id, token, parent_token, name, arguments, is_error, aborted
        )

    def editor_touch(self, paths: Sequence[str]) -> asyncio.Future[None]:
        """Editor document events: a touch for every live session whose project holds the file."""
        return self.touches.editor_touch(paths)

    # --- pending context -----------------------------------------------------------

    async def pending(self, session_id: str) -> list[Message]:
        """The session's inbox. A stored session that is not live here (another process's, an
        agent's hook session) is answered from the store as it stands: this process has no
        touches of it to wait for."""
        live = self.live.get(session_id)
        if live is None:
            stored = await self.workers.store(lambda: self._stored_inbox(session_id))
            if stored is None:
                raise unknown(session_id)
            return stored
        await self.touches.settled()
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
        live = await self.require_live(session_id)
        await self.touches.settled()
        await live.projections.drain()
        async with live.projections.waiting(), live.lock:
            job = DiscardJob(
                session_id=live.header.id,
                env=self.host.compose_env(live.header),
                instructions=live.instructions,
                dismissed=live.dismissed,
                message_id=message_id,
                scopes=tuple(scopes) if scopes is not None else None,
            )
            result = await self.workers.store(lambda: discard(self.store, job))
            live.dismissed = result.dismissed
            live.inbox = result.inbox
        self.host.notify_inbox(live.header.id, len(result.inbox))
        return list(result.inbox)

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

"""The session service: the upstream *host* for context, with no pygls in sight.

One instance per process. Every decision reads the durable store; ``LiveSession`` holds only
accelerators (instruction caches), the open-step flag, staged touches and a projection queue.
Work on one session is serialized by its lock; blocking filesystem and SQLite work runs in a
worker thread so the event loop keeps answering. A cancelled or failing ``prepare`` writes
nothing and leaves the inbox as it was: the whole step is computed first and committed in one
transaction only if nobody cancelled it by then.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import attrs

from dsh_sidecar import errors
from dsh_sidecar.config import Settings, os_home
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
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
    SessionHeader,
    SurfaceSnapshot,
)
from dsh_sidecar.sources import time_context, tmux_context
from dsh_sidecar.sources.agent_instructions.baseline import (
    BaselineLoad,
    load_baseline,
    load_document_chain,
)
from dsh_sidecar.sources.agent_instructions.compose import (
    ComposeEnv,
    SessionInstructionState,
    compose,
    sync_inbox,
)
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.agent_instructions.gitignore import IgnoreMatcher
from dsh_sidecar.sources.agent_instructions.paths import is_within
from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND, Change, effective_changes
from dsh_sidecar.sources.session_reference import resolver
from dsh_sidecar.zones import validate_client_time_zone

from .inbox import same_inbox, splice_draft
from .pipeline import SourceHooks, StepInputs, run_pre_step
from .store import EventDraft, Store, now_ms
from .surface import SurfaceOpError
from .touches import ExecutionTouches, own_touch
from .validation import validate_append

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_EVENTS_LIMIT = 1000
REFRESH_FAILED = "workspace instruction refresh failed: %s"


@attrs.frozen
class Prompt:
    text: str
    client_time_zone: str | None = None
    rpc_id: str | None = None


@attrs.frozen
class PreparedStep:
    messages: tuple[Message, ...]
    seqs: tuple[int, ...]


@attrs.frozen
class ScopesReport:
    project_root: str
    directory: str
    load: BaselineLoad
    active: dict[str, list[Change]]  # session id -> active changes for the chain's scopes


@attrs.define(eq=False)
class LiveSession:
    header: SessionHeader
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    instructions: SessionInstructionState = attrs.field(factory=SessionInstructionState)
    open_step: tuple[int, int] | None = None
    staged: list[str] = attrs.field(factory=list)
    # Tool-call tokens are the client's, so they are only unique within a session: two panels
    # numbering their calls alike must not hand each other a child's staged touches.
    executions: ExecutionTouches = attrs.field(factory=ExecutionTouches)
    tail: asyncio.Future[None] | None = None
    # Touches riding on the queued projection that has not started yet (see _queue_projection).
    batch: list[str] | None = None
    project_root: str | None = None


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
    ) -> None:
        self.settings = settings
        self.env = dict(os.environ if env is None else env)
        self.store = store or Store(settings.store_path(self.env), clock)
        self.fs = fs
        self.clock = clock
        self.on_inbox_changed = on_inbox_changed
        self.on_warning = on_warning
        self.tmux_pid = tmux_pid
        self.live: dict[str, LiveSession] = {}
        # Parsed .gitignore files per project root for dsh/scopes, hover and diagnostics.
        self._scope_matchers: dict[str, IgnoreMatcher] = {}
        self._scope_lock = (
            threading.Lock()
        )  # scopes run in worker threads; matchers are not shared-safe

    # --- helpers ------------------------------------------------------------------------------

    @property
    def dsh_home(self) -> str:
        return self.settings.instructions.home(self.env)

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.to_thread(fn)

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        if self.on_warning is not None:
            self.on_warning(message)

    def _live(self, session_id: Any) -> LiveSession:
        if not isinstance(session_id, str):
            raise DshError(errors.INVALID_PARAMS, "sessionId must be a string")
        live = self.live.get(session_id)
        if live is None:
            if self.store.get_session(session_id) is not None:
                raise DshError(
                    errors.UNKNOWN_SESSION,
                    f"session {session_id!r} is not open in this sidecar (open it with dsh/session/open)",
                    {"sessionId": session_id},
                )
            raise DshError(
                errors.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
            )
        return live

    def _known(self, session_id: Any) -> SessionHeader:
        if not isinstance(session_id, str):
            raise DshError(errors.INVALID_PARAMS, "sessionId must be a string")
        header = self.store.get_session(session_id)
        if header is None:
            raise DshError(
                errors.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
            )
        return header

    def _compose_env(self, live: LiveSession) -> ComposeEnv:
        return ComposeEnv(
            live.header.cwd, self.settings.instructions, self.dsh_home, self.fs, self.os_home
        )

    @property
    def os_home(self) -> str:
        """The home directory of this service's environment (``~`` in settings, display paths)."""
        return self.env.get("HOME") or os_home()

    def update_settings(self, settings: Settings) -> None:
        """New settings apply from the next step; accelerators built on the old ones are dropped."""
        self.settings = settings
        self._scope_matchers.clear()
        for live in self.live.values():
            live.instructions = SessionInstructionState()
            live.project_root = None

    # --- sessions -----------------------------------------------------------------------------

    async def open_session(
        self, cwd: Any, session_id: Any = None, title: Any = None
    ) -> tuple[SessionHeader, bool]:
        directory = parse_cwd(cwd)
        if session_id is not None and (not isinstance(session_id, str) or not session_id):
            raise DshError(errors.INVALID_PARAMS, "sessionId must be a non-empty string")
        if title is not None and not isinstance(title, str):
            raise DshError(errors.INVALID_PARAMS, "title must be a string")
        sid = session_id or str(uuid.uuid4())
        if sid in self.live:
            # Re-opening a live session resumes it like a new process would: caches start empty.
            live = self.live[sid]
            live.instructions = SessionInstructionState()
            live.project_root = None
            return live.header, True

        def work() -> tuple[SessionHeader, bool, tuple[int, int] | None]:
            existing = self.store.get_session(sid)
            if existing is None:
                header = SessionHeader(sid, self.clock(), directory, title)
                if self.store.create_session(header):
                    return header, False, None
                existing = self.store.get_session(sid)
                assert existing is not None
            return existing, True, self._seed_open_step(sid)

        header, resumed, open_step = await self._run(work)
        self.live[sid] = LiveSession(header, open_step=open_step)
        return header, resumed

    def _seed_open_step(self, session_id: str) -> tuple[int, int] | None:
        latest = self.store.latest_of_types(session_id, (STEP_START, STEP_END, TURN_END))
        if latest is not None and latest.type == STEP_START:
            return int(latest.data["turn"]), int(latest.data["step"])
        return None

    async def close_session(self, session_id: Any) -> None:
        live = self._live(session_id)
        if live.tail is not None:
            await asyncio.shield(live.tail)
        self.live.pop(live.header.id, None)

    async def list_sessions(self, query: Any = None, limit: Any = None) -> list[SessionHeader]:
        if query is not None and not isinstance(query, str):
            raise DshError(errors.INVALID_PARAMS, "query must be a string")
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            raise DshError(errors.INVALID_PARAMS, "limit must be a positive integer")
        headers = await self._run(self.store.list_sessions)
        if query:
            needle = query.lower()
            headers = [
                h for h in headers
                if needle in h.id.lower() or needle in h.cwd.lower() or needle in (h.title or "").lower()
            ]  # fmt: skip
        return headers[:limit] if limit is not None else headers

    async def surface(self, session_id: Any) -> SurfaceSnapshot:
        header = self._known(session_id)
        return await self._run(lambda: self.read_surface(header.id))

    def read_surface(self, session_id: str) -> SurfaceSnapshot:
        """Synchronous ``readSurface`` (also the session-reference seam); raises if unknown."""
        # One read transaction: capturedThroughSeq must describe exactly the events returned,
        # even while this session is being appended to by another thread or process.
        snapshot = self.store.surface_snapshot(session_id)
        if snapshot is None:
            raise DshError(errors.UNKNOWN_SESSION, f"SESSION_QUERY_SESSION_NOT_FOUND: {session_id}")
        return snapshot

    async def events(
        self, session_id: Any, after_seq: Any = None, limit: Any = None
    ) -> list[Event]:
        header = self._known(session_id)
        if after_seq is not None and (
            not isinstance(after_seq, int) or isinstance(after_seq, bool)
        ):
            raise DshError(errors.INVALID_PARAMS, "afterSeq must be an integer")
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            raise DshError(errors.INVALID_PARAMS, "limit must be a positive integer")
        return await self._run(
            lambda: self.store.events(
                header.id, after_seq, DEFAULT_EVENTS_LIMIT if limit is None else limit
            )
        )

    async def append(self, session_id: Any, raw_events: Any) -> list[int]:
        header = self._known(session_id)
        drafts = validate_append(raw_events)
        live = self.live.get(header.id)
        if live is None:
            events = await self._run(lambda: self.store.append(header.id, drafts))
            return [e.seq for e in events]
        async with live.lock:
            events = await self._run(lambda: self.store.append(header.id, drafts))
        return [e.seq for e in events]

    async def compact(
        self, session_id: Any, start: Any, end: Any, summary: Any, compaction_id: Any = None
    ) -> int:
        header = self._known(session_id)
        for name, value in (("start", start), ("end", end)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise DshError(errors.INVALID_PARAMS, f"{name} must be a non-negative integer")
        if not isinstance(summary, str):
            raise DshError(errors.INVALID_PARAMS, "summary must be a string")
        if compaction_id is not None and not isinstance(compaction_id, str):
            raise DshError(errors.INVALID_PARAMS, "compactionId must be a string")
        cid = compaction_id or str(uuid.uuid4())

        def work() -> int:
            checkpoint = Message.user(
                [summary], {"kind": "plugin", "plugin": "compact", "compactionId": cid}
            )
            try:
                return self.store.compact(header.id, checkpoint, start, end).seq
            except SurfaceOpError as exc:
                raise DshError(errors.INVALID_EVENT, str(exc)) from exc

        live = self.live.get(header.id)
        if live is None:
            return await self._run(work)
        async with live.lock:
            return await self._run(work)

    # --- the agent loop -----------------------------------------------------------------------

    async def prepare_step(
        self, session_id: Any, turn: Any, step: Any, prompt: Prompt | None
    ) -> PreparedStep:
        live = self._live(session_id)
        for name, value in (("turn", turn), ("step", step)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise DshError(errors.INVALID_PARAMS, f"{name} must be a positive integer")
        prompt_message = self._prompt_message(prompt) if prompt is not None else None
        await self._drain(live)
        cancelled = threading.Event()
        async with live.lock:
            work = asyncio.ensure_future(
                self._run(lambda: self._prepare_sync(live, turn, step, prompt_message, cancelled))
            )
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
        assert outcome is not None
        prepared, inbox_changed, pending_count = outcome
        live.open_step = (turn, step)
        if inbox_changed:
            self._notify_inbox(live.header.id, pending_count)
        return prepared

    def _prompt_message(self, prompt: Prompt) -> Message:
        if not isinstance(prompt.text, str):
            raise DshError(errors.INVALID_PARAMS, "prompt.text must be a string")
        source: dict[str, Any] = {"kind": "user", "rpcId": prompt.rpc_id or str(uuid.uuid4())}
        if prompt.client_time_zone is not None:
            source["clientTimeZone"] = validate_client_time_zone(prompt.client_time_zone)
        return Message.user([prompt.text], source)

    def _prepare_sync(
        self,
        live: LiveSession,
        turn: int,
        step: int,
        prompt: Message | None,
        cancelled: threading.Event,
    ) -> tuple[PreparedStep, bool, int] | None:
        sid = live.header.id
        inbox = self.store.inbox(sid)
        claimed = (*inbox, *([prompt] if prompt is not None else []))
        visible = tuple(self._visible_instructions(sid))
        inputs = StepInputs(
            session_id=sid, turn=turn, step=step, claimed=claimed, visible_instructions=visible,
            time_events=tuple(self._time_events(sid, turn)) if self.settings.time_context.enabled else (),
            tmux_events=tuple(self._tmux_events(sid)) if self.settings.tmux_context.enabled else (),
            now_ms=self.clock(),
        )  # fmt: skip
        outcome = run_pre_step(inputs, self.settings, self._hooks(live))
        drafts: list[EventDraft] = []
        if step == 1 and not self._turn_open(sid, turn):
            drafts.append(EventDraft(TURN_START, {"turn": turn}))
        drafts.append(EventDraft(STEP_START, {"turn": turn, "step": step}))
        drafts.extend(EventDraft(USER_MESSAGE, m.to_json(), "append") for m in outcome.batch)
        splice = splice_draft(inbox, outcome.inbox)
        if splice is not None:
            drafts.append(splice)
        if cancelled.is_set():
            return None
        events = self.store.append(sid, drafts, inbox=outcome.inbox if splice is not None else None)
        seqs = tuple(e.seq for e in events if e.type == USER_MESSAGE)
        return PreparedStep(outcome.batch, seqs), splice is not None, len(outcome.inbox)

    def _hooks(self, live: LiveSession) -> SourceHooks:
        settings = self.settings

        def fallback_zone() -> str:
            return settings.time_context.time_zone or time_context.system_time_zone(self.env)

        def tmux_query() -> tmux_context.TmuxLocation | None:
            return tmux_context.query_tmux(self.tmux_pid(), env=self.env)

        return SourceHooks(
            compose_env=self._compose_env(live),
            instruction_state=live.instructions,
            read_surface=self.read_surface,
            tmux_query=tmux_query,
            fallback_zone=fallback_zone,
            warn=self._warn,
        )

    def _turn_open(self, session_id: str, turn: int) -> bool:
        latest = self.store.latest_of_types(session_id, (TURN_START, TURN_END))
        return latest is not None and latest.type == TURN_START and latest.data.get("turn") == turn

    def _visible_instructions(self, session_id: str) -> list[Message]:
        out = []
        for event in self.store.visible_events_of_source(session_id, SOURCE_KIND):
            message = event.message()
            if message is not None:
                out.append(message)
        return out

    def _time_events(self, session_id: str, turn: int) -> list[Event]:
        """The few raw events the time reading's backward scans can reach, in log order.

        The latest reading, the latest model-visible message, and everything since this turn's
        ``turn/start`` reproduce the scans of reference §3.2/§3.6 without loading the whole log.
        """
        picked: dict[int, Event] = {}
        reading = self.store.latest_of_source(session_id, "plugin", "time-context")
        if reading is not None:
            picked[reading.seq] = reading
        latest_visible = self.store.latest_of_types(
            session_id, (USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT)
        )
        if latest_visible is not None:
            picked[latest_visible.seq] = latest_visible
        turn_start = self._latest_turn_start(session_id, turn)
        if turn_start is not None:
            for event in self.store.events_from(session_id, turn_start.seq):
                picked[event.seq] = event
        return [picked[s] for s in sorted(picked)]

    def _latest_turn_start(self, session_id: str, turn: int) -> Event | None:
        before: int | None = None
        while True:
            event = self.store.latest_of_types(session_id, (TURN_START,), before_seq=before)
            if event is None or event.data.get("turn") == turn:
                return event
            before = event.seq

    def _tmux_events(self, session_id: str) -> list[Event]:
        latest = self.store.latest_of_source(session_id, "plugin", "tmux-context")
        return [latest] if latest is not None else []

    async def end_step(self, session_id: Any, turn: Any, step: Any) -> None:
        live = self._live(session_id)
        for name, value in (("turn", turn), ("step", step)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise DshError(errors.INVALID_PARAMS, f"{name} must be a positive integer")
        async with live.lock:
            await self._run(
                lambda: self.store.append(
                    live.header.id, [EventDraft(STEP_END, {"turn": turn, "step": step})]
                )
            )
            live.open_step = None
            staged, live.staged = live.staged, []
        for path in staged:
            self._queue_projection(live, path)

    async def end_turn(self, session_id: Any, turn: Any, reason: Any) -> None:
        live = self._live(session_id)
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            raise DshError(errors.INVALID_PARAMS, "turn must be a positive integer")
        if not isinstance(reason, str):
            raise DshError(errors.INVALID_PARAMS, "reason must be a string")
        async with live.lock:
            await self._run(
                lambda: self.store.append(
                    live.header.id, [EventDraft(TURN_END, {"turn": turn, "reason": reason})]
                )
            )
            # Upstream quirk kept: turn/end closes the step without releasing staged touches.
            live.open_step = None

    # --- touches ------------------------------------------------------------------------------

    def tool_result(
        self,
        session_id: Any,
        token: Any,
        parent_token: Any,
        name: Any,
        arguments: Any,
        is_error: Any,
        aborted: Any = False,
    ) -> None:
        """The agent's tool-result seam (a notification: never raises for a bad touch)."""
        live = self._live(session_id)
        if not isinstance(token, str) or (
            parent_token is not None and not isinstance(parent_token, str)
        ):
            raise DshError(errors.INVALID_PARAMS, "token and parentToken must be strings")
        own = own_touch(name, arguments, is_error, aborted)
        for path in live.executions.settle(token, parent_token, own):
            self.touch(live, path)

    def touch(self, live: LiveSession, path: str) -> None:
        """Project a touch now, or stage it until the open step ends."""
        if live.open_step is not None:
            live.staged.append(path)
        else:
            self._queue_projection(live, path)

    async def editor_touch(self, paths: Sequence[str]) -> None:
        """Editor document events: a touch for every live session whose project holds the file."""
        real = await self._run(lambda: [self._real_path(os.path.abspath(p)) for p in paths])
        for live in list(self.live.values()):
            root = live.project_root
            if root is None:
                root = await self._run(partial(self._project_root, live.header.cwd))
                live.project_root = root
            for path in real:
                if is_within(path, root):
                    self.touch(live, path)

    def _real_path(self, path: str) -> str:
        """``path`` with its directory resolved through symlinks, as the session cwd is.

        The project root and cwd are real paths; a file reached through a symlinked spelling of
        the project (macOS ``/tmp``, a linked checkout) must land in the same scopes. The file
        name itself is kept: a symlinked instruction file is followed when it is read.
        """
        return os.path.join(self.fs.resolve(os.path.dirname(path)), os.path.basename(path))

    def _project_root(self, cwd: str) -> str:
        return find_project_root(cwd, self.settings.instructions.project_root_markers, self.fs)

    def _queue_projection(self, live: LiveSession, path: str) -> None:
        """Project ``path`` after every projection queued before it.

        A touch that arrives while the session's last queued projection has not started yet
        joins it: that projection reconciles all its touched paths at once (upstream's
        reconcile takes a list of them). A lone touch is projected exactly as upstream does;
        a burst (an editor opening 10,000 files, a step releasing its staged touches) costs one
        reconciliation instead of one each, and ends in the same pending message unless a
        loaded scope changes or the budget drops files in the middle of the burst, where item
        order and the budget marker may differ from one-by-one projection.
        """
        if live.batch is not None:
            live.batch.append(path)
            return
        batch = live.batch = [path]
        previous = live.tail

        async def run() -> None:
            try:
                await project()
            finally:
                if live.batch is batch:  # cancelled before it started: let touches queue anew
                    live.batch = None

        async def project() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            try:
                async with live.lock:
                    if live.batch is batch:
                        live.batch = None  # from here on, touches queue a projection of their own
                    paths = list(batch)
                    changed, count = await self._run(lambda: self._project_sync(live, paths))
            except Exception as exc:
                self._warn(REFRESH_FAILED % exc)
                return
            if changed:
                self._notify_inbox(live.header.id, count)

        live.tail = asyncio.ensure_future(run())

    def _project_sync(self, live: LiveSession, path: str | Sequence[str]) -> tuple[bool, int]:
        cwd = live.header.cwd
        touched = [
            self._real_path(os.path.join(cwd, p))
            for p in ([path] if isinstance(path, str) else path)
        ]
        sid = live.header.id
        inbox = self.store.inbox(sid)
        visible = self._visible_instructions(sid)
        pending = [m for m in inbox if m.source.get("kind") == SOURCE_KIND]
        desired = compose(
            self._compose_env(live), live.instructions,
            visible=visible, claimed=(), pending=pending, touched=touched,
        )  # fmt: skip
        new_inbox = sync_inbox(inbox, desired, visible=visible)
        if same_inbox(inbox, new_inbox):
            return False, len(inbox)
        splice = splice_draft(inbox, new_inbox)
        assert splice is not None
        self.store.append(sid, [splice], inbox=new_inbox)
        return True, len(new_inbox)

    async def _drain(self, live: LiveSession) -> None:
        """Wait until this session's queued projections have run."""
        while live.tail is not None and not live.tail.done():
            await asyncio.shield(live.tail)

    def _notify_inbox(self, session_id: str, count: int) -> None:
        if self.on_inbox_changed is not None:
            self.on_inbox_changed(session_id, count)

    # --- pending context and previews -----------------------------------------------------------

    async def pending(self, session_id: Any) -> list[Message]:
        live = self._live(session_id)
        await self._drain(live)
        return await self._run(lambda: self.store.inbox(live.header.id))

    async def preview(self, cwd: Any) -> BaselineLoad:
        directory = parse_cwd(cwd)
        return await self._run(
            lambda: load_baseline(
                directory, self.settings.instructions, self.fs, dsh_home=self.dsh_home
            )
        )

    async def scopes(self, uri: Any) -> ScopesReport:
        path = parse_file_uri(uri)
        directory = os.path.dirname(path) if not os.path.isdir(path) else path
        if not os.path.isdir(directory):
            raise DshError(errors.INVALID_URI, f"{directory} is not an existing directory")
        return await self._run(lambda: self._scopes_sync(directory))

    def _scopes_sync(self, directory: str) -> ScopesReport:
        with self._scope_lock:
            load = load_document_chain(
                directory, self.settings.instructions, self.fs, dsh_home=self.dsh_home,
                matchers=self._scope_matchers,
            )  # fmt: skip
        scopes = {e.candidate.scope for e in load.entries}
        active: dict[str, list[Change]] = {}
        for sid in self.live:
            effective = effective_changes(self._visible_instructions(sid), ())
            active[sid] = [c for s, c in effective.items() if s in scopes and c.active]
        return ScopesReport(load.project_root, load.cwd, load, active)

    async def candidates(self, session_id: Any, query: Any = None) -> list[resolver.Candidate]:
        live = self._live(session_id)
        if query is not None and not isinstance(query, str):
            raise DshError(errors.INVALID_PARAMS, "query must be a string")
        settings = self.settings.session_reference

        def work() -> list[resolver.Candidate]:
            headers = self.store.list_sessions()
            titles = {h.id: h.title for h in headers}
            return resolver.list_candidates(
                target_id=live.header.id, target_cwd=live.header.cwd, query=query or "",
                limit=settings.candidate_limit, sessions=headers, titles=titles,
            )  # fmt: skip

        return await self._run(work)

    async def shutdown(self) -> None:
        for live in list(self.live.values()):
            if live.tail is not None:
                await asyncio.gather(live.tail, return_exceptions=True)
        self.live.clear()
        self.store.close()


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


def parse_file_uri(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise DshError(errors.INVALID_URI, "uri must be a non-empty string")
    if value.startswith("file:"):
        parsed = urlparse(value)
        if parsed.netloc not in ("", "localhost"):
            raise DshError(errors.INVALID_URI, f"{value!r} is not a local file URI")
        path = unquote(parsed.path)
    else:
        path = value
    if not os.path.isabs(path):
        raise DshError(errors.INVALID_URI, f"{value!r} is not an absolute path or file: URI")
    return os.path.normpath(path)


def parse_cwd(value: Any) -> str:
    """An absolute path or ``file:`` URI naming an existing directory."""
    try:
        path = parse_file_uri(value)
    except DshError as exc:
        raise DshError(errors.INVALID_CWD, f"cwd: {exc.message}") from exc
    if not os.path.isdir(path):
        raise DshError(errors.INVALID_CWD, f"cwd {path!r} is not an existing directory")
    return path

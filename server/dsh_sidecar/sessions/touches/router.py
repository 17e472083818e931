"""Which live sessions a touch reaches, and when it is handed to their projection queues.

Loop only. An agent's tool result reaches its own session through the gate (``gate.py``); an
editor's path reaches every live session whose project root holds it. A session with an open
step stages the touch until ``dsh/step/end`` releases it; otherwise it joins the session's
``ProjectionQueue``. The cost of a touch is the sessions it reaches: a path is checked against
an index of the live sessions by project root, one look-up per ancestor directory of the path,
so it costs the depth of the path and the sessions it reaches, never a pass over every session.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from functools import partial

from dsh_sidecar.sources.agent_instructions.discovery import find_project_root

from ..host import Host, not_open
from ..live import LiveSession
from .gate import own_touch
from .projection import Touched, real_path, touch_path
from .projector import Projector

_Unresolved = tuple[str, frozenset[str]]  # a path as spelled, the sessions that have it already


class TouchRouter:
    def __init__(self, host: Host, live: Mapping[str, LiveSession], projector: Projector) -> None:
        self.host = host
        self.live = live  # the service's live sessions (read here, changed by the service)
        self.projector = projector
        # Editor touches not yet handed to their sessions: the batch still taking paths, and
        # every batch not done (``settled`` waits for them).
        self._batch: list[_Unresolved] | None = None
        self._task: asyncio.Future[None] | None = None
        self._unsettled: set[asyncio.Future[None]] = set()
        self._index: dict[str, list[LiveSession]] | None = None  # project root -> sessions

    def roots_changed(self) -> None:
        """Sessions opened or closed, or a root found or forgotten: index them again."""
        self._index = None

    def reached(self, path: str) -> list[LiveSession]:
        """The live sessions whose project root holds ``path`` (as spelled)."""
        index = self._index
        if index is None:
            index = self._index = {}
            for live in self.live.values():
                if live.project_root is not None:
                    index.setdefault(os.path.normpath(live.project_root), []).append(live)
        out: list[LiveSession] = []
        directory = os.path.normpath(path)
        while True:
            out.extend(index.get(directory, ()))
            parent = os.path.dirname(directory)
            if parent == directory:
                return out
            directory = parent

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
        """The agent's tool-result seam (synchronous: results stage in the order they came)."""
        live = self.live.get(session_id)
        if live is None:
            raise not_open(session_id)
        own = own_touch(name, arguments, is_error, aborted)
        for path in live.executions.settle(token, parent_token, own):
            self.touch(live, Touched(path))

    def touch(self, live: LiveSession, touched: Touched) -> None:
        """Project a touch now, or stage it until the open step ends."""
        if live.open_step is not None:
            live.staged.append(touched)
        else:
            live.projections.add(touched, self.projector, live)

    def release(self, live: LiveSession) -> None:
        """The step ended: its staged touches go to the queue, in the order they came."""
        staged, live.staged = live.staged, []
        for touched in staged:
            live.projections.add(touched, self.projector, live)

    def editor_touch(self, paths: Sequence[str]) -> asyncio.Future[None]:
        """Editor document events: a touch for every live session whose project holds the file.

        Handled at once, so a ``pending``, ``prepare`` or ``discard`` that arrives after the
        editor's notification sees it: a path spelled inside a session's project goes to its
        queue now (its projection resolves it, and drops it if it really leads elsewhere); the
        rest (spelled through a link from outside, or a session whose root is not known yet)
        join the batch that has not started yet, resolved in one worker hop, and requests wait
        for those batches (``settled``).
        """
        unresolved: list[_Unresolved] = []
        for raw in paths:
            path = touch_path(raw)
            queued = set()
            for live in self.reached(path):
                self.touch(live, Touched(path, editor=True))
                queued.add(live.header.id)
            if len(queued) < len(self.live):
                unresolved.append((path, frozenset(queued)))
        if not unresolved:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        batch, task = self._batch, self._task
        if batch is None or task is None:
            batch = self._batch = []
            task = self._task = asyncio.ensure_future(self._resolve(batch))
            self._unsettled.add(task)
            task.add_done_callback(self._unsettled.discard)
        batch.extend(unresolved)
        return asyncio.shield(task)

    async def _resolve(self, batch: list[_Unresolved]) -> None:
        if self._batch is batch:
            self._batch = None  # from here on, touches start a batch of their own
        host = self.host
        fs = host.fs
        real = await host.workers.fs(lambda: [real_path(fs, p) for p, _ in batch])
        markers = host.settings.instructions.project_root_markers
        for live in [live for live in self.live.values() if live.project_root is None]:
            live.project_root = await host.workers.fs(
                partial(find_project_root, live.header.cwd, markers, fs)
            )
            self.roots_changed()
        for path, (_, queued) in zip(real, batch, strict=True):
            for live in self.reached(path):
                if live.header.id not in queued and live.header.id in self.live:
                    self.touch(live, Touched(path))

    async def settled(self) -> None:
        """Wait for the editor touches registered so far to reach their sessions' queues."""
        if self._unsettled:
            await asyncio.gather(*list(self._unsettled), return_exceptions=True)

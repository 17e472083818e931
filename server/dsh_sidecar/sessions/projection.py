"""Touch projection: reconcile touched paths against what the model has seen, queue the result.

``ProjectionQueue`` lives on the event loop (one per live session) and orders projections;
``project_touches`` is the blocking part, run in a store worker while the session lock is held.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Awaitable, Callable, Mapping

import attrs

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.compose import (
    ComposeEnv,
    SessionInstructionState,
    compose,
    sync_inbox,
)
from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND, Change

from .inbox import same_inbox, splice_draft
from .instruction_log import visible_instructions
from .store import Store


class ProjectionQueue:
    """Projections of one session, run one after another in the order their touches came.

    A touch that arrives while the last queued projection has not started yet joins it: that
    projection reconciles all its touched paths at once (upstream's reconcile takes a list of
    them). A lone touch is projected exactly as upstream does; a burst (an editor opening 10,000
    files, a step releasing its staged touches) costs one reconciliation instead of one each,
    and ends in the same pending message unless a loaded scope changes or the budget drops files
    in the middle of the burst, where item order and the budget marker may differ.
    """

    def __init__(self) -> None:
        self.tail: asyncio.Future[None] | None = None
        self._batch: list[str] | None = None

    def add(self, path: str, run: Callable[[list[str]], Awaitable[None]]) -> None:
        """Queue ``path``; ``run(paths)`` is awaited when its batch's turn comes."""
        if self._batch is not None:
            self._batch.append(path)
            return
        batch = self._batch = [path]
        previous = self.tail

        async def go() -> None:
            try:
                if previous is not None:
                    await asyncio.gather(previous, return_exceptions=True)
                if self._batch is batch:
                    self._batch = None  # from here on, touches queue a projection of their own
                await run(list(batch))
            finally:
                if self._batch is batch:  # cancelled before it started: let touches queue anew
                    self._batch = None

        self.tail = asyncio.ensure_future(go())

    async def drain(self) -> None:
        """Wait until every projection queued so far has run."""
        while self.tail is not None and not self.tail.done():
            await asyncio.shield(self.tail)

    async def settle(self) -> None:
        """``drain``, swallowing the failures (already reported) of queued projections."""
        if self.tail is not None:
            await asyncio.gather(self.tail, return_exceptions=True)


@attrs.frozen
class ProjectionJob:
    session_id: str
    env: ComposeEnv
    # Owned by this job: the session lock is held while it runs, and the loop only replaces it.
    instructions: SessionInstructionState
    touched: tuple[str, ...]
    dismissed: Mapping[str, Change]


@attrs.frozen
class ProjectionResult:
    changed: bool
    pending_count: int


def real_path(fs: LocalFileSystem, path: str) -> str:
    """``path`` with its directory resolved through symlinks, as the session cwd is.

    The project root and cwd are real paths; a file reached through a symlinked spelling of the
    project (macOS ``/tmp``, a linked checkout) must land in the same scopes. The file name itself
    is kept: whether a symlinked instruction file may be read is decided when it is probed.

    A directory is touched as a directory: a path written with a trailing slash (``pkg/``), or
    one that is an existing directory (an editor creating or renaming a folder), comes back as
    the real directory with a trailing separator, so the walk reaches the directory itself
    instead of stopping at its parent as it would for a file named ``pkg``.
    """
    if path.endswith((os.sep, os.sep + ".")) or _is_directory(fs, path):
        return os.path.join(fs.resolve(path), "")
    return os.path.join(fs.resolve(os.path.dirname(path)), os.path.basename(path))


def _is_directory(fs: LocalFileSystem, path: str) -> bool:
    try:
        return stat.S_ISDIR(fs.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def touch_path(path: str) -> str:
    """An absolute spelling of an editor's path that keeps a trailing slash (``abspath`` drops it)."""
    absolute = os.path.abspath(path)
    return os.path.join(absolute, "") if path.endswith(os.sep) else absolute


def project_touches(store: Store, job: ProjectionJob) -> ProjectionResult:
    """Reconcile ``job.touched`` and sync the inbox, writing one splice when it changed."""
    env = job.env
    touched = [real_path(env.fs, os.path.join(env.cwd, p)) for p in job.touched]
    sid = job.session_id
    inbox = store.inbox(sid)
    visible = visible_instructions(store, sid)
    pending = [m for m in inbox if m.source.get("kind") == SOURCE_KIND]
    desired = compose(
        env, job.instructions, visible=visible, claimed=(), pending=pending, touched=touched,
        dismissed=job.dismissed,
    )  # fmt: skip
    new_inbox = sync_inbox(inbox, desired, visible=visible)
    if same_inbox(inbox, new_inbox):
        return ProjectionResult(False, len(inbox))
    splice = splice_draft(inbox, new_inbox)
    assert splice is not None
    store.append(sid, [splice], inbox=new_inbox)
    return ProjectionResult(True, len(new_inbox))

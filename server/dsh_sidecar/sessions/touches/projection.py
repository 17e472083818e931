"""Touch projection: reconcile touched paths against what the model has seen, queue the result.

``project_touches`` is the blocking part, run in a store worker while the session lock is held
(or by ``dsh-sidecar hook`` in its one process); ``queue.ProjectionQueue`` lives on the event
loop (one per live session) and orders projections, calling ``projector.Projector``. Those are
modules of their own so that the hook path never loads asyncio.
"""

from __future__ import annotations

import os
import stat

import attrs

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.model import Message
from dsh_sidecar.sessions.inbox import same_inbox, splice_draft
from dsh_sidecar.sessions.instruction_log import visible_instructions
from dsh_sidecar.sessions.job import SessionJob
from dsh_sidecar.sessions.store import Store
from dsh_sidecar.sources.agent_instructions.compose import compose, sync_inbox
from dsh_sidecar.sources.agent_instructions.paths import is_within
from dsh_sidecar.sources.agent_instructions.reconcile import PlanCache
from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND
from dsh_sidecar.sources.observed import Observations, ObservingFileSystem


@attrs.frozen
class Touched:
    """A touched path, and whether the editor touched it (see ``ProjectionJob.editor``)."""

    path: str
    editor: bool = False


@attrs.define(eq=False)
class ProjectionMemo:
    """The last projection of a session that changed nothing, and what its answer rested on.

    An editor touches the same few files over and over (saves, hovers that open them), and
    with nothing changed on disk a projection only confirms that the pending context stays as
    it is: reconciling every scope again, re-reading the files only the pending message names
    (they are not in effect yet, so no version in the cache vouches for them) and rendering it.
    Kept with the filesystem observations of that projection (``sources.observed``) and with
    every input it depended on, it is reused while all of them hold: the same touched
    directories, inbox, visible messages (by generation), dropped changes, preparation and
    settings. An accelerator like ``SessionInstructionState``: lent to the job holding the
    session lock, dropped with the session's caches.
    """

    key: tuple[object, ...] | None = None
    same: tuple[object, ...] = ()  # compared by identity
    observations: Observations | None = None
    reused: int = 0  # how many projections it answered (tests check reuse and invalidation)

    def holds(self, key: tuple[object, ...], same: tuple[object, ...], fs: LocalFileSystem) -> bool:
        held = (
            self.key == key
            and len(same) == len(self.same)
            and all(a is b for a, b in zip(same, self.same, strict=True))
            and self.observations is not None
            and self.observations.still_hold(fs)
        )
        self.reused += held
        return held

    def keep(
        self, key: tuple[object, ...], same: tuple[object, ...], observations: Observations
    ) -> None:
        if observations.finish():
            self.key, self.same, self.observations = key, same, observations
        else:
            self.forget()

    def forget(self) -> None:
        self.key, self.same, self.observations = None, (), None


@attrs.frozen(kw_only=True)
class ProjectionJob(SessionJob):
    touched: tuple[Touched, ...]
    # The inbox as the loop knows it (None: read it from the store), and the generation of the
    # session's visible instruction messages (it changes whenever they may have).
    inbox: tuple[Message, ...] | None = None
    visible_gen: int = 0
    memo: ProjectionMemo = attrs.field(factory=ProjectionMemo)  # lent like ``instructions``
    # An editor touch is the session's only when the file really lies in its project: the loop
    # queued it by its spelling, and the job drops it when its real path leads elsewhere.
    project_root: str | None = None


@attrs.frozen
class ProjectionResult:
    changed: bool
    inbox: tuple[Message, ...]

    @property
    def pending_count(self) -> int:
        return len(self.inbox)


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
    sid = job.session_id
    touched = []
    for each in job.touched:
        real = real_path(env.fs, os.path.join(env.cwd, each.path))
        if each.editor and job.project_root and not is_within(real, job.project_root):
            continue  # spelled inside the project, really elsewhere: not this session's
        touched.append(real)
    inbox = job.inbox if job.inbox is not None else tuple(store.inbox(sid))
    if not touched:
        return ProjectionResult(False, inbox)
    state = job.instructions
    if len(touched) > PlanCache.MAX_TOUCHED:
        # A burst (an editor opening thousands of files) never repeats: nothing worth keeping.
        job.memo.forget()
        return _project(store, job, inbox, touched, env.fs)
    key = (
        tuple(os.path.dirname(p) for p in touched), tuple(m.id for m in inbox), job.visible_gen,
        env.cwd, env.dsh_home, env.os_home,
    )  # fmt: skip
    same = (env.settings, env.fs, job.dismissed, state.preparation)
    if job.memo.holds(key, same, env.fs):
        return ProjectionResult(False, inbox)
    observations = Observations()
    result = _project(store, job, inbox, touched, ObservingFileSystem(env.fs, observations))
    if result.changed:
        job.memo.forget()
    else:
        # Kept only now: compose may have set the preparation this key did not see.
        job.memo.keep(key, (env.settings, env.fs, job.dismissed, state.preparation), observations)
    return result


def _project(
    store: Store,
    job: ProjectionJob,
    inbox: tuple[Message, ...],
    touched: list[str],
    fs: LocalFileSystem,
) -> ProjectionResult:
    """Compose through ``fs`` and sync the inbox, writing one splice when it changed."""
    env, sid, state = job.env, job.session_id, job.instructions
    visible = list(job.visible) if job.visible is not None else visible_instructions(store, sid)
    pending = [m for m in inbox if m.source.get("kind") == SOURCE_KIND]
    # The session's kept ignore matcher and rule index ask ``fs`` too (compose lends them it).
    desired = compose(
        attrs.evolve(env, fs=fs), state, visible=visible, claimed=(), pending=pending,
        touched=touched, dismissed=job.dismissed,
    )  # fmt: skip
    new_inbox = sync_inbox(inbox, desired, visible=visible)
    if same_inbox(inbox, new_inbox):
        return ProjectionResult(False, inbox)
    splice = splice_draft(inbox, new_inbox)
    assert splice is not None
    store.append(sid, [splice], inbox=new_inbox)
    return ProjectionResult(True, tuple(new_inbox))

"""Dynamic reconciliation (docs/reference/agent-instructions.md, Reconcile): which scopes changed since the model last saw them.

Scopes are probed in a fixed order and grouped by directory. Absence is confirmed deletion;
unavailability (EACCES, EIO, a probe error) is never treated as deletion and rolls back the whole
directory group, so a warm and a cold cache behave identically. A scope whose cached version,
path and digest all match the effective state is confirmed without reading it.

A project scope whose real target lies outside the project (``confinement``) counts as absent:
an active one is removed, an inactive one is never read (the read itself checks where the file
it opened lives, before reading a byte). The version fast path needs no such check: a cached
version was recorded from a confined read, and a link re-pointed anywhere else reaches another
inode (or changes the ctime), so the version no longer matches.
"""

from __future__ import annotations

import contextlib
import os
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem, Probe, ProbeState, ReadFailure, ReadResult
from dsh_sidecar.model import Message

from .confinement import Confinement, confinement_for
from .digests import sha1_hex, trimmed_digest
from .discovery import (
    ancestor_chain,
    descendant_dirs_between,
    directory_candidates,
    user_global_candidate,
)
from .gitignore import IgnoreMatcher
from .paths import (
    USER_GLOBAL,
    relative_path,
    scope_abs_path,
    scope_dir_of_display,
    split_scope,
)
from .render import RenderItem, RenderResult, render
from .state import Change, changes_of


@attrs.frozen
class CacheEntry:
    """What we last confirmed about one scope; never prose.

    Interned: every live session over one project confirms the same files, so a hundred sessions
    share one copy of each path, version and digest (and of each entry: ``shared``) instead of
    holding a hundred.
    """

    path: str = attrs.field(converter=sys.intern)
    version: str = attrs.field(converter=sys.intern)
    digest: str = attrs.field(converter=sys.intern)
    trimmed: str = attrs.field(converter=sys.intern)

    def shared(self) -> CacheEntry:
        """The one live entry equal to this one."""
        try:
            return _SHARED_ENTRIES.setdefault(self, self)
        except RuntimeError:  # another thread changed the table at the same moment
            return self


_SHARED_ENTRIES: weakref.WeakValueDictionary[CacheEntry, CacheEntry] = weakref.WeakValueDictionary()


VersionCache = dict[str, CacheEntry]


@attrs.frozen
class ScopeRef:
    scope: str
    abs_path: str
    display_path: str


@attrs.frozen
class ReconcileResult:
    text: str
    changes: tuple[Change, ...]


@attrs.frozen
class _Item:
    change: Change
    content: str = ""
    entry: CacheEntry | None = None


@attrs.frozen(eq=False)
class _Plan:
    """The scopes a reconciliation probes, grouped by directory, and what that order rests on:
    a pure function of the key below plus the ignore decisions, themselves a function of the
    .gitignore files consulted, and the touched directories found missing (both checked again,
    by probe, before the plan is reused)."""

    groups: tuple[tuple[ScopeRef, ...], ...]
    baseline_keys: frozenset[str]
    ignore_files: tuple[tuple[str, tuple[ProbeState, str | None]], ...]
    missing: tuple[str, ...] = ()


class PlanCache:
    """Per-session memo of reconciliation plans: a warm touch repeats one.

    Plans hold scope paths and ignore decisions only. Instruction prose is never cached (as
    upstream): a read is confirmed by its digest each time the version fast path cannot apply.
    """

    LIMIT = 4  # a warm touch repeats one plan; a few cover alternating touches
    # A burst touches hundreds of files at once and never repeats: its plan is not kept.
    MAX_TOUCHED = 32

    def __init__(self) -> None:
        self._plans: dict[tuple[object, ...], _Plan] = {}

    def get(self, key: tuple[object, ...]) -> _Plan | None:
        return self._plans.get(key)

    def put(self, key: tuple[object, ...], plan: _Plan) -> None:
        if len(self._plans) >= self.LIMIT:
            del self._plans[next(iter(self._plans))]
        self._plans[key] = plan


@attrs.define
class ReconcileContext:
    project_root: str
    cwd: str
    settings: InstructionSettings
    dsh_home: str
    fs: LocalFileSystem
    os_home: str  # the session's home directory: display paths and ``~`` in settings
    ignore: IgnoreMatcher | None = None
    plans: PlanCache | None = None
    _confinement: Confinement | None = attrs.field(default=None, init=False)

    def read_allowed(self, ref: ScopeRef) -> Callable[[str], bool] | None:
        """The test a scope's read puts to the real path of the file it opens: none for the
        user-global file, the project's confinement for every other."""
        if split_scope(ref.scope)[0] == USER_GLOBAL:
            return None
        if self._confinement is None:
            # Resolved on first need: a warm touch confirms every scope by its version alone.
            self._confinement = confinement_for(
                self.project_root, self.settings, self.fs, self.os_home
            )
        return self._confinement.allows_path

    def baseline_scopes(self) -> list[ScopeRef]:
        ug = user_global_candidate(self.dsh_home, self.os_home)
        out = [ScopeRef(ug.scope, ug.abs_path, ug.display_path)]
        for directory in ancestor_chain(self.project_root, self.cwd):
            out.extend(self.directory_scopes(directory))
        return out

    def directory_scopes(self, directory: str) -> list[ScopeRef]:
        return list(self._directory_refs(directory))

    def _directory_refs(self, directory: str) -> tuple[ScopeRef, ...]:
        s = self.settings
        return _directory_refs(self.project_root, directory, s.base_candidates, s.local_candidates)

    def scope_ref(self, scope: str) -> ScopeRef:
        directory, _ = split_scope(scope)
        if directory == USER_GLOBAL:
            ug = user_global_candidate(self.dsh_home, self.os_home)
            return ScopeRef(scope, ug.abs_path, ug.display_path)
        abs_path = scope_abs_path(scope, self.project_root, self.dsh_home)
        return ScopeRef(scope, abs_path, relative_path(abs_path, self.project_root))

    def sibling_scopes(self, scope: str) -> list[ScopeRef]:
        """Every candidate of the scope's directory, so a new sibling is discovered."""
        directory, _ = split_scope(scope)
        if directory == USER_GLOBAL:
            return [self.scope_ref(scope)]
        return self.directory_scopes(self._scope_directory(directory))

    def _scope_directory(self, directory: str) -> str:
        return self.project_root if directory == "." else os.path.join(self.project_root, directory)


@lru_cache(maxsize=4096)
def _directory_refs(
    project_root: str, directory: str, base: tuple[str, ...], local: tuple[str, ...]
) -> tuple[ScopeRef, ...]:
    """A directory's candidate slots, memoized: a pure function of strings whose display paths
    cost an ``os.path.relpath`` each, which would otherwise dominate a warm touch."""
    settings = InstructionSettings(
        instruction_file_candidates=base, local_instruction_file_candidates=local
    )
    return tuple(
        ScopeRef(c.scope, c.abs_path, c.display_path)
        for c in directory_candidates(project_root, directory, settings)
    )


def reconcile(
    ctx: ReconcileContext,
    *,
    effective: Mapping[str, Change],
    scope_messages: Sequence[Message],
    touched: Sequence[str],
    include_baseline_scopes: bool,
    excluded: frozenset[str],
    cache: VersionCache,
    dismissed: Mapping[str, Change] | None = None,
) -> ReconcileResult | None:
    """Probe the ordered scopes, emit set/replace/remove, render; mutate ``cache`` for commits.

    ``dismissed`` holds transitions the user dropped from the pending context, by scope: the same
    transition (a set or replace of the same content, or a removal) is not offered again.
    """
    # One ignore pass: each .gitignore is probed once and each directory decided once.
    with ctx.ignore.one_pass() if ctx.ignore is not None else contextlib.nullcontext():
        plan = _plan(ctx, effective, scope_messages, touched, include_baseline_scopes, excluded)
        baseline_keys = plan.baseline_keys
        items: list[_Item] = []
        seen_paths: set[str] = set()
        for group in plan.groups:
            items.extend(
                _reconcile_directory(
                    ctx, group, effective, baseline_keys, excluded, cache, seen_paths
                )
            )
        if dismissed:
            items = [i for i in items if not is_dismissed(i.change, dismissed)]
        if not items:
            return None
        result = _render(ctx, items)
        committed = [items[i] for i in sorted(result.represented)]
        if not result.text or not committed:
            return None  # nothing represented (the reference's Variant choices); retried at the next touch
        for item in committed:
            if item.change.action == "remove":
                cache.pop(item.change.scope, None)
            elif item.entry is not None:
                cache[item.change.scope] = item.entry
        return ReconcileResult(result.text, tuple(i.change for i in committed))


def is_dismissed(change: Change, dismissed: Mapping[str, Change]) -> bool:
    """Whether the user already dropped this very transition (same scope, same outcome)."""
    dropped = dismissed.get(change.scope)
    if dropped is None or dropped.active != change.active:
        return False
    return not change.active or dropped.digest == change.digest


def _render(ctx: ReconcileContext, items: list[_Item]) -> RenderResult:
    return render([_render_item(i) for i in items], ctx.settings.max_bytes, None)


def _read_scope(ctx: ReconcileContext, ref: ScopeRef, probe: Probe) -> ReadResult:
    """The read of a present scope, refused (``NOT_ALLOWED``) when the file it opens really
    lives outside the project."""
    return ctx.fs.read_text(probe, ctx.settings.max_source_bytes, allowed=ctx.read_allowed(ref))


def _plan(
    ctx: ReconcileContext,
    effective: Mapping[str, Change],
    scope_messages: Sequence[Message],
    touched: Sequence[str],
    include_baseline: bool,
    excluded: frozenset[str],
) -> _Plan:
    """Which scopes to probe, in which groups: reused while its inputs are the same, since
    working it out costs several times the probes themselves on a warm touch."""
    key: tuple[object, ...] | None = None
    if ctx.plans is not None:
        key = (
            ctx.project_root, ctx.cwd, ctx.dsh_home, ctx.os_home, ctx.settings,
            include_baseline, excluded, tuple(effective),
            tuple(c.scope for m in scope_messages for c in changes_of(m)),
            tuple(os.path.dirname(os.path.join(ctx.cwd, p)) for p in touched),
        )  # fmt: skip
        plan = ctx.plans.get(key)
        if (
            plan is not None
            and (ctx.ignore is None or ctx.ignore.unchanged(plan.ignore_files))
            and not any(ctx.fs.is_directory(d) for d in plan.missing)
        ):
            return plan
    baseline_refs = ctx.baseline_scopes()
    baseline_keys = {r.scope for r in baseline_refs}
    missing: list[str] = []
    ordered = _ordered_scopes(ctx, baseline_refs, baseline_keys, effective, scope_messages, touched,
                              include_baseline, missing)  # fmt: skip
    consulted = ctx.ignore.consulted() if ctx.ignore is not None else ()
    plan = _Plan(
        tuple(_shared_group(ctx, g) for g in _group_by_directory(ordered)),
        frozenset(baseline_keys),
        consulted or (),
        tuple(missing),
    )
    if (
        ctx.plans is not None
        and key is not None
        and consulted is not None
        and len(touched) <= PlanCache.MAX_TOUCHED
    ):
        ctx.plans.put(key, plan)
    return plan


def _ordered_scopes(
    ctx: ReconcileContext,
    baseline_refs: list[ScopeRef],
    baseline_keys: set[str],
    effective: Mapping[str, Change],
    scope_messages: Sequence[Message],
    touched: Sequence[str],
    include_baseline: bool,
    missing: list[str],
) -> list[ScopeRef]:
    """The scopes to probe, in order; the first missing directory on the way to each touched
    path goes to ``missing``."""
    ordered: dict[str, ScopeRef] = {}

    def add(ref: ScopeRef) -> None:
        ordered.setdefault(ref.scope, ref)

    if include_baseline:
        for ref in baseline_refs:
            add(ref)
    for message in scope_messages:
        for change in changes_of(message):
            if include_baseline or change.scope not in baseline_keys:
                add(ctx.scope_ref(change.scope))
    # Every sibling of each effective scope's directory; one visit per directory gives the same
    # order as one per scope (later visits add nothing) at a quarter of the cost.
    directories: dict[str, None] = {}
    for scope in effective:
        if include_baseline or scope not in baseline_keys:
            directory = split_scope(scope)[0]
            if directory == USER_GLOBAL:
                add(ctx.scope_ref(scope))
            elif directory not in directories:
                directories[directory] = None
                for ref in ctx._directory_refs(ctx._scope_directory(directory)):
                    add(ref)
    present: dict[str, bool] = {}  # touches in a burst share their directories: ask once
    for path in touched:
        for directory in descendant_dirs_between(ctx.cwd, path):
            there = present.get(directory)
            if there is None:
                there = present[directory] = ctx.fs.is_directory(directory)
            if not there:
                # Nothing can be below a directory that is not there: every candidate from here
                # down would probe absent (or unavailable, which discovers nothing either), and
                # a touch of a path thousands of components deep would cost the square of that.
                missing.append(directory)
                break
            if ctx.ignore is not None and ctx.ignore.check_directory(directory) is not None:
                break  # nothing below an ignored directory is discovered by a touch
            for ref in ctx._directory_refs(directory):
                # The directory itself passed just above, so only the file's own name is left
                # to test (check_candidate minus the directory walk it would repeat).
                if ctx.ignore is None or ctx.ignore.check_excluded_file(ref.abs_path) is None:
                    add(ref)
    return list(ordered.values())


def _shared_group(ctx: ReconcileContext, group: list[ScopeRef]) -> tuple[ScopeRef, ...]:
    """``group`` as a tuple; the directory's memoized candidate tuple when it is exactly that
    (the usual case), so a hundred sessions' plans over one project share their groups."""
    directory = split_scope(group[0].scope)[0]
    if directory != USER_GLOBAL:
        refs = ctx._directory_refs(ctx._scope_directory(directory))
        if len(refs) == len(group) and all(a is b for a, b in zip(refs, group, strict=True)):
            return refs
    return tuple(group)


def _group_by_directory(refs: list[ScopeRef]) -> list[list[ScopeRef]]:
    groups: dict[str, list[ScopeRef]] = {}
    for ref in refs:
        groups.setdefault(split_scope(ref.scope)[0], []).append(ref)
    return list(groups.values())


def _reconcile_directory(
    ctx: ReconcileContext,
    group: Sequence[ScopeRef],
    effective: Mapping[str, Change],
    baseline_keys: frozenset[str] | set[str],
    excluded: frozenset[str],
    cache: VersionCache,
    seen_paths: set[str],
) -> list[_Item]:
    items: list[_Item] = []

    def active(scope: str) -> Change | None:
        change = effective.get(scope)
        return change if change is not None and change.active else None

    probed = []
    for ref in group:
        if ref.scope in baseline_keys and ref.scope in excluded:
            # Frozen out until the preparation is recomputed (upstream quirk): never probed.
            current = active(ref.scope)
            if current is not None:
                items.append(_Item(Change("remove", ref.scope, current.path)))
            else:
                cache.pop(ref.scope, None)
        else:
            probed.append(ref)

    prior = {ref.scope: cache.get(ref.scope) for ref in probed}
    registered: set[str] = set()
    group_items: list[_Item] = []
    group_paths: set[str] = set()
    fs = ctx.fs
    for ref in probed:
        current = effective.get(ref.scope)
        if current is not None and not current.active:
            current = None
        cached = cache.get(ref.scope)
        found = fs.quick_stat(ref.abs_path)
        read: ReadResult | None = None
        if isinstance(found, Probe):
            state, version = found.state, found.version
        else:
            state, version = ProbeState.PRESENT, found[0]
            if not _confirmed(cached, current, ref, version):
                # Not confirmed by its version: read it, asking where the opened file lives.
                probe = Probe(ProbeState.PRESENT, ref.abs_path, None, version, found[1])
                read = _read_scope(ctx, ref, probe)
                if read.failure is ReadFailure.NOT_ALLOWED:
                    state = ProbeState.ABSENT  # leads outside the project: as if it were gone
        if state is ProbeState.UNAVAILABLE:
            if current is None:
                continue
            # Roll the whole directory back: nothing changes for any of its candidates.
            for scope, entry in prior.items():
                if entry is None:
                    cache.pop(scope, None)
                else:
                    cache[scope] = entry
            seen_paths.difference_update(group_paths)
            return []
        if state is ProbeState.ABSENT:
            if current is not None:
                group_items.append(_Item(Change("remove", ref.scope, current.path)))
            cache.pop(ref.scope, None)
            continue
        if ref.abs_path in seen_paths:
            continue
        seen_paths.add(ref.abs_path)
        group_paths.add(ref.abs_path)
        if read is None:
            assert cached is not None and current is not None
            if cached.trimmed in registered:
                group_items.append(_Item(Change("remove", ref.scope, current.path)))
            registered.add(cached.trimmed)
            continue
        if read.text is None:
            continue  # a failed read means "no change" for this scope
        text = read.text
        # The version of the bytes actually read (the file may have changed since its stat).
        entry = CacheEntry(
            ref.display_path, read.version or version or "", sha1_hex(text), trimmed_digest(text)
        ).shared()
        if entry.trimmed in registered:
            if current is not None:
                group_items.append(_Item(Change("remove", ref.scope, current.path)))
            else:
                cache.pop(ref.scope, None)
            continue
        registered.add(entry.trimmed)
        if (
            current is not None
            and current.path == ref.display_path
            and current.digest == entry.digest
        ):
            cache[ref.scope] = entry  # same content, new version: refresh without model output
            continue
        change = Change(
            "replace" if current is not None else "set", ref.scope, ref.display_path, entry.digest
        )
        group_items.append(_Item(change, text, entry))
    return items + group_items


def _confirmed(
    cached: CacheEntry | None, current: Change | None, ref: ScopeRef, version: str
) -> bool:
    """The version fast path: the active change is exactly what was last read
    at this version, so the scope is confirmed without reading it."""
    return (
        cached is not None
        and current is not None
        and cached.path == ref.display_path
        and cached.version == version
        and current.path == cached.path
        and current.digest == cached.digest
    )


def _render_item(item: _Item) -> RenderItem:
    change = item.change
    if change.action == "set":
        return RenderItem("set", change.path, item.content, scope_dir_of_display(change.path))
    if change.action == "replace":
        return RenderItem("replace", change.path, item.content)
    return RenderItem("remove", change.path)

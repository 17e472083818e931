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

from dsh_sidecar.config import OVERRIDDEN_NAME, OVERRIDE_NAME, InstructionSettings, expand_tilde
from dsh_sidecar.fs import LocalFileSystem, Probe, ProbeState, ReadFailure, ReadResult
from dsh_sidecar.model import Message

from .baseline import rule_index
from .confinement import Confinement, confinement_for
from .content import Content, ContentRules, plain
from .discovery import (
    ancestor_chain,
    descendant_dirs_between,
    directory_candidates,
    home_display,
    user_global_candidate,
    user_global_candidates,
)
from .gitignore import IgnoreMatcher
from .imports import deps_unchanged
from .paths import (
    USER_GLOBAL,
    USER_GLOBAL_NAME,
    is_within,
    relative_path,
    scope_abs_path,
    scope_dir_of_display,
    scope_key,
    split_scope,
)
from .render import RenderItem, RenderResult, render
from .rules import Applicability, RuleIndex, is_rule_scope, rule_scope_parts
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
    # With instructions.imports: every file the scope's imports looked at, with its version
    # ("" while absent); the fast path confirms these too.
    deps: tuple[tuple[str, str], ...] = ()

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
    applies: Applicability | None = None  # a rule's frontmatter, for its set template


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
    rules: RuleIndex | None = None  # the session's kept rule index, when rule sets are on
    _confinement: Confinement | None = attrs.field(default=None, init=False)
    _contents: ContentRules | None = attrs.field(default=None, init=False)

    def read_allowed(self, ref: ScopeRef) -> Callable[[str], bool] | None:
        """The test a scope's read puts to the real path of the file it opens: none for the
        user-global file, the project's confinement for every other."""
        if split_scope(ref.scope)[0] == USER_GLOBAL:
            return None
        return self.confinement().allows_path

    def confinement(self) -> Confinement:
        if self._confinement is None:
            # Resolved on first need: a warm touch confirms every scope by its version alone.
            self._confinement = confinement_for(
                self.project_root, self.settings, self.fs, self.os_home
            )
        return self._confinement

    @property
    def contents(self) -> ContentRules:
        if self._contents is None:
            self._contents = ContentRules(
                self.project_root,
                self.settings,
                self.fs,
                self.dsh_home,
                self.os_home,
                self.confinement,
            )
        return self._contents

    def baseline_scopes(self) -> list[ScopeRef]:
        out = [
            ScopeRef(c.scope, c.abs_path, c.display_path)
            for c in user_global_candidates(self.settings, self.dsh_home, self.os_home)
        ]
        for directory in ancestor_chain(self.project_root, self.cwd):
            out.extend(self.directory_scopes(directory))
        return out

    def rule_index(self) -> RuleIndex:
        if self.rules is None or self.rules.project_root != self.project_root:
            self.rules = rule_index(self.project_root, self.settings, self.fs, self.confinement)
        return self.rules

    def rule_refs(self, touched: Sequence[str], include_baseline: bool) -> list[ScopeRef]:
        """Rules to probe now: with the baseline scopes, those applying to every file; for
        each touched file, those whose globs match it. Worked out afresh on every pass (a new
        rule file or an edited glob changes them), from the index kept by file version."""
        if not self.settings.rule_sets:
            return []
        relative = []
        for path in touched:
            full = os.path.join(self.cwd, path)
            if full.endswith(os.sep) or not is_within(full, self.project_root):
                continue  # a directory touch names no file to match
            relative.append(os.path.relpath(full, self.project_root).replace(os.sep, "/"))
        out = []
        for rule in self.rule_index().rules():
            if rule.applies is None:
                continue
            if (include_baseline and rule.always) or any(rule.matches(r) for r in relative):
                out.append(ScopeRef(rule.scope, rule.abs_path, rule.rel_path))
        return out

    def retired(self, scope: str) -> bool:
        """Whether a scope's convention is off (or its entry gone): it counts as absent, so a
        session that has it active is told it no longer applies."""
        directory, name = split_scope(scope)
        settings = self.settings
        if is_rule_scope(scope):
            return rule_scope_parts(scope)[0] not in settings.rule_sets
        if directory == USER_GLOBAL:
            return name != USER_GLOBAL_NAME and name not in settings.user_global_files
        return name == OVERRIDE_NAME and OVERRIDE_NAME not in settings.directory_names

    def directory_scopes(self, directory: str) -> list[ScopeRef]:
        return list(self._directory_refs(directory))

    def _directory_refs(self, directory: str) -> tuple[ScopeRef, ...]:
        s = self.settings
        return _directory_refs(self.project_root, directory, s.directory_names, s.local_candidates)

    def scope_ref(self, scope: str) -> ScopeRef:
        directory, name = split_scope(scope)
        if directory == USER_GLOBAL:
            if name == USER_GLOBAL_NAME:
                ug = user_global_candidate(self.dsh_home, self.os_home)
                return ScopeRef(scope, ug.abs_path, ug.display_path)
            path = os.path.normpath(expand_tilde(name, self.os_home))
            return ScopeRef(scope, path, home_display(path, self.os_home))
        if is_rule_scope(scope):
            rel = rule_scope_parts(scope)[1]
            return ScopeRef(scope, os.path.join(self.project_root, *rel.split("/")), rel)
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
    scopes: Sequence[str] = (),
) -> ReconcileResult | None:
    """Probe the ordered scopes, emit set/replace/remove, render; mutate ``cache`` for commits.

    ``dismissed`` holds transitions the user dropped from the pending context, by scope: the same
    transition (a set or replace of the same content, or a removal) is not offered again.
    ``scopes`` are probed as well (what is left of a pending message a user partly dropped).
    """
    # One ignore pass: each .gitignore is probed once and each directory decided once.
    with ctx.ignore.one_pass() if ctx.ignore is not None else contextlib.nullcontext():
        plan = _plan(ctx, effective, scope_messages, touched, include_baseline_scopes, excluded)
        baseline_keys = plan.baseline_keys
        groups = plan.groups
        extra = [ctx.scope_ref(scope) for scope in scopes]
        extra += ctx.rule_refs(touched, include_baseline_scopes)
        if extra:
            if include_baseline_scopes:
                always = {r.scope for r in ctx.rule_refs((), True)}
                baseline_keys = baseline_keys | always
            groups = _with_refs(groups, extra)
        items: list[_Item] = []
        seen_paths: set[str] = set()
        for group in groups:
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


def _with_refs(
    groups: tuple[tuple[ScopeRef, ...], ...], extra: Sequence[ScopeRef]
) -> tuple[tuple[ScopeRef, ...], ...]:
    """The plan's groups with ``extra`` refs added (each once), regrouped by directory, the
    rule files' groups last: a touch lists the directories it reached, then the rules its
    files matched, whatever the session already had active."""
    known = {r.scope for g in groups for r in g}
    refs = [r for g in groups for r in g]
    for ref in extra:
        if ref.scope not in known:
            known.add(ref.scope)
            refs.append(ref)
    regrouped = _group_by_directory(refs)
    regrouped.sort(key=lambda group: is_rule_scope(group[0].scope))
    return tuple(tuple(g) for g in regrouped)


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
            ctx.project_root,
            ctx.cwd,
            ctx.dsh_home,
            ctx.os_home,
            ctx.settings,
            include_baseline,
            excluded,
            tuple(effective),
            tuple(c.scope for m in scope_messages for c in changes_of(m)),
            tuple(os.path.dirname(os.path.join(ctx.cwd, p)) for p in touched),
        )
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
    ordered = _ordered_scopes(
        ctx,
        baseline_refs,
        baseline_keys,
        effective,
        scope_messages,
        touched,
        include_baseline,
        missing,
    )
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
            if directory == USER_GLOBAL or is_rule_scope(scope) or ctx.retired(scope):
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

    probed = _with_override(ctx, probed)
    replaced = _overridden(ctx, probed)
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
        read: ReadResult | None = None
        content: Content | None = None
        if ref.scope == replaced or ctx.retired(ref.scope):
            # Replaced by the directory's AGENTS.override.md, or its convention is off: gone.
            found: tuple[str, int] | Probe = Probe(ProbeState.ABSENT, ref.abs_path)
        else:
            found = fs.quick_stat(ref.abs_path)
        if isinstance(found, Probe):
            state, version = found.state, found.version
        else:
            state, version = ProbeState.PRESENT, found[0]
            if not _confirmed(cached, current, ref, version) or (
                cached is not None and cached.deps and not deps_unchanged(fs, cached.deps)
            ):
                # Not confirmed by its version: read it, asking where the opened file lives.
                probe = Probe(ProbeState.PRESENT, ref.abs_path, None, version, found[1])
                read = _read_scope(ctx, ref, probe)
                if read.failure is ReadFailure.NOT_ALLOWED:
                    state = ProbeState.ABSENT  # leads outside the project: as if it were gone
                elif read.text is not None and ctx.contents.active:
                    content = ctx.contents.content(ref.scope, ref.abs_path, read.text)
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
        content = content or plain(read.text)
        text = content.text
        # The version of the bytes actually read (the file may have changed since its stat).
        entry = CacheEntry(
            ref.display_path,
            read.version or version or "",
            content.digest,
            content.trimmed,
            content.deps,
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
        group_items.append(_Item(change, text, entry, content.applies))
    return items + group_items


def _with_override(ctx: ReconcileContext, group: list[ScopeRef]) -> list[ScopeRef]:
    """The group with its directory's override slot right before ``AGENTS.md`` whenever that is
    probed, so the file that replaces it is set in the same pass as the one it replaces goes."""
    if not ctx.settings.overrides:
        return group
    for index, ref in enumerate(group):
        if _is_directory_slot(ref, OVERRIDDEN_NAME):
            slot = os.path.join(os.path.dirname(ref.abs_path), OVERRIDE_NAME)
            if all(r.abs_path != slot for r in group):
                directory = split_scope(ref.scope)[0]
                override = ScopeRef(
                    scope_key(directory, OVERRIDE_NAME),
                    slot,
                    os.path.join(os.path.dirname(ref.display_path), OVERRIDE_NAME),
                )
                return [*group[:index], override, *group[index:]]
            return group
    return group


def _overridden(ctx: ReconcileContext, group: list[ScopeRef]) -> str | None:
    """The scope of the group's ``AGENTS.md`` when an ``AGENTS.override.md`` is present next to
    it (inside the trust boundary: one leading out of the project counts as absent)."""
    if not ctx.settings.overrides:
        return None
    target = next((r for r in group if _is_directory_slot(r, OVERRIDDEN_NAME)), None)
    if target is None:
        return None
    probe = ctx.fs.probe(os.path.join(os.path.dirname(target.abs_path), OVERRIDE_NAME))
    if not probe.present or not ctx.confinement().allows(probe):
        return None
    return target.scope


def _is_directory_slot(ref: ScopeRef, name: str) -> bool:
    directory, slot = split_scope(ref.scope)
    return slot == name and directory != USER_GLOBAL and not is_rule_scope(ref.scope)


def _confirmed(
    cached: CacheEntry | None, current: Change | None, ref: ScopeRef, version: str
) -> bool:
    """The version fast path: the active change is exactly what was last read
    at this version, so the scope is confirmed without reading it (the caller checks the
    versions of its imports, ``deps``, too)."""
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
        if item.applies is not None:
            return RenderItem("set", change.path, item.content, applies_to=item.applies.describe())
        directory = split_scope(change.scope)[0]
        if directory == USER_GLOBAL:
            return RenderItem("set", change.path, item.content, USER_GLOBAL)
        return RenderItem("set", change.path, item.content, scope_dir_of_display(change.path))
    if change.action == "replace":
        return RenderItem("replace", change.path, item.content)
    return RenderItem("remove", change.path)

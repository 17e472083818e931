"""Dynamic reconciliation (reference §2.8): which scopes changed since the model last saw them.

Scopes are probed in a fixed order and grouped by directory. Absence is confirmed deletion;
unavailability (EACCES, EIO, a probe error) is never treated as deletion and rolls back the whole
directory group, so a warm and a cold cache behave identically. A scope whose cached version,
path and digest all match the effective state is confirmed without reading it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem, ProbeState
from dsh_sidecar.model import Message

from .discovery import (
    ancestor_chain,
    descendant_dirs_between,
    directory_candidates,
    user_global_candidate,
)
from .gitignore import IgnoreMatcher
from .paths import (
    USER_GLOBAL,
    scope_abs_path,
    scope_dir_of_display,
    sha1_hex,
    split_scope,
    trimmed_digest,
)
from .render import RenderItem, render
from .state import Change, changes_of


@attrs.frozen
class CacheEntry:
    """What we last confirmed about one scope; never prose."""

    path: str
    version: str
    digest: str
    trimmed: str


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


@attrs.define
class ReconcileContext:
    project_root: str
    cwd: str
    settings: InstructionSettings
    dsh_home: str
    fs: LocalFileSystem
    ignore: IgnoreMatcher | None = None
    os_home: str | None = None

    def baseline_scopes(self) -> list[ScopeRef]:
        ug = user_global_candidate(self.dsh_home, self.os_home)
        out = [ScopeRef(ug.scope, ug.abs_path, ug.display_path)]
        for directory in ancestor_chain(self.project_root, self.cwd):
            out.extend(self.directory_scopes(directory))
        return out

    def directory_scopes(self, directory: str) -> list[ScopeRef]:
        return [
            ScopeRef(c.scope, c.abs_path, c.display_path)
            for c in directory_candidates(self.project_root, directory, self.settings)
        ]

    def scope_ref(self, scope: str) -> ScopeRef:
        directory, _ = split_scope(scope)
        if directory == USER_GLOBAL:
            ug = user_global_candidate(self.dsh_home, self.os_home)
            return ScopeRef(scope, ug.abs_path, ug.display_path)
        abs_path = scope_abs_path(scope, self.project_root, self.dsh_home)
        return ScopeRef(scope, abs_path, os.path.relpath(abs_path, self.project_root))

    def sibling_scopes(self, scope: str) -> list[ScopeRef]:
        """Every candidate of the scope's directory, so a new sibling is discovered."""
        directory, _ = split_scope(scope)
        if directory == USER_GLOBAL:
            return [self.scope_ref(scope)]
        base = self.project_root if directory == "." else os.path.join(self.project_root, directory)
        return self.directory_scopes(base)


def reconcile(
    ctx: ReconcileContext,
    *,
    effective: Mapping[str, Change],
    scope_messages: Sequence[Message],
    touched: Sequence[str],
    include_baseline_scopes: bool,
    excluded: frozenset[str],
    cache: VersionCache,
) -> ReconcileResult | None:
    """Probe the ordered scopes, emit set/replace/remove, render; mutate ``cache`` for commits."""
    baseline_refs = ctx.baseline_scopes()
    baseline_keys = {r.scope for r in baseline_refs}
    ordered = _ordered_scopes(ctx, baseline_refs, baseline_keys, effective, scope_messages, touched,
                              include_baseline_scopes)  # fmt: skip
    items: list[_Item] = []
    seen_paths: set[str] = set()
    for group in _group_by_directory(ordered):
        items.extend(
            _reconcile_directory(ctx, group, effective, baseline_keys, excluded, cache, seen_paths)
        )
    if not items:
        return None
    render_items = [_render_item(i) for i in items]
    result = render(render_items, ctx.settings.max_bytes, None)
    committed = [items[i] for i in sorted(result.represented)]
    if not result.text or not committed:
        return None  # [AI]: nothing represented; retried at the next touch
    for item in committed:
        if item.change.action == "remove":
            cache.pop(item.change.scope, None)
        elif item.entry is not None:
            cache[item.change.scope] = item.entry
    return ReconcileResult(result.text, tuple(i.change for i in committed))


def _ordered_scopes(
    ctx: ReconcileContext,
    baseline_refs: list[ScopeRef],
    baseline_keys: set[str],
    effective: Mapping[str, Change],
    scope_messages: Sequence[Message],
    touched: Sequence[str],
    include_baseline: bool,
) -> list[ScopeRef]:
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
    for scope in effective:
        if include_baseline or scope not in baseline_keys:
            for ref in ctx.sibling_scopes(scope):
                add(ref)
    for path in touched:
        for directory in descendant_dirs_between(ctx.cwd, path):
            if ctx.ignore is not None and ctx.ignore.check_directory(directory) is not None:
                break  # nothing below an ignored directory is discovered by a touch
            for ref in ctx.directory_scopes(directory):
                if ctx.ignore is None or ctx.ignore.check_candidate(ref.abs_path) is None:
                    add(ref)
    return list(ordered.values())


def _group_by_directory(refs: list[ScopeRef]) -> list[list[ScopeRef]]:
    groups: dict[str, list[ScopeRef]] = {}
    for ref in refs:
        groups.setdefault(split_scope(ref.scope)[0], []).append(ref)
    return list(groups.values())


def _reconcile_directory(
    ctx: ReconcileContext,
    group: list[ScopeRef],
    effective: Mapping[str, Change],
    baseline_keys: set[str],
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
    for ref in probed:
        current = active(ref.scope)
        probe = ctx.fs.probe(ref.abs_path)
        if probe.state is ProbeState.UNAVAILABLE:
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
        if probe.state is ProbeState.ABSENT:
            if current is not None:
                group_items.append(_Item(Change("remove", ref.scope, current.path)))
            cache.pop(ref.scope, None)
            continue
        if ref.abs_path in seen_paths:
            continue
        seen_paths.add(ref.abs_path)
        group_paths.add(ref.abs_path)
        cached = cache.get(ref.scope)
        if (
            cached is not None
            and current is not None
            and cached.path == ref.display_path
            and cached.version == probe.version
            and current.path == cached.path
            and current.digest == cached.digest
        ):
            if cached.trimmed in registered:
                group_items.append(_Item(Change("remove", ref.scope, current.path)))
            registered.add(cached.trimmed)
            continue
        read = ctx.fs.read_text(probe, ctx.settings.max_source_bytes)
        if read.text is None:
            continue  # a failed read means "no change" for this scope
        assert probe.version is not None
        entry = CacheEntry(
            ref.display_path, probe.version, sha1_hex(read.text), trimmed_digest(read.text)
        )
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
        group_items.append(_Item(change, read.text, entry))
    return items + group_items


def _render_item(item: _Item) -> RenderItem:
    change = item.change
    if change.action == "set":
        return RenderItem("set", change.path, item.content, scope_dir_of_display(change.path))
    if change.action == "replace":
        return RenderItem("replace", change.path, item.content)
    return RenderItem("remove", change.path)

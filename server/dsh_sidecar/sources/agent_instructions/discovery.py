"""Project-root discovery and the instruction chain (docs/reference/agent-instructions.md, Project root; Baseline candidates)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import attrs

from dsh_sidecar.config import (
    OVERRIDDEN_NAME,
    OVERRIDE_NAME,
    InstructionSettings,
    os_home_or_default,
)
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.jsutil import js_json

from .paths import (
    USER_GLOBAL,
    is_within,
    relative_path,
    scope_dir_of_directory,
    scope_key,
    user_global_display,
    user_global_path,
)


def find_project_root(cwd: str, markers: tuple[str, ...], fs: LocalFileSystem) -> str:
    """The nearest ancestor of ``cwd`` (inclusive) holding any marker; ``cwd`` itself if none.

    A marker of any type counts (a ``.git`` file as well as a directory); an error while testing
    a marker counts as "not a marker" and the walk continues upward, as upstream does. An
    absolute marker names a directory that *is* a project root (docs/configuration.md): the
    walk stops there, compared with its real path. (Joined to each directory as a name it would
    test the same absolute path everywhere and make ``cwd`` the root whenever it exists.)
    """
    names = tuple(m for m in markers if not os.path.isabs(m))
    roots = _marker_roots(tuple(m for m in markers if os.path.isabs(m)), fs)
    start = fs.resolve(cwd)
    current = start
    while True:
        if current in roots or any(fs.exists(os.path.join(current, m)) for m in names):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def _marker_roots(absolute: tuple[str, ...], fs: LocalFileSystem) -> frozenset[str]:
    roots = set()
    for marker in absolute:
        try:
            roots.add(fs.resolve(marker))
        except (OSError, ValueError):  # a name the OS cannot take marks nothing
            continue
    return frozenset(roots)


def ancestor_chain(root: str, cwd: str) -> list[str]:
    """Directories from ``root`` down to ``cwd``, both inclusive."""
    return [directory for directory, _ in scoped_ancestors(root, cwd)]


def scoped_ancestors(root: str, cwd: str) -> list[tuple[str, str]]:
    """``ancestor_chain`` with each directory's scope directory (``scope_dir_of_directory``:
    its path relative to ``root``, ``.`` for the root itself).

    Both are cut from the relative path of ``cwd``: a directory's own is its leading parts, and
    the directory is ``root`` joined to them. Asking ``relative_path`` of each directory instead
    scans each path whole, the square of the depth over a chain.
    """
    rel = relative_path(cwd, root)
    chain = [(root, os.curdir)]
    if rel == os.curdir:
        return chain
    prefix = os.path.join(root, "")  # what os.path.join puts before a part
    end = rel.find(os.sep)
    while end != -1:
        chain.append((prefix + rel[:end], rel[:end]))
        end = rel.find(os.sep, end + 1)
    chain.append((prefix + rel, rel))
    return chain


def descendant_dirs_between(cwd: str, path: str) -> Iterator[str]:
    """Directories strictly below ``cwd`` down to ``dirname(path)``, shallowest first (docs/reference/agent-instructions.md, Reconcile).

    ``path`` is resolved against ``cwd`` when relative. Upstream's prefix test on ``..`` also
    excludes a child literally named ``..foo``; we keep that quirk for fidelity.

    Yielded one by one: a touch stops at the first directory that is not there, and the whole
    list for a path thousands of components deep would hold the square of its length.
    """
    target_dir = os.path.dirname(os.path.join(cwd, path))
    rel = relative_path(target_dir, cwd)
    if rel == "." or rel.startswith("..") or os.path.isabs(rel):
        return
    current = cwd
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        yield current


@attrs.frozen
class Candidate:
    """One candidate slot of the chain: where it is, how the model sees it, its scope key."""

    abs_path: str
    display_path: str
    scope: str
    name: str
    directory: str  # the directory holding it ("" stands for the user-global home)
    is_local: bool = False
    # With instructions.overrideFiles: this slot is the directory's AGENTS.override.md, which
    # replaces the slot named here (AGENTS.md) when it is present.
    overrides: str | None = None
    rule_set: str | None = None  # a path-scoped rule file of this convention (rules.py)

    @property
    def user_global(self) -> bool:
        return self.scope.startswith(USER_GLOBAL + "\u0000")

    @property
    def is_rule(self) -> bool:
        return self.rule_set is not None


def user_global_candidate(dsh_home: str, os_home: str | None = None) -> Candidate:
    return Candidate(
        abs_path=user_global_path(dsh_home),
        display_path=user_global_display(dsh_home, os_home),
        scope=scope_key(USER_GLOBAL, "AGENTS.md"),
        name="AGENTS.md",
        directory=dsh_home,
    )


def user_global_candidates(
    settings: InstructionSettings, dsh_home: str, os_home: str | None = None
) -> list[Candidate]:
    """``$DSH_HOME/AGENTS.md``, then each of ``instructions.userGlobalFiles`` in order. An extra
    file's scope key is ``user-global`` NUL the entry as written (``~/.claude/CLAUDE.md``), which
    holds a ``/`` and so never collides with ``user-global`` NUL ``AGENTS.md``."""
    out = [user_global_candidate(dsh_home, os_home)]
    home = os_home_or_default(os_home)
    for entry, path in settings.user_global_paths(home):
        out.append(
            Candidate(
                abs_path=path,
                display_path=home_display(path, home),
                scope=scope_key(USER_GLOBAL, entry),
                name=os.path.basename(path),
                directory=os.path.dirname(path),
            )
        )
    return out


def home_display(path: str, home: str) -> str:
    """``~/…`` for a file in the home directory, else the absolute path."""
    if home and home != os.sep and is_within(path, home) and path != home:
        return "~/" + os.path.relpath(path, home).replace(os.sep, "/")
    return path


def directory_candidates(
    project_root: str, directory: str, settings: InstructionSettings
) -> list[Candidate]:
    """Every base then every local candidate of one project directory, in configured order
    (with ``overrideFiles``, the override slot right before the ``AGENTS.md`` it replaces)."""
    return scope_candidates(directory, scope_dir_of_directory(project_root, directory), settings)


def scope_candidates(
    directory: str, scope_dir: str, settings: InstructionSettings
) -> list[Candidate]:
    """``directory_candidates`` of a directory whose scope directory is known.

    A candidate name is one plain component (``filter_candidates``), so its path is the
    directory's joined to it and its display path, its path relative to the project root, the
    scope directory's joined to it: worked out once per directory, not per name.
    """
    out = []
    replaces = OVERRIDDEN_NAME if settings.overrides else None
    prefix = os.path.join(directory, "")
    shown = "" if scope_dir == os.curdir else scope_dir + os.sep
    for names, is_local in ((settings.directory_names, False), (settings.local_candidates, True)):
        for name in names:
            out.append(
                Candidate(
                    abs_path=prefix + name,
                    display_path=shown + name,
                    scope=scope_key(scope_dir, name),
                    name=name,
                    directory=directory,
                    is_local=is_local,
                    overrides=replaces if name == OVERRIDE_NAME and not is_local else None,
                )
            )
    return out


def chain_candidates(
    project_root: str,
    cwd: str,
    settings: InstructionSettings,
    dsh_home: str,
    os_home: str | None = None,
) -> list[Candidate]:
    """User-global first, then root→cwd, base then local per directory; path-deduplicated."""
    out = user_global_candidates(settings, dsh_home, os_home)
    for directory, scope_dir in scoped_ancestors(project_root, cwd):
        out.extend(scope_candidates(directory, scope_dir, settings))
    seen: set[str] = set()
    unique = []
    for cand in out:
        if cand.abs_path not in seen:
            seen.add(cand.abs_path)
            unique.append(cand)
    return unique


def baseline_identity(project_root: str, cwd: str, settings: InstructionSettings) -> str:
    """Compact JSON in upstream's fixed key order; dshHome is deliberately not part of it.

    A convention that is on adds its key at the end (each changes which files a baseline holds,
    so turning one on or off gives live sessions a new baseline); with every convention off the
    identity is upstream's, byte for byte. Rule sets are the exception: a rule set is a group of
    files of their own scopes, which the session's reconcile sets when the set goes on and
    removes when it goes off (``ReconcileContext.rule_refs``, ``retired``), so enabling one
    sends its rules, not every instruction file again.
    """
    rel = os.path.relpath(project_root, cwd)
    identity: dict[str, object] = {
        "projectRoot": "" if rel == "." else rel,
        "projectRootMarkers": list(settings.project_root_markers),
        "maxBytes": settings.max_bytes,
        "maxSourceBytes": settings.max_source_bytes,
        "instructionFileCandidates": list(settings.base_candidates),
        "localInstructionFileCandidates": list(settings.local_candidates),
    }
    if settings.override_files:
        identity["overrideFiles"] = True
    if settings.imports:
        identity["imports"] = True
    if settings.user_global_files:
        identity["userGlobalFiles"] = list(settings.user_global_files)
    return js_json(identity)

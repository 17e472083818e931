"""Project-root discovery and the instruction chain (docs/reference/agent-instructions.md, Project root; Baseline candidates)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.jsutil import js_json

from .paths import (
    USER_GLOBAL,
    project_display,
    relative_path,
    scope_dir_of_directory,
    scope_key,
    user_global_display,
    user_global_path,
)


def find_project_root(cwd: str, markers: tuple[str, ...], fs: LocalFileSystem) -> str:
    """The nearest ancestor of ``cwd`` (inclusive) holding any marker; ``cwd`` itself if none.

    A marker of any type counts (a ``.git`` file as well as a directory); an error while testing
    a marker counts as "not a marker" and the walk continues upward, as upstream does.
    """
    start = fs.resolve(cwd)
    current = start
    while True:
        if any(fs.exists(os.path.join(current, marker)) for marker in markers):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def ancestor_chain(root: str, cwd: str) -> list[str]:
    """Directories from ``root`` down to ``cwd``, both inclusive."""
    rel = relative_path(cwd, root)
    chain = [root]
    if rel == ".":
        return chain
    current = root
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        chain.append(current)
    return chain


def descendant_dirs_between(cwd: str, path: str) -> list[str]:
    """Directories strictly below ``cwd`` down to ``dirname(path)``, shallowest first (docs/reference/agent-instructions.md, Reconcile).

    ``path`` is resolved against ``cwd`` when relative. Upstream's prefix test on ``..`` also
    excludes a child literally named ``..foo``; we keep that quirk for fidelity.
    """
    target_dir = os.path.dirname(os.path.join(cwd, path))
    rel = relative_path(target_dir, cwd)
    if rel == "." or rel.startswith("..") or os.path.isabs(rel):
        return []
    out: list[str] = []
    current = cwd
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        out.append(current)
    return out


@attrs.frozen
class Candidate:
    """One candidate slot of the chain: where it is, how the model sees it, its scope key."""

    abs_path: str
    display_path: str
    scope: str
    name: str
    directory: str  # the directory holding it ("" stands for the user-global home)
    is_local: bool = False

    @property
    def user_global(self) -> bool:
        return self.scope.startswith(USER_GLOBAL + "\u0000")


def user_global_candidate(dsh_home: str, os_home: str | None = None) -> Candidate:
    return Candidate(
        abs_path=user_global_path(dsh_home),
        display_path=user_global_display(dsh_home, os_home),
        scope=scope_key(USER_GLOBAL, "AGENTS.md"),
        name="AGENTS.md",
        directory=dsh_home,
    )


def directory_candidates(
    project_root: str, directory: str, settings: InstructionSettings
) -> list[Candidate]:
    """Every base then every local candidate of one project directory, in configured order."""
    scope_dir = scope_dir_of_directory(project_root, directory)
    out = []
    for names, is_local in ((settings.base_candidates, False), (settings.local_candidates, True)):
        for name in names:
            abs_path = os.path.join(directory, name)
            out.append(
                Candidate(
                    abs_path=abs_path,
                    display_path=project_display(project_root, abs_path),
                    scope=scope_key(scope_dir, name),
                    name=name,
                    directory=directory,
                    is_local=is_local,
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
    out = [user_global_candidate(dsh_home, os_home)]
    for directory in ancestor_chain(project_root, cwd):
        out.extend(directory_candidates(project_root, directory, settings))
    seen: set[str] = set()
    unique = []
    for cand in out:
        if cand.abs_path not in seen:
            seen.add(cand.abs_path)
            unique.append(cand)
    return unique


def baseline_identity(project_root: str, cwd: str, settings: InstructionSettings) -> str:
    """Compact JSON in upstream's fixed key order; dshHome is deliberately not part of it."""
    rel = os.path.relpath(project_root, cwd)
    identity: Mapping[str, object] = {
        "projectRoot": "" if rel == "." else rel,
        "projectRootMarkers": list(settings.project_root_markers),
        "maxBytes": settings.max_bytes,
        "maxSourceBytes": settings.max_source_bytes,
        "instructionFileCandidates": list(settings.base_candidates),
        "localInstructionFileCandidates": list(settings.local_candidates),
    }
    return js_json(identity)

"""``dsh/context/preview``: the baseline a new session at a directory would get (blocking)."""

from __future__ import annotations

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.protocol import mapping as wire
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.sessions.locations import existing_cwd
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_baseline
from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
from dsh_sidecar.sources.agent_instructions.usage import OffConvention, project_conventions

from .asked import Asked

Preview = tuple[BaselineLoad, tuple[OffConvention, ...]]


def preview(asked: Asked, directory: str) -> Preview:
    """The baseline of a new session at ``directory``, and the repository's instruction files
    that the settings leave unread (so an empty baseline is never silently empty)."""
    existing_cwd(directory)
    # One look for the whole request, as every query has: each path is asked once, and a deep
    # chain is looked at from open directories instead of a walk from the root per look.
    look = asked.look()
    try:
        return _preview(asked, directory, look)
    finally:
        look.close()


def kept_result(asked: Asked, directory: str, compact_paths: bool = False) -> wt.PreviewResult:
    """``preview``'s wire result, kept while what it saw holds (docs/architecture.md, "Answers
    kept while what they saw holds"): a warm request re-checks its stats instead of probing,
    reading and hashing every file of the chain again, and answers with the same object.

    It rests on the files, the settings (one ``Caches`` per settings generation) and the two
    home directories, which the key carries; not on live sessions. The cwd is checked first,
    each time, so a missing one is refused as before.
    """
    existing_cwd(directory)
    key = ("preview", directory, asked.snapshot.dsh_home, asked.home, compact_paths)
    look = asked.look()
    try:
        result: wt.PreviewResult = asked.caches.answers.get(
            key,
            look,
            lambda fs: wire.preview_result(
                *_preview(asked, directory, fs), compact_paths=compact_paths
            ),
        )
        return result
    finally:
        look.close()


def _preview(asked: Asked, directory: str, fs: LocalFileSystem) -> Preview:
    snapshot, home = asked.snapshot, asked.home
    settings = snapshot.settings.instructions
    load = load_baseline(directory, settings, fs, dsh_home=snapshot.dsh_home)
    root = load.project_root
    found = project_conventions(
        load.cwd,
        root,
        settings,
        fs,
        home,
        confinement_once(root, settings, fs, home),
        imports=False,
    )
    return load, tuple(c for c in found if c.in_project)

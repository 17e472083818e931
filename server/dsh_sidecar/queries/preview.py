"""``dsh/context/preview``: the baseline a new session at a directory would get (blocking)."""

from __future__ import annotations

from dsh_sidecar.sessions.locations import existing_cwd
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_baseline
from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
from dsh_sidecar.sources.agent_instructions.usage import OffConvention, project_conventions

from .asked import Asked


def preview(asked: Asked, directory: str) -> tuple[BaselineLoad, tuple[OffConvention, ...]]:
    """The baseline of a new session at ``directory``, and the repository's instruction files
    that the settings leave unread (so an empty baseline is never silently empty)."""
    snapshot, home = asked.snapshot, asked.home
    existing_cwd(directory)
    settings = snapshot.settings.instructions
    # One look for the whole request, as every query has: each path is asked once, and a deep
    # chain is looked at from open directories instead of a walk from the root per look.
    look = asked.look()
    try:
        load = load_baseline(directory, settings, look, dsh_home=snapshot.dsh_home)
        root = load.project_root
        found = project_conventions(
            load.cwd,
            root,
            settings,
            look,
            home,
            confinement_once(root, settings, look, home),
            imports=False,
        )
    finally:
        look.close()
    return load, tuple(c for c in found if c.in_project)

"""Where a project instruction file may really live (docs/sources.md, "Symlinks that leave the
project").

A project's ``AGENTS.md`` is repository text. Through a symlink (``AGENTS.md -> ../.ssh/id_rsa``,
or a file under a linked directory) it could name any file the user can read, and the sidecar
would hand that file to a model. So a project candidate is read only when its resolved target lies
under the real project root, or under one of the directories the user listed in
``instructions.allowedSymlinkTargets``. The user-global ``$DSH_HOME/AGENTS.md`` is the user's own
file and is never confined (dotfile managers link it anywhere).

A baseline checks the probe's resolved target (it reports it) and then reads exactly that target;
a reconciliation lets the read check the real path of the file it opened (``allowed`` of
``fs.LocalFileSystem.read_text``). Either way the file checked is the file read.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem, Probe

OUTSIDE_PROJECT = "outside-project"


@attrs.frozen
class Confinement:
    """The real directories a project instruction file may resolve into."""

    roots: tuple[str, ...]
    _prefixes: tuple[str, ...] = attrs.field(init=False)

    @_prefixes.default
    def _slash_terminated(self) -> tuple[str, ...]:
        return tuple(r if r.endswith(os.sep) else r + os.sep for r in self.roots)

    def allows_path(self, real: str) -> bool:
        """Whether the real path ``real`` is one of the roots or below one. Real paths are
        normalized, so a prefix test is exact (``/p-evil`` is not below ``/p``)."""
        return real in self.roots or real.startswith(self._prefixes)

    def allows(self, probe: Probe) -> bool:
        """Whether a present probe's target may be read; no target means it cannot be told."""
        return probe.target is not None and self.allows_path(probe.target)


def confinement_for(
    project_root: str, settings: InstructionSettings, fs: LocalFileSystem, os_home: str
) -> Confinement:
    """The project root (already real) plus the allowed directories, each resolved through its
    own links, so ``~/dotfiles -> /data/dotfiles`` allows the targets that really live there."""
    roots = [project_root]
    for directory in settings.symlink_target_dirs(os_home):
        try:
            roots.append(fs.resolve(directory))
        except (OSError, ValueError):  # a name the OS cannot take allows nothing
            continue
    return Confinement(tuple(roots))


def confinement_once(
    project_root: str, settings: InstructionSettings, fs: LocalFileSystem, os_home: str
) -> Callable[[], Confinement]:
    """``confinement_for``, worked out on the first call only (most reads never need it)."""
    made: list[Confinement] = []

    def get() -> Confinement:
        if not made:
            made.append(confinement_for(project_root, settings, fs, os_home))
        return made[0]

    return get


def outside_reason(target: str | None) -> str:
    """The chain entry's reason for a file that is not read because of where it leads."""
    where = target if target is not None else "an unknown target"
    return f"links outside the project to {where}"

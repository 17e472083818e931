"""The settings as the sidecar uses them: one frozen class per section of the ``dsh`` tree
(docs/configuration.md), with the defaults, and what derives from a section's values.

Upstream's rules for the instruction keys: docs/reference/agent-instructions.md, Configuration.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import attrs

from .home import expand_tilde, os_home, resolve_dsh_home

DEFAULT_BASE_CANDIDATES = ("AGENTS.md", "CLAUDE.md")
DEFAULT_LOCAL_CANDIDATES = ("AGENTS.local.md", "CLAUDE.local.md")
DEFAULT_MAX_BYTES = 65536
DEFAULT_MAX_SOURCE_BYTES = 1048576
# Codex's override: in a directory where it exists it replaces that directory's AGENTS.md.
OVERRIDE_NAME = "AGENTS.override.md"
OVERRIDDEN_NAME = "AGENTS.md"


def filter_candidates(names: tuple[str, ...]) -> tuple[str, ...]:
    """Same-directory file names only: drop '', '.', '..' and anything with a separator."""
    return tuple(n for n in names if n not in ("", ".", "..") and "/" not in n and "\\" not in n)


@attrs.frozen
class InstructionSettings:
    enabled: bool = True
    max_bytes: float = DEFAULT_MAX_BYTES
    max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES
    dsh_home: str | None = None
    project_root_markers: tuple[str, ...] = (".git",)
    instruction_file_candidates: tuple[str, ...] = DEFAULT_BASE_CANDIDATES
    local_instruction_file_candidates: tuple[str, ...] = DEFAULT_LOCAL_CANDIDATES
    respect_gitignore: bool = True
    exclude: tuple[str, ...] = ()
    # Directories outside the project that a project instruction file may link into (absolute,
    # or ``~``-relative); expanded against the home directory by ``symlink_target_dirs``.
    allowed_symlink_targets: tuple[str, ...] = ()
    # The conventions other agents' repositories carry, each off by default
    # (docs/configuration.md): AGENTS.override.md, @path imports, path-scoped rule folders,
    # and more user-global files after $DSH_HOME/AGENTS.md.
    override_files: bool = False
    imports: bool = False
    rule_sets: tuple[str, ...] = ()
    user_global_files: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        """False when disabled or when the budget is non-positive or non-finite.

        Upstream turns itself off for such a budget (docs/reference/agent-instructions.md,
        Configuration).
        """
        return self.enabled and math.isfinite(self.max_bytes) and self.max_bytes > 0

    @property
    def base_candidates(self) -> tuple[str, ...]:
        return filter_candidates(self.instruction_file_candidates)

    @property
    def local_candidates(self) -> tuple[str, ...]:
        return filter_candidates(self.local_instruction_file_candidates)

    @property
    def all_candidates(self) -> tuple[str, ...]:
        return self.base_candidates + self.local_candidates

    @property
    def directory_names(self) -> tuple[str, ...]:
        """The base names probed in each directory, in order: with ``override_files``,
        ``AGENTS.override.md`` takes the slot right before ``AGENTS.md``, which it replaces."""
        base = self.base_candidates
        if self.override_files and OVERRIDDEN_NAME in base and OVERRIDE_NAME not in base:
            index = base.index(OVERRIDDEN_NAME)
            return (*base[:index], OVERRIDE_NAME, *base[index:])
        return base

    @property
    def overrides(self) -> bool:
        """Whether a directory's AGENTS.override.md replaces its AGENTS.md."""
        return self.override_files and OVERRIDDEN_NAME in self.base_candidates

    def user_global_paths(self, home: str) -> tuple[tuple[str, str], ...]:
        """``(entry as written, absolute path)`` of each extra user-global file, in order."""
        return tuple(
            (entry, os.path.normpath(expand_tilde(entry, home))) for entry in self.user_global_files
        )

    def home(self, env: Mapping[str, str] | None = None, home: str | None = None) -> str:
        return resolve_dsh_home(self.dsh_home, env, home)

    def symlink_target_dirs(self, home: str) -> tuple[str, ...]:
        """``allowed_symlink_targets`` as absolute paths, ``~`` expanded to ``home``."""
        return tuple(os.path.normpath(expand_tilde(d, home)) for d in self.allowed_symlink_targets)


@attrs.frozen
class SessionReferenceSettings:
    enabled: bool = True
    max_references: int = 3
    candidate_limit: int = 50
    max_reference_bytes: int = 65536


@attrs.frozen
class TimeContextSettings:
    enabled: bool = False
    time_zone: str | None = None
    refresh_interval_ms: int = 0


@attrs.frozen
class TmuxContextSettings:
    enabled: bool = False
    refresh_interval_ms: int = 0
    # Terminal editors (Neovim in a tmux pane) spawn the sidecar without a controlling tty; with
    # this on, the tty of the client's processId from ``initialize`` stands in for our own.
    use_client_process: bool = False


HOVER_OTHER_FILES = ("off", "firstLine", "always")


@attrs.frozen
class HoverSettings:
    # Hover on a file that is not an instruction file: off (the status bar and inspector tell the
    # chain), on its first line only, or everywhere (it fires on every cursor rest).
    other_files: str = "off"


DEFAULT_BUSY_TIMEOUT_MS = 5000


@attrs.frozen
class StoreSettings:
    path: str | None = None
    # How long a write waits for another process's write lock before failing with store-busy.
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS


@attrs.frozen
class Settings:
    instructions: InstructionSettings = InstructionSettings()
    session_reference: SessionReferenceSettings = SessionReferenceSettings()
    time_context: TimeContextSettings = TimeContextSettings()
    tmux_context: TmuxContextSettings = TmuxContextSettings()
    store: StoreSettings = StoreSettings()
    hover: HoverSettings = HoverSettings()

    def store_path(self, env: Mapping[str, str] | None = None, home: str | None = None) -> str:
        path = self.store.path
        if path is not None:
            if path == "~" or path.startswith(("~/", "~\\")):
                path = expand_tilde(path, home or os_home())
            return os.path.abspath(path)
        return os.path.join(self.instructions.home(env, home), "sessions.sqlite3")

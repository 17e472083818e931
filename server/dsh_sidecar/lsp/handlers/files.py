"""Which documents the editor handlers look at: local files, and which of them are instruction
files (decided on the loop from names and settings, never from the disk)."""

from __future__ import annotations

import functools
import os

from pygls.uris import to_fs_path

from dsh_sidecar.config import OVERRIDE_NAME
from dsh_sidecar.rule_sets import RULE_SETS

from .base import Server


def local_path(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    return _file_path(uri)


@functools.lru_cache(maxsize=1024)
def _file_path(uri: str) -> str | None:
    # A document's URI comes back with every hover, save and change: parsed once. The answer
    # depends on the URI alone (the process never changes its working directory).
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


def is_instruction_file(server: Server, path: str) -> bool:
    """A file the engine may load, or one of another agent's conventions (an override, a rule
    file) that hover and diagnostics explain even while its setting is off."""
    settings = server.settings.instructions
    name = os.path.basename(path)
    if name in settings.all_candidates or name == OVERRIDE_NAME:
        return True
    if looks_like_a_rule_file(path):
        return True
    service = server.service
    absolute = os.path.abspath(path)
    if absolute == os.path.join(settings.home(service.env), "AGENTS.md"):
        return True
    return any(absolute == p for _, p in settings.user_global_paths(service.os_home))


def looks_like_a_rule_file(path: str) -> bool:
    """Whether ``path`` sits where a rule set keeps its files (the project root is not known on
    the loop, so the folder names decide; the engine checks against the root)."""
    posix = path.replace(os.sep, "/")
    for rule_set in RULE_SETS.values():
        if any(posix.endswith("/" + name) for name in rule_set.repository_files):
            return True
        if f"/{rule_set.folder}/" in posix and posix.endswith(rule_set.suffix):
            return True
    return False

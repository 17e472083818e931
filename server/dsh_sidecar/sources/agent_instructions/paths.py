"""Display paths and scope keys (docs/reference/agent-instructions.md, Paths and scopes).

A scope key names one candidate file slot: ``<scope directory> NUL <candidate name>``, where the
scope directory is relative to the project root (``.`` for the root) or ``user-global``.
"""

from __future__ import annotations

import os

from dsh_sidecar.config import default_dsh_home
from dsh_sidecar.fs import is_plain_absolute

USER_GLOBAL = "user-global"
USER_GLOBAL_NAME = "AGENTS.md"
DEFAULT_HOME_LABEL = "~/.dsh"
ENV_HOME_LABEL = "$DSH_HOME"
SCOPE_SEPARATOR = "\u0000"


def home_label(dsh_home: str, os_home: str | None = None) -> str:
    """``~/.dsh`` when DSH_HOME is the default home, else the literal ``$DSH_HOME``."""
    return DEFAULT_HOME_LABEL if dsh_home == default_dsh_home(os_home) else ENV_HOME_LABEL


def user_global_display(dsh_home: str, os_home: str | None = None) -> str:
    return f"{home_label(dsh_home, os_home)}/{USER_GLOBAL_NAME}"


def user_global_path(dsh_home: str) -> str:
    return os.path.join(dsh_home, USER_GLOBAL_NAME)


def relative_path(path: str, start: str) -> str:
    """``os.path.relpath(path, start)``; sliced when ``path`` is ``start`` or below it.

    ``relpath`` splits both paths and joins the result one component at a time, which costs
    the square of the depth per call: a chain 1,000 directories deep would spend seconds
    computing display paths. Below the start, with both paths already normalized, the answer is
    the tail of the string.
    """
    if path == start and is_plain_absolute(path):
        return os.curdir
    prefix = start if start.endswith(os.sep) else start + os.sep
    if path.startswith(prefix) and is_plain_absolute(path) and is_plain_absolute(start):
        return path[len(prefix) :]
    return os.path.relpath(path, start)


def scope_dir_of_display(display_path: str) -> str:
    """Scope directory for a display path: ``user-global`` for the user-global file."""
    if display_path in (
        f"{DEFAULT_HOME_LABEL}/{USER_GLOBAL_NAME}",
        f"{ENV_HOME_LABEL}/{USER_GLOBAL_NAME}",
    ):
        return USER_GLOBAL
    return os.path.dirname(display_path) or "."


def scope_dir_of_directory(project_root: str, directory: str) -> str:
    rel = relative_path(directory, project_root)
    return "." if rel in ("", ".") else rel


def scope_key(scope_dir: str, name: str) -> str:
    return f"{scope_dir}{SCOPE_SEPARATOR}{name}"


def split_scope(key: str) -> tuple[str, str]:
    directory, _, name = key.partition(SCOPE_SEPARATOR)
    return directory, name


def scope_abs_path(key: str, project_root: str, dsh_home: str) -> str:
    directory, name = split_scope(key)
    if directory == USER_GLOBAL:
        return os.path.join(dsh_home, name)
    if directory == ".":
        return os.path.join(project_root, name)
    return os.path.join(project_root, directory, name)


def dedup_key(display_path: str) -> str:
    """Per-directory dedup group: ``dirname(displayPath)``."""
    return os.path.dirname(display_path) or "."


def is_within(path: str, directory: str) -> bool:
    """True when ``path`` is ``directory`` or below it (no ``..`` escape)."""
    rel = relative_path(path, directory)
    return rel == "." or not (rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel))

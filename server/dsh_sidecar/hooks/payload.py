"""Reading fields out of an agent's hook JSON: wrong types are absent, never an exception."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


class BadPayload(ValueError):
    """The hook input is not something this agent sends (no session id, no cwd, not an object)."""


def text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value.strip() else None


def mapping(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def required(data: Mapping[str, Any], key: str) -> str:
    value = text(data, key)
    if value is None:
        raise BadPayload(f"hook input has no {key}")
    return value


def absolute(path: str, cwd: str) -> str:
    """``path`` as the tool meant it: relative ones are relative to the session's cwd."""
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def cwd_of(data: Mapping[str, Any]) -> str:
    cwd = required(data, "cwd")
    if not os.path.isabs(cwd):
        raise BadPayload(f"hook input cwd is not absolute: {cwd!r}")
    return os.path.normpath(cwd)


GLOB_CHARS = frozenset("*?[{")


def directory(path: str, cwd: str) -> str | None:
    """A search or listing into ``path``: the directory as a touch (a trailing separator, so the
    projection walks into it rather than stopping at its parent), or None when it is no directory.
    A file given where a directory may be (a search of one file) is that file."""
    full = absolute(path, cwd)
    if os.path.isdir(full):
        return os.path.join(full, "")
    return full if os.path.isfile(full) else None


def glob_directory(pattern: str) -> str:
    """The literal directory a glob pattern starts with (``web`` for ``web/**/*.ts``; ``""``
    for ``**/*.py`` or a bare name): the components before the first one holding a glob
    character. The last component names files, never a directory to search."""
    parts = pattern.split("/")[:-1]
    literal: list[str] = []
    for part in parts:
        if GLOB_CHARS & set(part) or "\\" in part:
            break
        literal.append(part)
    if literal == [""]:  # "/x": the root alone says nothing
        return ""
    return "/".join(literal)

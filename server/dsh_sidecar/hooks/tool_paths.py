"""What a tool call touched, read from its input by the reader its agent's record names
(``agents/record.py``, ``ToolReader``): one function per way a tool names paths, none per agent.

A shell command is parsed for the files it reads and writes through ``shell_touches`` (a
tokenizer, never regexes on the raw string). Before a tool runs only what it will write counts;
after it, a read of a file that is not there touched nothing (no agent reports a shell
command's success in a form the hook could trust).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from dsh_sidecar.agents.record import Tool, ToolReader

from .payload import GLOB_CHARS, absolute, directory, glob_directory, text
from .shell import shell_touches

Reader = Callable[[Tool, Mapping[str, Any], str, bool], tuple[str, ...]]


def touched_by(
    tool: Tool, arguments: Mapping[str, Any], cwd: str, *, after: bool
) -> tuple[str, ...]:
    """The absolute paths ``tool`` touched (``after``) or will write (before it runs)."""
    if not after and not tool.writes:
        return ()
    return READERS[tool.reader](tool, arguments, cwd, after)


def _first_text(arguments: Mapping[str, Any], fields: tuple[str, ...]) -> str | None:
    for field in fields:
        found = text(arguments, field)
        if found is not None:
            return found
    return None


def _file(tool: Tool, arguments: Mapping[str, Any], cwd: str, after: bool) -> tuple[str, ...]:
    path = _first_text(arguments, tool.fields)
    return (absolute(path, cwd),) if path else ()


def _from_command(command: str | None, where: str, after: bool) -> tuple[str, ...]:
    if command is None:
        return ()
    found = shell_touches(command, where)
    if not after:
        return tuple(found.writes)
    return (*(p for p in found.reads if os.path.lexists(p)), *found.writes)


def _shell(tool: Tool, arguments: Mapping[str, Any], cwd: str, after: bool) -> tuple[str, ...]:
    where = _first_text(arguments, tool.fields[1:])
    command = text(arguments, tool.fields[0])
    return _from_command(command, absolute(where, cwd) if where else cwd, after)


def _argv_or_patch(
    tool: Tool, arguments: Mapping[str, Any], cwd: str, after: bool
) -> tuple[str, ...]:
    return _from_command(_command(tool, arguments), cwd, after)


def _command(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    for key in tool.fields:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            # ["bash", "-lc", "cat x"] runs its last word as a script.
            if len(value) >= 3 and value[-2] in ("-c", "-lc"):
                return str(value[-1])
            return shlex.join(value)
    for key in tool.patch_fields:
        patch = arguments.get(key)
        if isinstance(patch, str) and "*** Begin Patch" in patch:
            return f"apply_patch <<'EOF'\n{patch}\nEOF"
    return None


def _into(base: str | None, cwd: str) -> tuple[str, ...]:
    found = directory(base, cwd) if base is not None else None
    return (found,) if found is not None else ()


def _search(tool: Tool, arguments: Mapping[str, Any], cwd: str, after: bool) -> tuple[str, ...]:
    return _into(_first_text(arguments, tool.fields), cwd)


def _glob(tool: Tool, arguments: Mapping[str, Any], cwd: str, after: bool) -> tuple[str, ...]:
    base = _first_text(arguments, tool.fields[1:])
    prefix = glob_directory(text(arguments, tool.fields[0]) or "")
    if prefix:
        base = os.path.join(base or cwd, prefix)
    return _into(base, cwd)


def _many_files(tool: Tool, arguments: Mapping[str, Any], cwd: str, after: bool) -> tuple[str, ...]:
    paths: object = next((arguments[f] for f in tool.fields if arguments.get(f)), [])
    if isinstance(paths, str):
        paths = [paths]  # one path where a list may be (Copilot CLI's grep ``paths``)
    if not isinstance(paths, list):
        return ()
    touches: list[str] = []
    for each in paths:
        if not isinstance(each, str) or not each.strip():
            continue
        # A pattern names no one file: its literal directory is what was read into.
        prefix = glob_directory(each) if GLOB_CHARS & set(each) else each
        touches.extend(_into(prefix, cwd) if prefix else ())
    return tuple(dict.fromkeys(touches))


READERS: dict[ToolReader, Reader] = {
    "file": _file,
    "search": _search,
    "glob": _glob,
    "listing": _search,
    "many-files": _many_files,
    "shell": _shell,
    "argv-or-patch": _argv_or_patch,
}

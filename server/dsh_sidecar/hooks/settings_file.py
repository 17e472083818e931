"""Reading and rewriting an agent's JSON settings file without ever damaging it.

The file belongs to the user and to the agent: ``hooks install`` only adds its own entries. So a
file that does not parse is refused with its line and left byte for byte as it was, a read-only
file is refused rather than replaced, a symlink (a dotfiles checkout, say) is written through to
its target (at project scope only when that stays in the project: confine.py), and a new
version replaces the old one by an atomic rename of a complete temporary file with the old
file's mode. A FIFO or a device in the file's place is refused without being opened for a
blocking read.

Comments: Gemini CLI strips ``//`` and ``/* */`` comments from its settings before parsing them
(JSONC), but Claude Code ignores the hooks of a file with one, so a file with comments is refused
too, naming the line of the first one. So is a file whose values the agents' readers would not
all read as Python does (``json_check``).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Any

from .json_check import first_ambiguity

MAX_SETTINGS_BYTES = 8 * 1024 * 1024


class SettingsFileError(Exception):
    """The file cannot be read or written as it is; the message names it (and the line)."""


@dataclass(frozen=True)
class SettingsFile:
    path: str  # as the user and the agent name it
    target: str  # where its bytes are: the symlink's target, else ``path``
    document: dict[str, Any] | None  # None: the file does not exist
    mode: int | None
    data: bytes | None = None  # the bytes read, None when the file does not exist


def read_settings(path: str) -> SettingsFile:
    target = _target(path)
    read = read_regular_file(target, shown=path)
    if read is None:
        return SettingsFile(path, target, None, None)
    data, mode = read
    return SettingsFile(path, target, parse_settings(path, data), mode, data)


def read_regular_file(path: str, *, shown: str | None = None) -> tuple[bytes, int] | None:
    """(content, permission bits) of a regular file, None when it does not exist. Never blocks
    on a FIFO or a device in its place: those are refused, as is a file over the size limit."""
    shown = path if shown is None else shown
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsFileError(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SettingsFileError(f"{shown}: not a regular file")
        if info.st_size > MAX_SETTINGS_BYTES:
            raise SettingsFileError(f"{shown}: {info.st_size} bytes, too large for a settings file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise SettingsFileError(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return data, stat.S_IMODE(info.st_mode)


def parse_settings(path: str, data: bytes) -> dict[str, Any]:
    """The JSON object in ``data``, or a ``SettingsFileError`` naming ``path`` and the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SettingsFileError(f"{path}:{line}: not UTF-8") from exc
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark: Node's readers tolerate it, json does not
    if not text.strip():
        return {}  # an empty file: as good as an absent one
    comment_line = first_comment_line(text)
    if comment_line is not None:
        raise SettingsFileError(
            f"{path}:{comment_line}: has comments, which rewriting the file would lose"
            " (remove them, or add the hooks by hand)"
        )
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsFileError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})"
        ) from exc
    except RecursionError as exc:
        raise SettingsFileError(f"{path}: nested too deeply") from exc
    except ValueError as exc:  # an integer past Python's digit limit
        raise SettingsFileError(f"{path}: not readable as JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise SettingsFileError(f"{path}: not a JSON object")
    ambiguity = first_ambiguity(text)
    if ambiguity is not None:
        offset, problem = ambiguity
        line = text.count("\n", 0, offset) + 1
        column = offset - text.rfind("\n", 0, offset)
        raise SettingsFileError(f"{path}:{line}:{column}: {problem}")
    return document


def first_comment_line(text: str) -> int | None:
    """The line of the first ``//`` or ``/*`` outside a JSON string, if any."""
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "/" and i + 1 < n and text[i + 1] in "/*":
            return text.count("\n", 0, i) + 1
        i += 1
    return None


def render_settings(document: dict[str, Any]) -> str:
    """A new (or blank) file's text, in the layout the agents write themselves."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def check_writable(current: SettingsFile) -> None:
    # The owner's write bit too: root may write anything, but a file made read-only says "keep".
    read_only = current.mode is not None and not current.mode & stat.S_IWUSR
    if current.document is not None and (read_only or not os.access(current.target, os.W_OK)):
        raise SettingsFileError(f"{current.path}: read-only")


def write_settings(current: SettingsFile, data: bytes) -> None:
    """Replace the file's content with ``data``: complete or not at all."""
    check_writable(current)
    target = current.target
    directory = os.path.dirname(target) or "."
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise SettingsFileError(
            f"{current.path}: cannot write in {directory}: {exc.strerror or exc}"
        ) from exc
    mode = current.mode if current.mode is not None else _new_file_mode()
    try:
        replace_file(target, data, mode, prefix=".dsh-sidecar-")
    except OSError as exc:
        raise SettingsFileError(f"{current.path}: cannot write: {exc.strerror or exc}") from exc


def replace_file(target: str, data: bytes, mode: int | None, *, prefix: str) -> None:
    """Put ``data`` at ``target`` complete or not at all: written and synced to a temporary file
    beside it (``mode``, or mkstemp's 0600 when None), then renamed over it. The directory must
    exist. Raises OSError; the temporary file never stays."""
    fd, temporary = tempfile.mkstemp(
        prefix=prefix, suffix=".tmp", dir=os.path.dirname(target) or "."
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError:
        _remove_quietly(temporary)
        raise
    except BaseException:
        _remove_quietly(temporary)
        raise


def remove_settings(current: SettingsFile, created_dirs: tuple[str, ...]) -> list[str]:
    """Delete the file, then those of ``created_dirs`` (outermost first) that are left empty;
    the paths removed, file first."""
    try:
        os.unlink(current.target)
    except OSError as exc:
        raise SettingsFileError(f"{current.path}: cannot remove: {exc.strerror or exc}") from exc
    removed = [current.path]
    for directory in reversed(created_dirs):
        try:
            os.rmdir(directory)  # only when empty: anything else in it is not ours
        except OSError:
            break
        removed.append(directory)
    return removed


def _target(path: str) -> str:
    """Where a write must go so that a symlinked settings file stays a symlink."""
    if os.path.islink(path):
        return os.path.realpath(path)
    return path


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)

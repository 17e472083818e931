"""Where a request points: ``file:`` URIs and absolute paths, checked without touching the disk.

Parsing is pure and runs on the event loop; whether the directory exists is a filesystem question
and is asked in a worker (``existing_directory``).
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem


def parse_file_uri(value: str) -> str:
    """The normalized absolute path named by ``value`` (an absolute path or a local ``file:`` URI)."""
    if not value:
        raise DshError(errors.INVALID_URI, "uri must be a non-empty string")
    if value.startswith("file:"):
        parsed = urlparse(value)
        if parsed.netloc not in ("", "localhost"):
            raise DshError(errors.INVALID_URI, f"{value!r} is not a local file URI")
        path = unquote(parsed.path)
    else:
        path = value
    if not os.path.isabs(path):
        raise DshError(errors.INVALID_URI, f"{value!r} is not an absolute path or file: URI")
    return os.path.normpath(path)


def parse_cwd(value: str) -> str:
    """``parse_file_uri`` for a session's cwd: a bad one is ``invalid-cwd``."""
    try:
        return parse_file_uri(value)
    except DshError as exc:
        raise DshError(errors.INVALID_CWD, f"cwd: {exc.message}") from exc


def existing_cwd(path: str, fs: LocalFileSystem = LOCAL_FS) -> str:
    """``path`` itself when it is an existing directory (blocking: call from a worker)."""
    if not fs.is_directory(path):
        raise DshError(errors.INVALID_CWD, f"cwd {path!r} is not an existing directory")
    return path


def document_directory(path: str, fs: LocalFileSystem = LOCAL_FS) -> str:
    """The directory a document governs from: itself when a directory, else its parent (blocking)."""
    directory = path if fs.is_directory(path) else os.path.dirname(path)
    if not fs.is_directory(directory):
        raise DshError(errors.INVALID_URI, f"{directory} is not an existing directory")
    return directory

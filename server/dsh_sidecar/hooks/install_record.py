"""What ``hooks install`` changed, so that ``hooks uninstall`` can give the file back exactly.

One small JSON file per settings file and agent under ``$DSH_HOME/hooks/installed/`` (the user's
own state, never the project's): the file's bytes before the first install (None when install
created it), the directories install created for it, and the bytes install wrote last. When the
file still holds exactly those bytes, uninstall puts the old ones back (or removes what install
created); when the user has changed it since, it only takes our entries out of the text. The
records hold a copy of the settings file, so they are the user's alone (mode 0600).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass

from .settings_file import replace_file


class RecordError(Exception):
    """The record could not be written; the message names the directory."""


@dataclass(frozen=True)
class Record:
    before: bytes | None  # None: install created the file
    after: bytes
    created_dirs: tuple[str, ...]  # outermost first


def record_path(directory: str, target: str, agent: str) -> str:
    key = hashlib.sha256(f"{agent}\0{os.path.realpath(target)}".encode("utf-8", "surrogateescape"))
    return os.path.join(directory, key.hexdigest()[:32] + ".json")


def load(directory: str, target: str, agent: str) -> Record | None:
    """The record for this file and agent; None when there is none or it does not read (then
    uninstall falls back to taking our entries out of the text)."""
    try:
        with open(record_path(directory, target, agent), "rb") as handle:
            raw = json.loads(handle.read(64 * 1024 * 1024))
        before = raw["before"]
        return Record(
            None if before is None else base64.b64decode(before),
            base64.b64decode(raw["after"]),
            tuple(str(d) for d in raw["created_dirs"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(directory: str, target: str, agent: str, record: Record) -> None:
    content = json.dumps(
        {
            "path": os.path.realpath(target),
            "agent": agent,
            "before": None if record.before is None else base64.b64encode(record.before).decode(),
            "after": base64.b64encode(record.after).decode(),
            "created_dirs": list(record.created_dirs),
        }
    ).encode("utf-8", "surrogateescape")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        # Mode None keeps mkstemp's 0600: a record copies a settings file, which may hold secrets.
        replace_file(record_path(directory, target, agent), content, None, prefix=".record-")
    except OSError as exc:
        raise RecordError(
            f"cannot record the install in {directory}: {exc.strerror or exc}"
        ) from exc


def forget(directory: str, target: str, agent: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(record_path(directory, target, agent))


def missing_dirs(directory: str) -> tuple[str, ...]:
    """The directories, outermost first, that creating ``directory`` would create."""
    missing: list[str] = []
    while directory and not os.path.lexists(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return tuple(reversed(missing))

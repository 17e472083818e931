"""Touches kept while the store was busy, delivered by the session's next event.

One small file per session under ``$DSH_HOME/hooks/spool``: each busy event appends a line of
touched paths (an ``O_APPEND`` write of one line is atomic between processes), and the next
event that gets the store reads them and removes the file once its step has committed.
"""

from __future__ import annotations

import json
import os

from dsh_sidecar.private_paths import make_private_dirs


class Spool:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def _file(self, session_id: str) -> str:
        import hashlib  # a retried event never gets here; hashlib is milliseconds to load

        name = hashlib.sha1(session_id.encode("utf-8")).hexdigest()
        return os.path.join(self.directory, name + ".jsonl")

    def keep(self, session_id: str, paths: tuple[str, ...]) -> None:
        if not paths:
            return
        make_private_dirs(self.directory)
        line = (json.dumps(list(paths)) + "\n").encode("utf-8")
        fd = os.open(self._file(session_id), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def taken(self, session_id: str) -> tuple[str, tuple[str, ...]]:
        """The file to remove after the commit, and the paths it held (a bad line is skipped).

        The spool is renamed first, so a busy event appending meanwhile starts a new file
        instead of adding to one about to be removed.
        """
        path = f"{self._file(session_id)}.{os.getpid()}"
        try:
            os.rename(self._file(session_id), path)
        except FileNotFoundError:
            return path, ()
        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except FileNotFoundError:
            return path, ()
        found: list[str] = []
        for line in lines:
            try:
                entries = json.loads(line)
            except ValueError:
                continue
            if isinstance(entries, list):
                found.extend(p for p in entries if isinstance(p, str) and os.path.isabs(p))
        return path, tuple(dict.fromkeys(found))

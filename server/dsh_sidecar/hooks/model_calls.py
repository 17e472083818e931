"""Where an agent session's last two model calls began, in the store's event order.

Qwen Code keeps, after it compresses its history on its own, the message its compressing model
call was sending: the last tool results with the hooks' texts in them (or the prompt with its
prompt-time text). Its prompt hook fires before every model call, so after each firing the hook
notes the seq of the session's last step here; the deliveries after the one-before-last note, up
to the last, are that message (``Hooks.compaction_keeps_call``). One small JSON file per session
under ``$DSH_HOME/hooks/calls`` (named as the spool names its files), replaced whole: a
session's hooks run one at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from dsh_sidecar.private_paths import make_private_dirs


class ModelCalls:
    def __init__(self, dsh_home: str) -> None:
        self.directory = os.path.join(dsh_home, "hooks", "calls")

    def _path(self, session_id: str) -> str:
        name = hashlib.sha1(session_id.encode("utf-8")).hexdigest() + ".json"
        return os.path.join(self.directory, name)

    def note(self, session_id: str, seq: int) -> None:
        """A model call begins with the session's steps through ``seq`` delivered."""
        last = self.last_message(session_id)
        marks = [last[1] if last is not None else 0, seq]
        make_private_dirs(self.directory)
        path = self._path(session_id)
        scratch = f"{path}.{os.getpid()}.{os.urandom(4).hex()}"
        with open(scratch, "w", encoding="utf-8") as out:
            json.dump(marks, out)
        os.replace(scratch, path)

    def last_message(self, session_id: str) -> tuple[int, int] | None:
        """The seqs (after, through] of what the last model call's message took in; None when
        no call was noted (or a manual compaction forgot them)."""
        try:
            with open(self._path(session_id), encoding="utf-8") as found:
                marks = json.load(found)
        except (FileNotFoundError, ValueError):
            return None
        if not (isinstance(marks, list) and len(marks) == 2):
            return None
        if not all(isinstance(m, int) and not isinstance(m, bool) for m in marks):
            return None
        return marks[0], marks[1]

    def forget(self, session_id: str) -> None:
        """The agent compacts with nothing in flight (by hand, between turns): it keeps no
        message of a call."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._path(session_id))

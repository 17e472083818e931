"""Touches an agent's hook kept while the store was busy, until an event of the session takes them.

One file per session under ``$DSH_HOME/hooks/spool`` (named by a digest of the session id).
Each busy event appends one line, ``{"id": …, "paths": […]}``; an ``O_APPEND`` write of one line
is atomic between processes. Nothing is renamed or removed before the store says so, which is
what makes the spool survive a hook killed at any point:

- an event reads the entries *before* it takes the write lock, and inside its transaction takes
  only those whose id the store has not recorded as consumed; it records their ids
  (``hook_events``, key ``spool:<id>``) in the same transaction as the step that delivers them.
  Killed before the commit: nothing is recorded, the entries are still there for the next event.
  Killed after it: the ids are recorded, so no later event delivers them again.
- after the commit, :meth:`Spool.settle` drops the consumed lines. It renames the file aside
  first (a busy event appending meanwhile starts a new one), writes back whatever it does not
  know to be consumed, then unlinks the renamed file. Every ``<name>.jsonl.*`` left by a kill on
  the way, or by an older dsh-sidecar that renamed before its commit, is read like the file
  itself, and entries are told apart by id, so a line written back twice counts once.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from dsh_sidecar.private_paths import make_private_dirs

# The hook_events key a consumed entry is recorded under; hook event keys are "<kind>:<id>" with
# kinds of events, none of which is "spool".
CONSUMED_PREFIX = "spool:"


# What ``Kept.reset`` may be: a start's source after which the agent's context was reset.
RESETS = frozenset({"compact", "clear", "resume"})


@dataclass(frozen=True)
class Kept:
    """One busy event's touches; ``scanned`` are those a search, listing or shell command
    touched, after which the agent loads no instruction file itself (a subset of ``paths``).
    ``reset``: the reset of the agent's context (``RESETS``) the event reported, which the
    next answering event carries out in its place (the context shadowed and given again),
    since nothing else would tell it the agent lost it."""

    id: str
    paths: tuple[str, ...]
    scanned: tuple[str, ...] = ()
    reset: str | None = None

    @property
    def consumed_key(self) -> str:
        return CONSUMED_PREFIX + self.id


class Spool:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    @classmethod
    def of_home(cls, dsh_home: str) -> Spool:
        """The spool of the hooks that share ``$DSH_HOME`` (and so, by default, one store)."""
        return cls(os.path.join(dsh_home, "hooks", "spool"))

    def _name(self, session_id: str) -> str:
        import hashlib  # a retried event never gets here; hashlib is milliseconds to load

        return hashlib.sha1(session_id.encode("utf-8")).hexdigest() + ".jsonl"

    def keep(
        self,
        session_id: str,
        paths: tuple[str, ...],
        scanned: Collection[str] = (),
        reset: str | None = None,
    ) -> str | None:
        """Keep ``paths`` (and ``reset``) for the session's next answering event; the entry's id
        (None: no paths and no reset, nothing kept)."""
        if not paths and reset is None:
            return None
        if reset is not None and reset not in RESETS:
            raise ValueError(f"not a reset of the agent's context: {reset!r}")
        make_private_dirs(self.directory)
        entry: dict[str, object] = {"id": os.urandom(12).hex(), "paths": list(paths)}
        if reset is not None:
            entry["reset"] = reset
        # Kept apart because it changes what the delivering event does: after a Read the agent
        # may load a nested file itself, after a grep or a `cat` it loads nothing.
        if any(p in scanned for p in paths):
            entry["scanned"] = [p for p in paths if p in scanned]
        line = json.dumps(entry)
        live = os.path.join(self.directory, self._name(session_id))
        # A settle may rename the file between our open and our write; then the line landed in
        # a file that may already have been read, so it goes to the live name again (a copy
        # that survives as well counts once: same id).
        while not _append(live, [line]):
            pass
        return str(entry["id"])

    def read(self, session_id: str) -> list[Kept]:
        """Every entry kept for the session, in the order kept, each id once."""
        found: dict[str, Kept] = {}
        for path in self._files(session_id):
            for line in _lines(path):
                entry = _parse(line)
                if entry is not None and entry.id not in found:
                    found[entry.id] = entry
        return list(found.values())

    def settle(self, session_id: str, consumed: Collection[str]) -> None:
        """Drop the entries whose ids are in ``consumed`` (already recorded as such in the store);
        keep every other line, including those appended since they were read."""
        if not consumed:
            return
        live = os.path.join(self.directory, self._name(session_id))
        for path in self._files(session_id):
            if path == live:
                aside = f"{live}.{os.getpid()}.{os.urandom(4).hex()}"
                try:
                    os.rename(live, aside)
                except FileNotFoundError:
                    continue
                path = aside
            # A line that is no entry can never be delivered: it is dropped here.
            left = [
                line
                for line in _lines(path)
                if (entry_id := _id_of(line)) is not None and entry_id not in consumed
            ]
            while left and not _append(live, left):
                pass
            with contextlib.suppress(FileNotFoundError):  # another event settled it first
                os.unlink(path)

    def has_entries(self) -> bool:
        """Whether any session has a spool file (one look at the directory, so listing many
        sessions costs nothing while no hook was ever kept waiting)."""
        try:
            return any(".jsonl" in name for name in os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return False

    def unowned(self, session_ids: Iterable[str]) -> list[Kept]:
        """The entries kept for none of ``session_ids``: a session whose events were all busy so
        far (its first answered event creates it and takes them), or one deleted since."""
        owned = {self._name(sid) for sid in session_ids}
        try:
            names = sorted(os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found: dict[str, Kept] = {}
        for name in names:
            stem, suffix, _ = name.partition(".jsonl")  # the live file's name, or a leftover's
            if not suffix or stem + suffix in owned:
                continue
            for line in _lines(os.path.join(self.directory, name)):
                entry = _parse(line)
                if entry is not None:
                    found.setdefault(entry.id, entry)
        return list(found.values())

    def _files(self, session_id: str) -> list[str]:
        name = self._name(session_id)
        try:
            names = os.listdir(self.directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        # The live file first, then what kills and older versions left beside it.
        ours = sorted(n for n in names if n == name or n.startswith(name + "."))
        ours.sort(key=lambda n: n != name)
        return [os.path.join(self.directory, n) for n in ours]


def waiting_paths(
    entries: Iterable[Kept], consumed: Callable[[Sequence[str]], set[str]]
) -> list[str]:
    """The distinct paths of the entries not yet consumed; ``consumed`` answers which of the
    given keys the store has recorded."""
    entries = list(entries)
    done = consumed([e.consumed_key for e in entries]) if entries else set()
    left = (p for e in entries if e.consumed_key not in done for p in e.paths)
    return list(dict.fromkeys(left))


def _append(path: str, lines: Sequence[str]) -> bool:
    """Append ``lines`` in one write; False when ``path`` no longer names the file written."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
        written = os.fstat(fd)
    finally:
        os.close(fd)
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (written.st_dev, written.st_ino)


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except (FileNotFoundError, IsADirectoryError):
        return []


def _parse(line: str) -> Kept | None:
    """An entry, or None for a line that is not one (a bad line is skipped, never fatal)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    raw_scanned: object = []
    reset: object = None
    if isinstance(value, list):  # written before entries had ids
        raw: object = value
        entry_id = "line-" + _digest(line)
    elif isinstance(value, dict) and isinstance(value.get("id"), str):
        raw, entry_id = value.get("paths"), value["id"]
        raw_scanned = value.get("scanned", [])
        reset = value.get("reset")
    else:
        return None
    if not isinstance(raw, list):
        return None
    paths = tuple(p for p in raw if isinstance(p, str) and os.path.isabs(p))
    scanned = raw_scanned if isinstance(raw_scanned, list) else []
    known_reset = reset if isinstance(reset, str) and reset in RESETS else None
    return Kept(entry_id, paths, tuple(p for p in paths if p in scanned), known_reset)


def _id_of(line: str) -> str | None:
    entry = _parse(line)
    return entry.id if entry is not None else None


def _digest(line: str) -> str:
    import hashlib

    return hashlib.sha1(line.encode("utf-8")).hexdigest()[:24]

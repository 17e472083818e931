"""Bounded reads and directory listings for the agent simulation, over the filesystem seam.

Agents read instruction files as bytes (Codex cuts at a byte boundary and decodes what is left
leniently), so the simulation reads a bounded byte prefix rather than the sidecar's strict UTF-8
text. Reads go through ``LocalFileSystem`` (probe, ``open_for_read``, ``read_chunk``), so a FIFO
or device never blocks and tests can inject I/O errors. Rule folders are listed through it too
(``list_directory``), bounded in depth and count and never following a symlinked directory,
because a hostile repository controls them.
"""

from __future__ import annotations

import os
import stat

import attrs

from dsh_sidecar.fs import DIRECTORY, REGULAR_FILE, LocalFileSystem, ProbeState
from dsh_sidecar.sources.agent_instructions.confinement import Confinement, outside_reason
from dsh_sidecar.sources.observed import OneLook

from .globs import Glob

READ_CHUNK = 64 * 1024
MAX_LISTED_FILES = 500
MAX_LIST_DEPTH = 12


@attrs.frozen
class FileRead:
    """A present file: its size, and the first bytes read (``complete`` when that is all)."""

    path: str
    size: int
    data: bytes = b""
    complete: bool = False
    error: str | None = None
    # Set when the sidecar's trust boundary kept it from reading the file (a project file whose
    # real path is outside the project): the agent still reads it, so this is not an error; only
    # its size is known (an empty target is ``complete``, the rest unknown).
    boundary: str | None = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace").removeprefix("\ufeff")

    @property
    def blank(self) -> bool | None:
        """Whether the content is only whitespace; None when too little of it was read to say."""
        if self.error is not None:
            return None
        if self.text.strip():
            return False
        return True if self.complete else None


def read_file(
    fs: LocalFileSystem, path: str, cap: int, confined: Confinement | None = None
) -> FileRead | None:
    """The first ``cap`` bytes of the regular file at ``path``; None when nothing is there.

    With ``confined`` (a project file: repository text) the file is read only when its real
    path is inside it; otherwise it comes back with its size and ``boundary`` (why the sidecar
    does not read it) and not a byte of it is read, so nothing of it (frontmatter globs,
    imports) is quoted either.
    Within one explanation (``fs`` a ``OneLook``) each file is read once for every agent.
    """
    if isinstance(fs, OneLook):
        key = ("explain.read_file", path, cap, confined)
        if key not in fs.memo:
            fs.memo[key] = _read_file(fs, path, cap, confined)
        found: FileRead | None = fs.memo[key]
        return found
    return _read_file(fs, path, cap, confined)


def _read_file(
    fs: LocalFileSystem, path: str, cap: int, confined: Confinement | None
) -> FileRead | None:
    probe = fs.probe(path)
    if probe.state is ProbeState.ABSENT:
        return None
    if not probe.present:
        return FileRead(path, 0, error=probe.error or "cannot be read")
    size = probe.size or 0
    if confined is not None and not confined.allows(probe):
        return FileRead(path, size, complete=size == 0, boundary=outside_reason(probe.target))
    try:
        # The checked real path, opened without following a final link, so the file read is
        # the file checked even if a link is re-pointed in between.
        target = probe.target if confined is not None and probe.target else probe.path
        fd = fs.open_for_read(target, follow_final_link=confined is None)
    except (OSError, ValueError) as exc:
        return FileRead(path, size, error=_describe(exc))
    try:
        st = os.fstat(fd)
        if confined is not None:
            # The checked real path opened without following its last name is not enough: a
            # directory on the way swapped for a link out of the project between the check and
            # the open leads the open outside, so the file opened is checked as the engine's
            # reads are (a regular file, the one checked, where it was checked).
            refused = fs.check_opened(fd, st, probe, None)
            if refused is not None:
                return FileRead(path, size, error=refused.detail)
        elif not stat.S_ISREG(st.st_mode):
            return FileRead(path, size, error="not a regular file")
        chunks: list[bytes] = []
        total = 0
        while total < cap:
            chunk = fs.read_chunk(fd, min(READ_CHUNK, cap - total))
            if not chunk:
                return FileRead(path, size, b"".join(chunks), complete=True)
            chunks.append(chunk)
            total += len(chunk)
        extra = fs.read_chunk(fd, 1)
        return FileRead(path, size, b"".join(chunks), complete=not extra)
    except OSError as exc:
        return FileRead(path, size, error=_describe(exc))
    finally:
        os.close(fd)


@attrs.frozen
class Listing:
    files: tuple[str, ...]
    truncated: bool = False
    error: str | None = None


def list_files(folder: str, pattern: Glob, fs: LocalFileSystem) -> Listing:
    """Files below ``folder`` whose slash-separated relative path matches ``pattern``, sorted.

    Symlinked directories are not entered (a link can point back up and loop); symlinked files
    are listed. At most ``MAX_LISTED_FILES`` files and ``MAX_LIST_DEPTH`` levels are examined.
    Listings go through ``fs`` like every other look, so what a run saw can be checked again.
    """
    found: list[str] = []
    truncated = False
    if not fs.is_directory(folder):
        return Listing(())
    pending: list[tuple[str, str, int]] = [(folder, "", 0)]
    error: str | None = None
    while pending:
        directory, prefix, depth = pending.pop()
        try:
            entries = fs.list_directory(directory)
        except (OSError, ValueError) as exc:
            error = error or _describe(exc)
            continue
        subdirectories = []
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            path = os.path.join(directory, entry.name)
            if entry.kind == DIRECTORY:
                if depth + 1 < MAX_LIST_DEPTH:
                    subdirectories.append((path, rel + "/", depth + 1))
                else:
                    truncated = True
                continue
            if entry.kind != REGULAR_FILE or not pattern.matches(rel):
                continue
            if len(found) >= MAX_LISTED_FILES:
                truncated = True
                break
            found.append(path)
        pending.extend(reversed(subdirectories))
    return Listing(tuple(sorted(found)), truncated, error)


def _describe(exc: OSError | ValueError) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


# A directory with more entries than this is not searched for a case variant: the exact name
# alone is looked for there (a hostile tree must not make every explanation list it whole).
MAX_CASE_SCAN = 10_000


def case_variant(fs: LocalFileSystem, directory: str, name: str) -> str:
    """The path of ``name`` in ``directory`` for an agent that ignores ASCII case (Copilot
    CLI): the exact name when it is a regular file (links followed), else the first entry in
    the directory's own order (not sorted: that is the order the agent gets) whose name equals
    ``name`` but for ASCII case and is a regular file; else the exact path, absent."""
    exact = os.path.join(directory, name)
    if is_regular_file(fs, exact):
        return exact
    wanted = os.fsencode(name).lower()  # bytes.lower() changes ASCII letters only
    for entry in _unsorted_names(fs, directory):
        path = os.path.join(directory, entry)
        if os.fsencode(entry).lower() == wanted and is_regular_file(fs, path):
            return path
    return exact


def is_regular_file(fs: LocalFileSystem, path: str) -> bool:
    """Whether ``path`` is a regular file, links followed (Rust's ``Path::is_file``)."""
    try:
        return stat.S_ISREG(fs.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _unsorted_names(fs: LocalFileSystem, directory: str) -> tuple[str, ...]:
    """The entry names of ``directory`` as the system lists them; once per explanation."""
    if isinstance(fs, OneLook):
        key = ("explain.unsorted_names", directory)
        if key not in fs.memo:
            fs.memo[key] = _scan_names(directory)
        names: tuple[str, ...] = fs.memo[key]
        return names
    return _scan_names(directory)


def _scan_names(directory: str) -> tuple[str, ...]:
    # os.scandir rather than fs.list_directory, which sorts: the agent takes the first match
    # in the order the system gives.
    out: list[str] = []
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                if len(out) >= MAX_CASE_SCAN:
                    return ()
                out.append(entry.name)
    except (OSError, ValueError):
        return ()
    return tuple(out)

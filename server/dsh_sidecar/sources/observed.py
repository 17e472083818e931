"""What a computation saw of the filesystem, so that a later look can tell, cheaply, whether it
would see exactly the same again.

``dsh/scopes``, hover and explain are pure functions of the files they look at: which names
exist in which directories, what each present file holds, and where each path really leads. A
computation run over an ``ObservingFileSystem`` records those facts as it goes (an
``Observations``); ``Observations.still_hold`` re-checks them with one ``stat`` per directory
looked into and per present file, and one ``resolve`` per directory whose real path mattered,
instead of running the computation again. When they hold, the computation's answer is the same,
so ``ObservedCache`` serves the kept one.

What is recorded, and why it is enough:

* *Directories*: the ``stat`` signature (device, inode, modification and change times, size,
  link count) of the directory holding every name looked up. Adding, removing, renaming or
  replacing an entry (a file swapped for a symbolic link, a link re-pointed: links are never
  changed in place) changes the directory's times, so an unchanged directory has the same names,
  each the same inode. A name missing in a missing directory is recorded on the nearest
  directory that exists. A directory looked into only for names it does not hold (an ancestor
  of the project such as a shared ``/tmp`` or the home directory, where other programs add and
  remove entries all the time) keeps those names too: when its times moved, or moved too
  recently to be trusted, the names are still absent is what the answer rests on, one ``stat``
  each.
* *Files*: the ``stat`` signature (links followed) of every present file, which changes with its
  content, and of every path whose look failed otherwise than "absent" (with the error).
* *Real paths*: where a path led. A path that was its own real path is re-checked through its
  directory: when that directory is still a real path (the deepest such directories are
  resolved again) and still holds the same entries, the path is still real. Any other path is
  resolved again.

Two limits keep this exact. A timestamp tells changes apart only at its granularity, so a
recording that saw a file or directory changed less than ``RACY_WINDOW_NS`` before it finished
is not kept (as git treats a racily clean index entry): its next use computes afresh. And a read
that failed for a reason a ``stat`` cannot see again (an I/O error, a file changed while it was
read) is not kept either.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from dsh_sidecar.fs import (
    Listed,
    LocalFileSystem,
    Probe,
    ReadFailure,
    ReadResult,
    is_plain_absolute,
    kernel_path,
    read_flags,
)

T = TypeVar("T")

# Filesystem timestamps are as fine as their filesystem keeps them (2 s on FAT, 1 s on some
# network filesystems, a clock tick on older Linux kernels): a change this close to a recording
# might not move a timestamp it saw.
RACY_WINDOW_NS = 2_000_000_000

_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR})
_NOT_KEPT_READS = frozenset({ReadFailure.IO_ERROR, ReadFailure.CHANGED, ReadFailure.NOT_A_FILE})

# A stat's signature (mode, device, inode, size, links, mtime, ctime), or (-1, errno) for a stat
# that failed (-1 again for a name the OS cannot take).
Outcome = tuple[int, ...]
_FAILED = -1


def signature(st: os.stat_result) -> Outcome:
    return (
        st.st_mode,
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_nlink,
        st.st_mtime_ns,
        st.st_ctime_ns,
    )


def _outcome(fs: LocalFileSystem, path: str) -> Outcome:
    try:
        return signature(fs.stat(path))
    except OSError as exc:
        return (_FAILED, exc.errno if exc.errno is not None else _FAILED)
    except ValueError:
        return (_FAILED, _FAILED)


class Observations:
    """The facts one computation relied on. Filled by one thread, then only read."""

    def __init__(self) -> None:
        self.directories: dict[str, Outcome] = {}
        self.files: dict[str, Outcome] = {}
        # Directories found at a path: only that the path still leads to this very directory.
        self.kinds: dict[str, tuple[int, int, int]] = {}
        # Paths whose real path was their own, by the directory that vouches for them.
        self.real_dirs: set[str] = set()
        self.reals: dict[str, str] = {}  # other paths and where they led
        # Directories every entry of which matters: listed, holding a present name, or vouching
        # for a real path. Any other directory recorded held only names found absent (below).
        self.whole: set[str] = set()
        # Those other directories, each with the names under it the answer needs absent (a name
        # in a missing directory by the missing entry of the directory itself).
        self.absent: dict[str, dict[str, Outcome]] = {}
        self._by_names: dict[str, tuple[tuple[str, Outcome], ...]] = {}
        self.kept = True
        self.newest_ns = 0  # the latest modification or change time seen
        self._leaves: tuple[str, ...] | None = None

    def spoil(self) -> None:
        """Something was seen that a later ``stat`` could not tell apart: never reuse this."""
        self.kept = False

    def _seen(self, outcome: Outcome) -> None:
        if outcome[0] != _FAILED:
            self.newest_ns = max(self.newest_ns, outcome[5], outcome[6])

    def finish(self, now_ns: int | None = None) -> bool:
        """Close the recording; whether it may be reused (nothing changed racily close to now)."""
        now = time.time_ns() if now_ns is None else now_ns
        for holder, names in self.absent.items():
            if holder in self.whole:
                continue
            outcome = self.directories[holder]
            if max(outcome[5], outcome[6]) > now - RACY_WINDOW_NS:
                # Its times may not move again for an entry added now: its names, not it.
                del self.directories[holder]
                self.files.update(names)
            else:
                self._by_names[holder] = tuple(names.items())
        self.absent = {}
        if self.newest_ns > now - RACY_WINDOW_NS:
            self.kept = False
        # A directory whose whole signature is checked is the same directory (kind, device,
        # inode) whenever that check holds: one stat for both.
        for path in self.directories.keys() & self.kinds.keys():
            del self.kinds[path]
        # The deepest directories that must still be real paths (their ancestors follow).
        ordered = sorted(self.real_dirs, key=len, reverse=True)
        leaves: list[str] = []
        for directory in ordered:
            prefix = directory if directory.endswith(os.sep) else directory + os.sep
            if not any(leaf.startswith(prefix) or leaf == directory for leaf in leaves):
                leaves.append(directory)
        self._leaves = tuple(leaves)
        return self.kept

    @property
    def size(self) -> int:
        """How many checks ``still_hold`` makes (for tests and benchmarks)."""
        return (
            len(self.directories)
            + len(self.files)
            + len(self.kinds)
            + len(self.reals)
            + len(self._leaves or ())
        )

    def still_hold(self, fs: LocalFileSystem) -> bool:
        """Whether every recorded fact is still true (blocking: one stat or resolve per fact;
        under a ``OneLook`` none for a path another check of the same request looked at)."""
        if not self.kept or self._leaves is None:
            return False
        if isinstance(fs, ObservingFileSystem):  # a whole answer re-checking a kept part
            for path, seen in self.directories.items():
                if not fs.still_directory(path, seen, self._by_names.get(path)):
                    return False
        else:
            for path, seen in self.directories.items():
                if _outcome(fs, path) != seen and not self._names_hold(fs, path):
                    return False
        for path, seen in self.files.items():
            if _outcome(fs, path) != seen:
                return False
        for path, kind in self.kinds.items():
            found = _outcome(fs, path)
            if found[0] == _FAILED or (stat.S_IFMT(found[0]), found[1], found[2]) != kind:
                return False
        try:
            for directory in self._leaves:
                if fs.resolve(directory) != directory:
                    return False
            return all(fs.resolve(path) == real for path, real in self.reals.items())
        except (OSError, ValueError):
            return False

    def _names_hold(self, fs: LocalFileSystem, directory: str) -> bool:
        """Whether every name a directory was looked into for is still absent (only for a
        directory that held nothing else the answer rests on)."""
        names = self._by_names.get(directory)
        return names is not None and all(_outcome(fs, path) == seen for path, seen in names)


class ObservingFileSystem(LocalFileSystem):
    """``base`` as it is, recording into ``observations`` what every look saw.

    Reads are ``base``'s own (so its fault injection and checks apply); what they return is
    bound to the version the probe before them recorded.
    """

    def __init__(self, base: LocalFileSystem, observations: Observations) -> None:
        self.base = base
        self.observations = observations
        self._existing: dict[str, str | None] = {}  # directory -> nearest existing one

    # --- primitives every probe, quick_stat, exists and is_directory go through --------------

    def stat(self, path: str) -> os.stat_result:
        obs = self.observations
        try:
            st = self.base.stat(path)
        except OSError as exc:
            if exc.errno in _ABSENT:
                self._absent(path, exc.errno)
            else:
                obs.files[path] = (_FAILED, exc.errno if exc.errno is not None else _FAILED)
            raise
        except ValueError:
            obs.files[path] = (_FAILED, _FAILED)
            raise
        self._directory_of(path)
        if stat.S_ISDIR(st.st_mode):
            # Whether it is still this directory (through a link, its holder cannot say), but
            # not its times: a marker such as ``.git`` changes inside all the time.
            obs.kinds[path] = (stat.S_IFMT(st.st_mode), st.st_dev, st.st_ino)
        else:
            outcome = signature(st)
            obs.files[path] = outcome
            obs._seen(outcome)
        return st

    def resolve(self, path: str) -> str:
        real = self.base.resolve(path)
        if real == path and os.path.isabs(path):
            holder = self._nearest_existing(os.path.dirname(path))
            if holder is not None:
                self._record_directory(holder)
                self.observations.real_dirs.add(holder)
                return real
        self.observations.reals[path] = real
        return real

    def list_directory(self, path: str) -> tuple:  # type: ignore[type-arg]
        try:
            entries = self.base.list_directory(path)
        except OSError:
            self.observations.spoil()  # a listing error may not repeat
            raise
        self._record_directory(path)
        for entry in entries:
            if entry.link:  # what it leads to can change without this directory changing
                linked = os.path.join(path, entry.name)
                outcome = _outcome(self.base, linked)
                self.observations.files[linked] = outcome
                self.observations._seen(outcome)
        return entries

    # --- reads: base's, spoiled when a stat could not see their failure again ---------------

    def read_text(
        self,
        probe: Probe,
        max_source_bytes: int,
        *,
        allowed: Callable[[str], bool] | None = None,
    ) -> ReadResult:
        read = self.base.read_text(probe, max_source_bytes, allowed=allowed)
        if read.failure in _NOT_KEPT_READS or (
            read.ok and probe.version is not None and read.version != probe.version
        ):
            self.observations.spoil()
        return read

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        try:
            return self.base.open_for_read(path, follow_final_link=follow_final_link)
        except (OSError, ValueError):
            self.observations.spoil()
            raise

    def read_chunk(self, fd: int, size: int) -> bytes:
        try:
            return self.base.read_chunk(fd, size)
        except OSError:
            self.observations.spoil()
            raise

    def opened_path(self, fd: int) -> str | None:
        return self.base.opened_path(fd)

    def still_directory(
        self, path: str, seen: Outcome, names: tuple[tuple[str, Outcome], ...] | None
    ) -> bool:
        """A kept part's directory check, recorded as the part recorded it: the directory's
        signature (not only its kind and its parent's, which a plain ``stat`` of a directory
        records), or, for a directory that held only absent names, those names."""
        obs = self.observations
        outcome = _outcome(self.base, path)
        if names is None:
            if outcome != seen:
                return False
            obs.directories.setdefault(path, outcome)
            self._record_directory(path)
            return True
        if outcome != seen and any(_outcome(self.base, p) != o for p, o in names):
            return False
        obs.directories.setdefault(path, outcome)
        obs.absent.setdefault(path, {}).update(names)
        return True

    # --- bookkeeping ----------------------------------------------------------------------

    def _directory_of(self, path: str) -> None:
        directory = os.path.dirname(path)
        if directory and directory != path and directory not in self.observations.whole:
            self._record_directory(directory)

    def _record_directory(self, directory: str) -> None:
        """A directory every entry of which the answer rests on."""
        obs = self.observations
        if directory in obs.whole:
            return
        obs.whole.add(directory)
        outcome = obs.directories.get(directory)
        if outcome is None:
            outcome = _outcome(self.base, directory)
            obs.directories[directory] = outcome
        obs._seen(outcome)

    def _absent(self, path: str, error: int) -> None:
        """``path`` is not there: its nearest existing ancestor's entries say so (or, for an
        ancestor that holds nothing else the answer rests on, the name itself; ``finish``)."""
        obs = self.observations
        holder = self._nearest_existing(os.path.dirname(path))
        if holder is None:
            obs.files[path] = (_FAILED, errno.ENOENT)
        elif holder not in obs.whole:
            names = obs.absent.setdefault(holder, {})
            if os.path.dirname(path) == holder:
                names[path] = (_FAILED, error)
            else:  # what is there in the holder instead of the missing directory
                first = path[len(holder) :].lstrip(os.sep).split(os.sep, 1)[0]
                entry = os.path.join(holder, first)
                if entry not in names:
                    names[entry] = _outcome(self.base, entry)

    def _nearest_existing(self, directory: str) -> str | None:
        """The closest of ``directory`` and its ancestors that is a directory (recorded)."""
        known = self._existing
        walked = []
        current = directory
        while current not in known:
            walked.append(current)
            outcome = _outcome(self.base, current)
            if outcome[0] != _FAILED and stat.S_ISDIR(outcome[0]):
                # Its times count once it is whole (``_record_directory``), else see ``finish``.
                self.observations.directories.setdefault(current, outcome)
                known[current] = current
                break
            if outcome[0] == _FAILED and outcome[1] not in _ABSENT:
                known[current] = None  # an error that is not absence: nothing vouches
                break
            parent = os.path.dirname(current)
            if not parent or parent == current:
                known[current] = None
                break
            current = parent
        found = known[current]
        for each in walked:
            known[each] = found
        return found


_O_PATH = getattr(os, "O_PATH", 0)
_DIRECTORY_HANDLE = _O_PATH | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_PATH_MAX = 4096  # Linux: a longer path fails a walk with ENAMETOOLONG
_MAX_BYTES_PER_CHARACTER = 4  # UTF-8 at most (a filesystem encoding such as Latin-1: one)
_HANDLES_KEPT = 256  # past this many open directory handles in one request, looks are walks
# A walk of this many components costs the kernel about what a step from an open directory
# costs in Python, so shallower paths are asked by path (most are: the handles pay off in
# hostile depths, where a walk per look would make a chain quadratic).
_SHALLOW_COMPONENTS = 48
_ANCHOR_STEP = 32  # directories between two open handles of a deep chain
_NOT_NAMES = frozenset({"", os.curdir, os.pardir})  # what ends a path that is not plain


# A failed stat as a look keeps it: the exception's class and the arguments that raise it again.
# Not the exception itself: raising a kept exception gave it a traceback each time, whose frames
# hold the look that keeps it (a reference cycle per request: no look, with all it asked, went
# before the garbage collector's full pass); and the collector tracks every exception, while a
# deep chain's request keeps thousands of failures, which it promoted to its oldest generation,
# counted towards the next full collection and walked in each. A flat tuple of plain values is
# no longer tracked once a collection has seen it.
_Failure = tuple[Any, ...]  # (class, *arguments)


def _failure(exc: OSError | ValueError) -> _Failure:
    """What raises ``exc`` again: its class (an ``OSError`` takes its subclass from the errno),
    errno, message and file names."""
    if isinstance(exc, OSError):
        return (OSError, exc.errno, exc.strerror, exc.filename, None, exc.filename2)
    return (ValueError, *exc.args)


# A directory's anchor: the handle to look from, the way down from it ("" or ending in a
# separator), how many directories that way is, and the directory's own depth.
_Anchor = tuple[int, str, int, int]


def _too_long(path: str) -> bool:
    """Whether ``path`` is too long for one walk. A character is one to four bytes (UTF-8, or
    one for an undecodable byte kept as a surrogate), so only a path that is not ASCII and
    between a quarter of the limit and the limit in characters is encoded to be measured: a
    home directory named in another script makes every look's path non-ASCII."""
    size = len(path)
    if size >= _PATH_MAX:
        return True
    if size * _MAX_BYTES_PER_CHARACTER < _PATH_MAX or path.isascii():
        return False
    return len(os.fsencode(path)) >= _PATH_MAX


def _close_all(fds: dict[str, int]) -> None:
    while fds:
        os.close(fds.popitem()[1])


class OneLook(LocalFileSystem):
    """``base``, with each path's ``stat`` and real path asked once: one request's moment.

    A hover checks a chain and an explanation that looked at mostly the same files, or computes
    both, and an explanation has five agents ask about the same names in the same directories;
    in a tree a thousand levels deep each of those looks costs the kernel a thousand-component
    walk. Under a ``OneLook`` each path is asked once per request (a path that changes while the
    request runs is seen as it was first seen), and ``memo`` keeps other answers for the moment
    (explain's reads). Reads and listings are asked each time.

    Over the plain local filesystem, a path deeper than ``_SHALLOW_COMPONENTS`` is looked up
    from an open ancestor (``O_PATH``: nothing is opened for reading) at most ``_ANCHOR_STEP``
    directories above it, each such anchor opened once per request from the one above it: a
    thousand-level chain costs a walk of a few dozen names per look, not of a thousand. So are
    its resolve (the kernel's name of what it leads to) and the open of a read. The answer is
    the walk's (links followed, the same errors; a name too long for one walk fails as the walk
    fails), at the moment the anchors were opened; a resolve or an open that fails from a handle
    is asked again by path, so its answer or error is the walk's own. A read checks the file it
    opened (``LocalFileSystem.read_text``: its device and inode, and where the kernel says it
    is), so a link or directory swapped in after an anchor was opened is refused as it would be
    on a walk.
    """

    def __init__(self, base: LocalFileSystem) -> None:
        self.base = base
        self._stats: dict[str, os.stat_result | _Failure] = {}
        self._reals: dict[str, str] = {}
        self.memo: dict[Hashable, Any] = {}
        # Directory handles by path (only over the plain filesystem: a subclass's ``stat`` is
        # how tests inject faults, so it is always asked by path), and for each directory seen
        # the handle to look from and the way down from it (``_anchor``).
        self._by_directory = type(base) is LocalFileSystem and _O_PATH != 0
        self._fds: dict[str, int] = {}
        self._anchors: dict[str, _Anchor] = {}
        self._closer = weakref.finalize(self, _close_all, self._fds)

    def close(self) -> None:
        """Let go of the directory handles now (they go with the object otherwise)."""
        self._closer()

    def stat(self, path: str) -> os.stat_result:
        found = self._stats.get(path)
        if found is None:
            try:
                found = self._stat(path)
            except (OSError, ValueError) as exc:
                found = _failure(exc)
            self._stats[path] = found
        if isinstance(found, os.stat_result):
            return found
        raise found[0](*found[1:])

    def _stat(self, path: str) -> os.stat_result:
        at = self._from_handle(path)
        if at is None:
            return self.base.stat(path)
        return os.stat(at[1], dir_fd=at[0])

    def _from_handle(self, path: str) -> tuple[int, str] | None:
        """An open directory to look ``path`` up from and the rest of the way from it, or None
        when ``path`` is asked by path: over a fault-injecting filesystem, when it is shallow,
        unusual (not plain, too long for one walk) or no handle is left."""
        if not self._by_directory or _too_long(path):
            return None
        if self._anchors:
            directory, _, name = path.rpartition(os.sep)
            known = self._anchors.get(directory)
            if known is not None:
                # Its directory was looked at before: a plain path of known depth, so only the
                # name is left to check (a deep chain asks about many names in each directory,
                # and a scan of the whole path would cost the square of the depth).
                fd, below, _, depth = known
                if depth < _SHALLOW_COMPONENTS or name in _NOT_NAMES:
                    return None
                return fd, below + name
        return self._first_from_handle(path)

    def _first_from_handle(self, path: str) -> tuple[int, str] | None:
        """``_from_handle`` of a path whose directory was not looked at before: one right below
        a directory that was (``.claude`` of ``.claude/CLAUDE.md``) is told from that one's depth
        and the two names, any other by a count of its parts and a scan of the whole path."""
        if self._anchors:
            directory, _, name = path.rpartition(os.sep)
            parent, _, sub = directory.rpartition(os.sep)
            above = self._anchors.get(parent)
            if above is not None and sub not in _NOT_NAMES and name not in _NOT_NAMES:
                return self._below(directory, name) if above[3] + 2 > _SHALLOW_COMPONENTS else None
        if (
            path.count(os.sep) <= _SHALLOW_COMPONENTS
            or path == os.sep
            or not is_plain_absolute(path)
        ):
            return None
        directory, name = path.rsplit(os.sep, 1)
        return self._below(directory, name)

    def _below(self, directory: str, name: str) -> tuple[int, str] | None:
        """The handle to look ``name`` in ``directory`` up from (its anchor, opened if need be)
        and the rest of the way, or None."""
        try:
            anchor = self._anchor(directory or os.sep)
        except OSError:
            return None  # the walk says what is wrong on the way, as it would have
        if anchor is None:
            return None
        fd, below = anchor
        return fd, below + name

    def _anchor(self, directory: str) -> tuple[int, str] | None:
        """An open ancestor of ``directory`` (itself, or fewer than ``_ANCHOR_STEP`` levels up)
        and the way down from it ("" or ending in a separator); None once no handle is left.

        Every ``_ANCHOR_STEP``-th directory of a chain is opened, from the anchor above it, so a
        look costs the kernel a walk of at most that many names and a thousand-level chain keeps
        a few dozen handles, which every pass down the chain (there are many in a request)
        reuses instead of reopening.
        """
        known = self._anchors
        found = known.get(directory)
        if found is not None:
            return found[0], found[1]
        missing = []
        current = directory
        while current not in known and current != os.sep:
            missing.append(current)
            current = os.path.dirname(current)
        if current not in known:  # the root
            fd = os.open(os.sep, _DIRECTORY_HANDLE)
            self._fds[os.sep] = fd
            known[os.sep] = (fd, "", 0, 0)
        fd, below, steps, depth = known[current]
        for path in reversed(missing):
            name = path.rsplit(os.sep, 1)[1]
            depth += 1
            if steps + 1 < _ANCHOR_STEP:
                fd, below, steps = fd, below + name + os.sep, steps + 1
            else:
                if len(self._fds) >= _HANDLES_KEPT:
                    return None
                fd = os.open(below + name, _DIRECTORY_HANDLE, dir_fd=fd)
                self._fds[path] = fd
                below, steps = "", 0
            known[path] = (fd, below, steps, depth)
        return fd, below

    def resolve(self, path: str) -> str:
        real = self._reals.get(path)
        if real is None:
            real = self._reals[path] = self._resolve(path)
        return real

    def _resolve(self, path: str) -> str:
        at = self._from_handle(path)
        if at is not None:
            # The kernel's name for what the path leads to, as ``real_path`` asks it but from
            # the handle; anything else (a missing tail, a dangling link) takes its whole way.
            found, _ = kernel_path(at[1], dir_fd=at[0])
            if found is not None:
                return found
        return self.base.resolve(path)

    def list_directory(self, path: str) -> tuple[Listed, ...]:
        return self.base.list_directory(path)

    def read_text(
        self,
        probe: Probe,
        max_source_bytes: int,
        *,
        allowed: Callable[[str], bool] | None = None,
    ) -> ReadResult:
        if self._by_directory:
            # The plain filesystem's read with this look's opens: its checks are on the file
            # that was opened (its device, inode and kernel-reported path), however it was.
            return super().read_text(probe, max_source_bytes, allowed=allowed)
        return self.base.read_text(probe, max_source_bytes, allowed=allowed)

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        at = self._from_handle(path)
        if at is not None:
            try:
                return os.open(at[1], read_flags(follow_final_link), dir_fd=at[0])
            except OSError:
                pass  # asked by path again, so the error is the one a walk gives (its name)
        return self.base.open_for_read(path, follow_final_link=follow_final_link)

    def read_chunk(self, fd: int, size: int) -> bytes:
        return self.base.read_chunk(fd, size)

    def opened_path(self, fd: int) -> str | None:
        return self.base.opened_path(fd)


class ObservedCache(Generic[T]):
    """Answers kept by key with the observations they rest on; reused only while those hold.

    ``get`` runs in a worker: it re-checks the kept observations (a few stats) or computes
    afresh over an ``ObservingFileSystem``. The least recently used answers go past ``limit``.
    """

    def __init__(self, limit: int = 128) -> None:
        self.limit = limit
        self.built = 0  # how many answers were computed (tests check reuse and invalidation)
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Observations, T]] = OrderedDict()

    def lookup(self, key: Hashable, fs: LocalFileSystem) -> tuple[T] | None:
        """The kept answer (in a 1-tuple, as it may be None itself) if it still holds."""
        with self._lock:
            kept = self._entries.get(key)
            if kept is not None:
                self._entries.move_to_end(key)
        if kept is not None and kept[0].still_hold(fs):
            return (kept[1],)
        return None

    def get(self, key: Hashable, fs: LocalFileSystem, build: Callable[[LocalFileSystem], T]) -> T:
        found = self.lookup(key, fs)
        if found is not None:
            return found[0]
        observations = Observations()
        value = build(ObservingFileSystem(fs, observations))
        with self._lock:
            self.built += 1
            if observations.finish():
                self._entries[key] = (observations, value)
                self._entries.move_to_end(key)
                while len(self._entries) > self.limit:
                    self._entries.popitem(last=False)
            else:
                self._entries.pop(key, None)
        return value

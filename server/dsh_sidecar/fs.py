"""The filesystem seam: resolve, probe and bounded reads of instruction files.

Upstream's provider contract (docs/reference/agent-instructions.md, Probes and reads): a probe is *present* (a regular file,
with an opaque version), *absent* (confirmed: missing, not a regular file, a link to a directory,
ENOENT/ENOTDIR) or *unavailable* (any other error, which is never treated as a deletion). Reads are
bounded and strict, and never block on a FIFO, socket or device.

A read returns the bytes of the file that was checked, or nothing. With a probe's resolved
target it opens that real path without following a final symlink and compares the opened file's
device and inode (and, where the OS can tell, its real path) with the probe's. With an
``allowed`` test it asks where the *opened* file really lives and refuses it unless allowed, so
the check is on the very file whose bytes are read. Either way a link re-pointed, or a directory
on the way swapped for a link, between a check and the read cannot smuggle in another file
(docs/sources.md, "Symlinks that leave the project").

Tests subclass ``LocalFileSystem`` to inject failures that root cannot provoke with permissions:
``stat`` is the one primitive behind ``probe``, ``quick_stat`` and ``exists``, so overriding it
reaches every probe; a subclass that replaces ``probe`` itself must replace ``quick_stat`` too.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import sys
from collections.abc import Callable
from enum import Enum

import attrs

NUL_SCAN_BYTES = 8192
_MAC_PATH_MAX = 1024
READ_CHUNK = 64 * 1024
BOM = "\ufeff"


class ProbeState(Enum):
    PRESENT = "present"
    ABSENT = "absent"
    UNAVAILABLE = "unavailable"


@attrs.frozen
class Probe:
    state: ProbeState
    path: str
    target: str | None = None
    version: str | None = None
    size: int | None = None
    error: str | None = None
    # (st_dev, st_ino) of the file found: a read must return this file's bytes or none.
    identity: tuple[int, int] | None = None

    @property
    def present(self) -> bool:
        return self.state is ProbeState.PRESENT


class ReadFailure(Enum):
    OVERSIZED = "oversized"
    BINARY = "binary"
    INVALID_UTF8 = "invalid-utf8"
    NOT_A_FILE = "not-a-file"
    IO_ERROR = "io-error"
    CHANGED = "changed"  # the path led to another file than the probe checked
    NOT_ALLOWED = "not-allowed"  # the opened file's real path failed the ``allowed`` test


@attrs.frozen
class ReadResult:
    text: str | None
    failure: ReadFailure | None = None
    detail: str | None = None  # for NOT_ALLOWED: the real path of the file that was refused
    version: str | None = None  # the version of the file actually read

    @property
    def ok(self) -> bool:
        return self.text is not None


DIRECTORY = "directory"
REGULAR_FILE = "file"
OTHER = "other"


@attrs.frozen
class Listed:
    """One entry of a directory listing."""

    name: str
    kind: str  # DIRECTORY (never through a link), REGULAR_FILE (links followed) or OTHER
    link: bool = False  # the entry itself is a symbolic link


def version_of(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


_ABSENT_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR})


class LocalFileSystem:
    """The real local filesystem."""

    def resolve(self, path: str) -> str:
        """Absolute real path; a final-component symlink is followed, a missing tail kept.

        ``os.path.realpath``'s answer (``real_path``), in a few system calls however deep the
        path is.
        """
        return real_path(path)

    def stat(self, path: str) -> os.stat_result:
        """The stat (following links) behind every probe; fault-injecting tests override it."""
        return os.stat(path)

    def quick_stat(self, path: str) -> tuple[str, int] | Probe:
        """``probe`` for hot loops: a present file comes back as just ``(version, size)``.

        Reconciliation confirms most scopes by their version alone, so it needs neither the real
        path (one ``lstat`` per path component, ten times the ``stat`` for a deep tree) nor a
        ``Probe`` object. Absent and unavailable come back as the ``Probe`` that ``probe`` gives.
        """
        try:
            st = self.stat(path)
        except (OSError, ValueError) as exc:
            return _failed_probe(path, exc)
        if not stat.S_ISREG(st.st_mode):
            return Probe(ProbeState.ABSENT, path)
        return version_of(st), st.st_size

    def probe(self, path: str) -> Probe:
        try:
            st = self.stat(path)
        except (OSError, ValueError) as exc:
            return _failed_probe(path, exc)
        if not stat.S_ISREG(st.st_mode):
            return Probe(ProbeState.ABSENT, path)
        try:
            target = self.resolve(path)
        except (OSError, ValueError) as exc:
            return Probe(ProbeState.UNAVAILABLE, path, error=_describe_any(exc))
        return Probe(
            ProbeState.PRESENT,
            path,
            target,
            version_of(st),
            st.st_size,
            identity=(st.st_dev, st.st_ino),
        )

    def is_directory(self, path: str) -> bool:
        """``os.path.isdir`` through ``stat``: a link to a directory counts, errors count as no."""
        try:
            return stat.S_ISDIR(self.stat(path).st_mode)
        except (OSError, ValueError):
            return False

    def list_directory(self, path: str) -> tuple[Listed, ...]:
        """The entries of the directory ``path``, sorted by name; raises ``OSError``.

        Each says whether it is a directory (not through a link: a link can lead back up), a
        regular file (links followed) or something else.
        """
        out = []
        with os.scandir(path) as scan:
            for entry in scan:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        kind = DIRECTORY
                    elif entry.is_file():
                        kind = REGULAR_FILE
                    else:
                        kind = OTHER
                    link = entry.is_symlink()
                except OSError:
                    kind, link = OTHER, False
                out.append(Listed(entry.name, kind, link))
        return tuple(sorted(out, key=lambda e: e.name))

    def exists(self, path: str) -> bool:
        """Whether anything (of any type) is at ``path``; errors count as no (root-marker test)."""
        try:
            self.stat(path)
        except (OSError, ValueError):  # ValueError: a marker name with NUL, as in probe()
            return False
        return True

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        return os.open(path, read_flags(follow_final_link))

    def opened_path(self, fd: int) -> str | None:
        """The real path of the open file ``fd`` as the kernel knows it, or None where the OS
        cannot tell (then the device and inode check alone guards the read)."""
        if sys.platform == "darwin":
            import fcntl

            try:
                raw = fcntl.fcntl(fd, getattr(fcntl, "F_GETPATH", 50), b"\0" * _MAC_PATH_MAX)
            except OSError:
                return None
            return os.fsdecode(raw.split(b"\0", 1)[0])
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None

    def read_chunk(self, fd: int, size: int) -> bytes:
        return os.read(fd, size)

    def read_text(
        self,
        probe: Probe,
        max_source_bytes: int,
        *,
        allowed: Callable[[str], bool] | None = None,
    ) -> ReadResult:
        """Bounded strict UTF-8 read (docs/reference/agent-instructions.md, Probes and reads) of the file that was checked; never raises
        for file problems.

        With a resolved target the read opens that real path without following a final link,
        so it reaches the very file that was checked or fails; without one (a quick probe) it
        opens the path as given. ``allowed`` is asked about the real path of the file actually
        opened, before a byte is read (``NOT_ALLOWED`` when it says no).
        """
        if probe.size is not None and probe.size > max_source_bytes:
            return ReadResult(None, ReadFailure.OVERSIZED, f"{probe.size} bytes")
        try:
            if probe.target is not None:
                fd = self.open_for_read(probe.target, follow_final_link=False)
            else:
                fd = self.open_for_read(probe.path)
        except (OSError, ValueError) as exc:
            if isinstance(exc, OSError) and exc.errno == errno.ELOOP and probe.target is not None:
                return ReadResult(
                    None, ReadFailure.CHANGED, "became a symlink after it was checked"
                )
            return ReadResult(None, ReadFailure.IO_ERROR, _describe_any(exc))
        try:
            st = os.fstat(fd)
            refused = self.check_opened(fd, st, probe, allowed)
            if refused is not None:
                return refused
            read = self._read_fd(fd, max_source_bytes)
            return attrs.evolve(read, version=version_of(st)) if read.ok else read
        except OSError as exc:
            return ReadResult(None, ReadFailure.IO_ERROR, _describe(exc))
        finally:
            os.close(fd)

    def check_opened(
        self,
        fd: int,
        st: os.stat_result,
        probe: Probe,
        allowed: Callable[[str], bool] | None,
    ) -> ReadResult | None:
        """Refuse an open file that is not a regular file, not the one ``probe`` checked, or
        (with ``allowed``) not in an allowed place. Every read of repository text asks it of the
        file it opened: ``read_text``'s, and explain's bounded byte reads."""
        if not stat.S_ISREG(st.st_mode):
            return ReadResult(None, ReadFailure.NOT_A_FILE, "not a regular file")
        if probe.identity is not None and (st.st_dev, st.st_ino) != probe.identity:
            return ReadResult(None, ReadFailure.CHANGED, "replaced after it was checked")
        if probe.target is None and allowed is None:
            return None
        real = self.opened_path(fd)
        if probe.target is not None:
            if real is not None and real != probe.target:
                return ReadResult(
                    None, ReadFailure.CHANGED, f"its path led to {real} after it was checked"
                )
            real = probe.target
        elif real is None:
            # The OS cannot name the open file: resolve the path and require that it still
            # leads to the very file that is open.
            real = self.resolve(probe.path)
            there = os.stat(real, follow_symlinks=False)
            if (there.st_dev, there.st_ino) != (st.st_dev, st.st_ino):
                return ReadResult(None, ReadFailure.CHANGED, "changed while it was opened")
        if allowed is not None and not allowed(real):
            return ReadResult(None, ReadFailure.NOT_ALLOWED, real)
        return None

    def _read_fd(self, fd: int, max_source_bytes: int) -> ReadResult:
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        parts: list[str] = []
        decoded_bytes = 0
        scanned = 0
        first = True
        while True:
            chunk = self.read_chunk(fd, READ_CHUNK)
            if scanned < NUL_SCAN_BYTES and b"\0" in chunk[: NUL_SCAN_BYTES - scanned]:
                return ReadResult(None, ReadFailure.BINARY, "NUL byte in the first 8 KiB")
            scanned += len(chunk)
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                return ReadResult(None, ReadFailure.INVALID_UTF8, str(exc))
            if first and text:
                if text.startswith(BOM):
                    text = text[1:]
                first = False
            # Upstream counts decoded text, so a stripped BOM does not count against the cap.
            decoded_bytes += len(text.encode("utf-8"))
            if decoded_bytes > max_source_bytes:
                return ReadResult(
                    None, ReadFailure.OVERSIZED, f"more than {max_source_bytes} bytes"
                )
            parts.append(text)
            if not chunk:
                return ReadResult("".join(parts))


def read_flags(follow_final_link: bool) -> int:
    """The flags of every open for a read (by path or from a directory handle)."""
    # O_NONBLOCK: if the file was swapped for a FIFO after the probe, open must not wait
    # for a writer; the fstat check of the read then refuses it.
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    if not follow_final_link:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return flags


_O_PATH = getattr(os, "O_PATH", 0)
_PROC_FD = "/proc/self/fd/"
_DELETED = " (deleted)"


# A path may also be too long for one call (a hostile tree's missing deep touch): the bisection
# below then finds its longest prefix that exists and can be named, instead of realpath's walk.
_NOT_THERE_ERRNOS = _ABSENT_ERRNOS | {errno.ENAMETOOLONG}


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, asking the kernel where it can.

    ``realpath`` examines every component with an ``lstat`` of its own, and each of those walks
    the path from the root again: a file a thousand directories down costs a million component
    lookups. Where the OS names an open file (Linux: ``/proc/self/fd``), the path is opened once
    without opening the file itself (``O_PATH``: a FIFO or a device is never opened) and the
    kernel says where it really is. A missing tail is kept as ``realpath`` keeps it: the longest
    existing prefix is found by bisection and resolved, and the rest appended. Anything
    unusual (a relative or unnormalized path, a dangling link, a loop, no ``/proc``) takes
    ``realpath`` itself, so the answer is always the same as its.
    """
    if not _O_PATH or not is_plain_absolute(path):
        return os.path.realpath(path)
    found, code = kernel_path(path)
    if found is not None:
        return found
    if code not in _NOT_THERE_ERRNOS:
        return os.path.realpath(path)
    parts = path.split(os.sep)[1:]
    # parts[:low] exists and can be named (the root always does); parts[:high] does not exist or
    # is too long to name in one call. Both hold for every longer prefix once they hold for one,
    # so bisection finds where they start; the check below tells which of the two it was.
    low, high, low_real = 0, len(parts), os.sep
    while high - low > 1:
        middle = (low + high) // 2
        found, code = kernel_path(os.sep + os.sep.join(parts[:middle]))
        if found is not None:
            low, low_real = middle, found
        elif code in _NOT_THERE_ERRNOS:
            high = middle
        else:
            return os.path.realpath(path)
    try:
        os.lstat(os.sep + os.sep.join(parts[: low + 1]))
    except OSError as exc:
        if exc.errno not in _ABSENT_ERRNOS:
            return os.path.realpath(path)
    else:  # there but not openable: a dangling link, which realpath follows textually
        return os.path.realpath(path)
    # One join of the tail: os.path.join appends part after part, quadratic in a deep tail.
    tail = os.sep.join(parts[low:])
    return low_real + tail if low_real.endswith(os.sep) else low_real + os.sep + tail


def is_plain_absolute(path: str) -> bool:
    """Whether ``path`` is absolute and already normalized (no ``.``, ``..``, doubled or trailing
    separator), tested with string searches: ``os.path.normpath(path) == path`` costs Python
    work per component."""
    if path == os.sep:
        return True
    return (
        path.startswith(os.sep)
        and "//" not in path
        and "/./" not in path
        and "/../" not in path
        and not path.endswith(("/", "/.", "/.."))
    )


def kernel_path(path: str, dir_fd: int | None = None) -> tuple[str | None, int | None]:
    """The kernel's name for the file at ``path`` (from the open directory ``dir_fd`` when
    given, links followed), or None and why not (an errno, or None)."""
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        return None, exc.errno
    except ValueError:
        return None, None
    try:
        name = os.readlink(_PROC_FD + str(fd))
    except OSError:
        return None, None
    finally:
        os.close(fd)
    if not name.startswith(os.sep) or name.endswith(_DELETED):
        return None, None
    return name, None


def _failed_probe(path: str, exc: OSError | ValueError) -> Probe:
    if isinstance(exc, OSError) and exc.errno in _ABSENT_ERRNOS:
        return Probe(ProbeState.ABSENT, path)
    # ValueError: a configured name with NUL or an unencodable surrogate. Node's fs throws for
    # those, which upstream's provider turns into "unavailable", never a crash.
    return Probe(ProbeState.UNAVAILABLE, path, error=_describe_any(exc))


def _describe(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{name}: {exc.strerror or exc}"


def _describe_any(exc: OSError | ValueError) -> str:
    return _describe(exc) if isinstance(exc, OSError) else f"invalid path: {exc}"


LOCAL_FS = LocalFileSystem()

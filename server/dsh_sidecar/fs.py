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


def version_of(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


_ABSENT_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR})


class LocalFileSystem:
    """The real local filesystem."""

    def resolve(self, path: str) -> str:
        """Absolute real path; a final-component symlink is followed, a missing tail kept."""
        return os.path.realpath(path)

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
            ProbeState.PRESENT, path, target, version_of(st), st.st_size,
            identity=(st.st_dev, st.st_ino),
        )  # fmt: skip

    def exists(self, path: str) -> bool:
        """Whether anything (of any type) is at ``path``; errors count as no (root-marker test)."""
        try:
            self.stat(path)
        except (OSError, ValueError):  # ValueError: a marker name with NUL, as in probe()
            return False
        return True

    def list_directory(self, path: str) -> list[tuple[str, bool, bool]]:
        """``(name, is_dir, is_file)`` of each entry of the directory ``path``. A symlinked
        directory is not a directory here (a listing must not follow a repository's link into a
        loop); a symlink to a regular file is a file, whose read decides whether it may be read.
        Raises OSError."""
        out = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file(follow_symlinks=False) or (
                        entry.is_symlink() and entry.is_file()
                    )
                except OSError:
                    continue
                out.append((entry.name, is_dir, is_file))
        return out

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        # O_NONBLOCK: if the file was swapped for a FIFO after the probe, open must not wait
        # for a writer; the fstat check of the read then refuses it.
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
        if not follow_final_link:
            flags |= getattr(os, "O_NOFOLLOW", 0)
        return os.open(path, flags)

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
            refused = self._check_opened(fd, st, probe, allowed)
            if refused is not None:
                return refused
            read = self._read_fd(fd, max_source_bytes)
            return attrs.evolve(read, version=version_of(st)) if read.ok else read
        except OSError as exc:
            return ReadResult(None, ReadFailure.IO_ERROR, _describe(exc))
        finally:
            os.close(fd)

    def _check_opened(
        self,
        fd: int,
        st: os.stat_result,
        probe: Probe,
        allowed: Callable[[str], bool] | None,
    ) -> ReadResult | None:
        """Refuse an open file that is not a regular file, not the one ``probe`` checked, or
        (with ``allowed``) not in an allowed place."""
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

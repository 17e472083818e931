"""The filesystem seam: resolve, probe and bounded reads of instruction files.

Upstream's provider contract (reference §1.5, §2.4, §2.5): a probe is *present* (a regular file,
with an opaque version), *absent* (confirmed: missing, not a regular file, a link to a directory,
ENOENT/ENOTDIR) or *unavailable* (any other error, which is never treated as a deletion). Reads are
bounded and strict, and never block on a FIFO, socket or device. Tests subclass ``LocalFileSystem``
to inject failures that root cannot provoke with permissions.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from enum import Enum

import attrs

NUL_SCAN_BYTES = 8192
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

    @property
    def present(self) -> bool:
        return self.state is ProbeState.PRESENT


class ReadFailure(Enum):
    OVERSIZED = "oversized"
    BINARY = "binary"
    INVALID_UTF8 = "invalid-utf8"
    NOT_A_FILE = "not-a-file"
    IO_ERROR = "io-error"


@attrs.frozen
class ReadResult:
    text: str | None
    failure: ReadFailure | None = None
    detail: str | None = None

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
        return os.stat(path)

    def probe(self, path: str) -> Probe:
        try:
            st = self.stat(path)
        except OSError as exc:
            if exc.errno in _ABSENT_ERRNOS:
                return Probe(ProbeState.ABSENT, path)
            return Probe(ProbeState.UNAVAILABLE, path, error=_describe(exc))
        except ValueError as exc:
            # A configured name with NUL or an unencodable surrogate: Node's fs throws for those,
            # which upstream's provider turns into "unavailable", never a crash.
            return Probe(ProbeState.UNAVAILABLE, path, error=_describe_any(exc))
        if not stat.S_ISREG(st.st_mode):
            return Probe(ProbeState.ABSENT, path)
        try:
            target = self.resolve(path)
        except (OSError, ValueError) as exc:
            return Probe(ProbeState.UNAVAILABLE, path, error=_describe_any(exc))
        return Probe(ProbeState.PRESENT, path, target, version_of(st), st.st_size)

    def exists(self, path: str) -> bool:
        """Whether anything (of any type) is at ``path``; errors count as no (root-marker test)."""
        try:
            self.stat(path)
        except (OSError, ValueError):  # ValueError: a marker name with NUL, as in probe()
            return False
        return True

    def open_for_read(self, path: str) -> int:
        # O_NONBLOCK: if the file was swapped for a FIFO after the probe, open must not wait
        # for a writer; the fstat check below then refuses it.
        return os.open(
            path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
        )

    def read_chunk(self, fd: int, size: int) -> bytes:
        return os.read(fd, size)

    def read_text(self, probe: Probe, max_source_bytes: int) -> ReadResult:
        """Bounded strict UTF-8 read (reference §2.5); never raises for file problems."""
        if probe.size is not None and probe.size > max_source_bytes:
            return ReadResult(None, ReadFailure.OVERSIZED, f"{probe.size} bytes")
        try:
            fd = self.open_for_read(probe.path)
        except (OSError, ValueError) as exc:
            return ReadResult(None, ReadFailure.IO_ERROR, _describe_any(exc))
        try:
            return self._read_fd(fd, max_source_bytes)
        except OSError as exc:
            return ReadResult(None, ReadFailure.IO_ERROR, _describe(exc))
        finally:
            os.close(fd)

    def _read_fd(self, fd: int, max_source_bytes: int) -> ReadResult:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ReadResult(None, ReadFailure.NOT_A_FILE, "not a regular file")
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


def _describe(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{name}: {exc.strerror or exc}"


def _describe_any(exc: OSError | ValueError) -> str:
    return _describe(exc) if isinstance(exc, OSError) else f"invalid path: {exc}"


LOCAL_FS = LocalFileSystem()

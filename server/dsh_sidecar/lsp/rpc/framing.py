"""LSP base-protocol framing: header blocks and bodies, parsed without doing any I/O.

A message is a block of ``Name: value`` header lines ended by an empty line, then exactly
``Content-Length`` bytes of body (docs/protocol.md, "Limits on messages"). The parser is fed the
bytes a transport reads and hands back, one at a time, either a complete body or a framing
error. Everything it keeps is bounded: a header line, the number of header lines and the body
size all have limits, and a body over the limit is skipped as it streams past instead of being
buffered, so no header can make the server allocate what it announces.

After an error the parser gets back in step by itself:

- a header block that names a usable ``Content-Length`` (an over-limit size, an unsupported
  charset, a malformed line beside a good length) has its body skipped, so the next message is
  read exactly where the client put it;
- a header block without one (missing, not a number, conflicting, a line too long, too many
  lines) leaves no way to know where its body ends: the parser drops bytes until the next
  ``Content-Length:`` it sees, searching from just after where the bad block began.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dsh_sidecar import errors

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_HEADER_LINE_BYTES = 1024  # including the line end
MAX_HEADER_LINES = 32
# Digits beyond this are over any limit anyway; not converting them keeps int() cheap.
_MAX_LENGTH_DIGITS = 18

INVALID_HEADER = errors.INVALID_HEADER
MESSAGE_TOO_LARGE = errors.MESSAGE_TOO_LARGE

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(rb"[\t\x20-\x7e]*")
_DIGITS = re.compile(rb"[0-9]+")
_RESYNC = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_RESYNC_TAIL = 32  # longer than any spelling of "Content-Length:" worth waiting for
_UTF8_CHARSETS = frozenset({"utf-8", "utf8"})  # LSP accepts "utf8" for backwards compatibility


@dataclass(frozen=True)
class Body:
    data: bytes


@dataclass(frozen=True)
class FramingError:
    """A header block that cannot be used; ``code`` is the ``data.code`` the client gets."""

    code: str
    message: str


Event = Body | FramingError
# A failed header block: the offsets where its lines began, and how far it was read.
_Seen = tuple[frozenset[int], int]


def encode_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameParser:
    """Incremental parser: ``feed`` bytes, then take events with ``next_event`` until None.

    ``max_body_bytes`` may be changed between events (the TCP transport lowers it until the
    client has authenticated); it applies to the next header block parsed.
    """

    def __init__(self, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.max_body_bytes = max_body_bytes
        self._buf = bytearray()
        self._body_length: int | None = None  # reading a body of this size
        self._skip = 0  # bytes of a refused body still to drop
        self._resync = False  # dropping bytes until the next "Content-Length:"

    @property
    def mid_message(self) -> bool:
        """Whether bytes of an unfinished message are pending (for logging a cut connection)."""
        return bool(self._buf) or self._body_length is not None or self._skip > 0

    def feed(self, data: bytes) -> None:
        if self._skip and not self._buf:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        self._buf += data

    def next_event(self) -> Event | None:
        while True:
            if self._skip:
                dropped = min(self._skip, len(self._buf))
                del self._buf[:dropped]
                self._skip -= dropped
                if self._skip:
                    return None
            if self._resync and not self._find_header_start():
                return None
            if self._body_length is not None:
                if len(self._buf) < self._body_length:
                    return None
                with memoryview(self._buf) as view:
                    body = bytes(view[: self._body_length])
                del self._buf[: self._body_length]
                self._body_length = None
                return Body(body)
            event = self._read_header_block()
            if event is not None or self._body_length is None:
                return event

    # --- header blocks ----------------------------------------------------------------------

    def _find_header_start(self, start: int = 0, seen: _Seen | None = None) -> bool:
        """Drop bytes up to the next ``Content-Length:``; False (and resync mode) if none yet.

        ``seen`` is the failed block's line starts and how far it was read: a header that began
        one of its lines was part of the failure and is not a new start, and nothing of the
        block is kept for a later search.
        """
        lines, read_up_to = seen or (frozenset(), 0)
        found = _RESYNC.search(self._buf, start)
        while found is not None and found.start() in lines:
            found = _RESYNC.search(self._buf, found.start() + 1)
        if found is not None:
            del self._buf[: found.start()]
            self._resync = False
            return True
        # Keep a tail that could be the beginning of a split "Content-Length:".
        del self._buf[: max(read_up_to, len(self._buf) - _RESYNC_TAIL)]
        self._resync = True
        return False

    def _read_header_block(self) -> FramingError | None:
        """Parse one complete header block at the start of the buffer.

        Returns None when more bytes are needed or when the block was good (then
        ``_body_length`` is set); returns an error otherwise, having already arranged how to get
        back in step.
        """
        lines: list[bytes] = []
        starts: list[int] = []
        pos = 0
        while True:
            end = self._buf.find(b"\n", pos, pos + MAX_HEADER_LINE_BYTES)
            if end < 0:
                if len(self._buf) - pos >= MAX_HEADER_LINE_BYTES:
                    return self._lost(
                        f"a header line is longer than {MAX_HEADER_LINE_BYTES} bytes",
                        (frozenset(starts), pos),
                    )
                return None
            line = bytes(self._buf[pos:end])
            starts.append(pos)
            pos = end + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if not lines:
                    # A stray empty line between messages carries nothing: skip it.
                    del self._buf[:pos]
                    pos = 0
                    starts.clear()
                    continue
                break
            lines.append(line)
            if len(lines) > MAX_HEADER_LINES:
                return self._lost(
                    f"more than {MAX_HEADER_LINES} header lines", (frozenset(starts), pos)
                )
        return self._interpret(lines, (frozenset(starts), pos))

    def _interpret(self, lines: list[bytes], seen: _Seen) -> FramingError | None:
        lengths: set[bytes] = set()
        charset: str | None = None
        malformed: str | None = None
        for line in lines:
            name, colon, raw_value = line.partition(b":")
            value = raw_value.strip(b" \t")
            if not colon or not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
                malformed = malformed or f"malformed header line {_show(line)}"
                continue
            lowered = name.lower()
            if lowered == b"content-length":
                lengths.add(value)
            elif lowered == b"content-type":
                charset = _charset(value) or charset
        if not lengths:
            return self._lost("a header block without Content-Length", seen)
        if len(lengths) > 1:
            return self._lost("conflicting Content-Length headers", seen)
        (text,) = lengths
        if not _DIGITS.fullmatch(text):
            return self._lost(f"Content-Length is not a number: {_show(text)}", seen)
        del self._buf[: seen[1]]
        if len(text) > _MAX_LENGTH_DIGITS:
            # No one will send that many bytes; skipping "forever" is the honest reading.
            self._skip = 10**_MAX_LENGTH_DIGITS
            return FramingError(
                MESSAGE_TOO_LARGE,
                f"Content-Length {_show(text)} is over the limit of {self.max_body_bytes} bytes",
            )
        length = int(text)
        if length > self.max_body_bytes:
            self._skip = length
            return FramingError(
                MESSAGE_TOO_LARGE,
                f"Content-Length {length} is over the limit of {self.max_body_bytes} bytes",
            )
        if malformed is not None:
            self._skip = length
            return FramingError(INVALID_HEADER, malformed)
        if charset is not None and charset.lower() not in _UTF8_CHARSETS:
            self._skip = length
            return FramingError(INVALID_HEADER, f"unsupported charset {charset!r} (utf-8 only)")
        self._body_length = length
        return None

    def _lost(self, reason: str, seen: _Seen) -> FramingError:
        """A block whose body cannot be located: drop up to the next ``Content-Length:`` that
        is not one of the block's own lines (one glued after junk on a line is a new start)."""
        self._find_header_start(0, seen)
        return FramingError(INVALID_HEADER, reason)


def _charset(content_type: bytes) -> str | None:
    for param in content_type.split(b";")[1:]:
        key, _, value = param.partition(b"=")
        if key.strip().lower() == b"charset":
            return value.strip().strip(b'"').decode("ascii", "replace")
    return None


def _show(raw: bytes, limit: int = 60) -> str:
    text = raw[:limit].decode("ascii", "backslashreplace")
    return repr(text + ("..." if len(raw) > limit else ""))

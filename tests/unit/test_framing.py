"""The framing parser alone: every way a header block can be wrong, and getting back in step.

The same cases run against a live server over stdio in tests/reliability/test_wire.py; here they
are checked event by event, including input split at every byte.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dsh_sidecar.lsp.rpc.framing import (
    INVALID_HEADER,
    MAX_HEADER_LINE_BYTES,
    MAX_HEADER_LINES,
    MESSAGE_TOO_LARGE,
    Body,
    FrameParser,
    FramingError,
    encode_frame,
)

LONG = os.environ.get("DSH_LONG_TESTS") == "1"
GOOD = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "dsh/session/list"}).encode()


def events(data: bytes, max_body: int = 1024, chunk: int | None = None) -> list[Body | FramingError]:  # fmt: skip
    parser = FrameParser(max_body)
    out: list[Body | FramingError] = []
    step = chunk or max(1, len(data))
    for start in range(0, len(data), step):
        parser.feed(data[start : start + step])
        while (event := parser.next_event()) is not None:
            out.append(event)
    return out


def kinds(found: list[Body | FramingError]) -> list[str]:
    return [e.code if isinstance(e, FramingError) else "body" for e in found]


@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_messages_in_any_chunking(chunk: int | None) -> None:
    data = encode_frame(GOOD) + encode_frame(b"{}") + encode_frame(b"")
    assert events(data, chunk=chunk) == [Body(GOOD), Body(b"{}"), Body(b"")]


def test_header_names_are_case_insensitive_and_lf_is_tolerated() -> None:
    data = b"content-length: %d\n\n" % len(GOOD) + GOOD
    data += b"CONTENT-LENGTH:%d\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n" % len(GOOD) + GOOD  # fmt: skip
    assert events(data) == [Body(GOOD), Body(GOOD)]


def test_stray_empty_lines_between_messages_are_skipped() -> None:
    assert events(b"\r\n\r\n" + encode_frame(GOOD)) == [Body(GOOD)]


@pytest.mark.parametrize("chunk", [None, 1, 5])
def test_over_the_limit_is_refused_and_skipped_without_buffering(chunk: int | None) -> None:
    parser = FrameParser(1024)
    parser.feed(b"Content-Length: 5000\r\n\r\n")
    error = parser.next_event()
    assert isinstance(error, FramingError) and error.code == MESSAGE_TOO_LARGE
    assert error.message == "Content-Length 5000 is over the limit of 1024 bytes"
    # The refusal comes before a single byte of the body has arrived; the body then streams
    # past without being kept.
    junk = b"x" * 5000
    step = chunk or len(junk)
    for start in range(0, len(junk), step):
        parser.feed(junk[start : start + step])
        assert parser.next_event() is None
        assert len(parser._buf) == 0
    parser.feed(encode_frame(GOOD))
    assert parser.next_event() == Body(GOOD)


def test_an_absurd_length_is_refused_and_never_converted() -> None:
    found = events(b"Content-Length: " + b"9" * 500 + b"\r\n\r\n", max_body=1024)
    assert kinds(found) == [MESSAGE_TOO_LARGE]
    assert isinstance(found[0], FramingError) and found[0].message.endswith("bytes")
    assert len(found[0].message) < 200


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (b"Content-Type: application/vscode-jsonrpc\r\n\r\n", "a header block without Content-Length"),
        (b"Content-Length: abc\r\n\r\n", "Content-Length is not a number: 'abc'"),
        (b"Content-Length: -5\r\n\r\n", "Content-Length is not a number: '-5'"),
        (b"Content-Length: 5.0\r\n\r\n", "Content-Length is not a number: '5.0'"),
        (b"Content-Length: \r\n\r\n", "Content-Length is not a number: ''"),
        (b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", "conflicting Content-Length headers"),
        (b"X: " + b"y" * MAX_HEADER_LINE_BYTES + b"\r\n\r\n", f"a header line is longer than {MAX_HEADER_LINE_BYTES} bytes"),
        (b"X: y\r\n" * (MAX_HEADER_LINES + 1) + b"\r\n", f"more than {MAX_HEADER_LINES} header lines"),
    ],
)  # fmt: skip
def test_a_block_without_a_usable_length_resyncs_on_the_next_header(
    header: bytes, reason: str
) -> None:
    # Whatever body followed is unreadable; the next "Content-Length:" starts the next message.
    data = header + b'{"half": "a body"}' + encode_frame(GOOD)
    found = events(data)
    assert found == [FramingError(INVALID_HEADER, reason), Body(GOOD)]
    assert events(data, chunk=1) == found


def test_junk_glued_before_a_header_is_dropped() -> None:
    # A client that sent more bytes than it announced leaves the rest of its body in front of
    # the next header, on the same line.
    data = b'Content-Length: 8\r\n\r\n{"a": 1}, "b": 2}' + encode_frame(GOOD)
    found = events(data)
    assert kinds(found) == ["body", INVALID_HEADER, "body"]
    assert found[-1] == Body(GOOD)


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (b"Content-Length: %d\r\nno colon here\r\n\r\n", "malformed header line 'no colon here'"),
        (b"Content-Length: %d\r\nBad Name: x\r\n\r\n", "malformed header line 'Bad Name: x'"),
        (b"Content-Length: %d\r\nX: caf\xc3\xa9\r\n\r\n", "malformed header line 'X: caf\\\\xc3\\\\xa9'"),
        (b"Content-Length: %d\r\nContent-Type: text/x; charset=latin-1\r\n\r\n", "unsupported charset 'latin-1' (utf-8 only)"),
    ],
)  # fmt: skip
def test_a_bad_block_with_a_good_length_skips_exactly_its_body(header: bytes, reason: str) -> None:
    body = b'{"jsonrpc": "2.0", "id": 9, "method": "dsh/session/list"}'
    data = header % len(body) + body + encode_frame(GOOD)
    assert events(data) == [FramingError(INVALID_HEADER, reason), Body(GOOD)]


def test_the_limit_can_change_between_messages() -> None:
    parser = FrameParser(10)
    parser.feed(encode_frame(b"x" * 20))
    first = parser.next_event()
    assert isinstance(first, FramingError) and first.code == MESSAGE_TOO_LARGE
    parser.max_body_bytes = 100
    parser.feed(encode_frame(b"y" * 20))
    assert parser.next_event() == Body(b"y" * 20)


def test_garbage_without_any_header_is_bounded() -> None:
    parser = FrameParser(1024)
    parser.feed(b"z" * (MAX_HEADER_LINE_BYTES * 4))
    error = parser.next_event()
    assert isinstance(error, FramingError) and error.code == INVALID_HEADER
    for _ in range(50):
        parser.feed(b"q" * 100_000)
        assert parser.next_event() is None
        assert len(parser._buf) <= 64  # only a tail that could start a split header
    parser.feed(b"Content-Le")
    parser.feed(b"ngth: %d\r\n\r\n" % len(GOOD) + GOOD)
    assert parser.next_event() == Body(GOOD)


def test_mid_message_tells_whether_a_cut_would_lose_bytes() -> None:
    parser = FrameParser(1024)
    assert not parser.mid_message
    parser.feed(encode_frame(GOOD)[:10])
    assert parser.next_event() is None and parser.mid_message
    parser.feed(encode_frame(GOOD)[10:])
    assert parser.next_event() == Body(GOOD)
    assert not parser.mid_message


# --- any bytes at all -------------------------------------------------------------------------

CAP = 4096
_line = st.tuples(
    st.sampled_from([b"Content-Length", b"content-length", b"Content-Type", b"X", b""]),
    st.sampled_from([b": ", b":", b""]),
    st.one_of(st.integers(-3, 2 * CAP).map(lambda n: str(n).encode()), st.binary(max_size=8)),
    st.sampled_from([b"\r\n", b"\n", b"\r", b""]),
).map(b"".join)
_piece = st.one_of(
    st.binary(max_size=300),
    st.lists(_line, max_size=5).map(lambda lines: b"".join(lines) + b"\r\n"),
    st.binary(max_size=100).map(encode_frame),
)


def _filler(garbage: bytes) -> bytes | None:
    """Enough bytes to end any header block, body or refused body the garbage can have begun,
    then a line too long to be a header (see tests/reliability/test_fuzz_server.py)."""
    runs = re.findall(rb"[0-9]+", garbage)
    if any(len(run) > 6 for run in runs):
        return None
    largest = max([CAP, *(int(run) for run in runs)])
    return b"\n" + b"x" * (largest + 2 * MAX_HEADER_LINE_BYTES + 1)


@settings(max_examples=3000 if LONG else 300, deadline=None)
@given(pieces=st.lists(_piece, max_size=6), chunk=st.integers(1, 70_000))
def test_any_bytes_leave_the_parser_able_to_read_the_next_message(
    pieces: list[bytes], chunk: int
) -> None:
    garbage = b"".join(pieces)
    filler = _filler(garbage)
    assume(filler is not None)
    assert filler is not None
    found = events(garbage + filler + encode_frame(GOOD), max_body=CAP, chunk=chunk)
    assert found[-1] == Body(GOOD)
    # Nothing is ever buffered beyond the limits: every body is at most CAP.
    assert all(len(e.data) <= CAP for e in found if isinstance(e, Body))

"""stdin as the stdio transport reads it (``lsp/rpc/transport.py``, ``StdioStream``): a pipe or
a socket is watched by the loop, anything else is read by a thread; either way every byte
arrives in order, at most a few chunks ahead of the connection, and the end of input reads as
``b""``. The descriptor's flags are never changed."""

from __future__ import annotations

import asyncio
import fcntl
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_sidecar.lsp.rpc import transport
from dsh_sidecar.lsp.rpc.transport import StdioStream

HANG_GUARD = 60.0  # seconds; only against a hang


@pytest.fixture
def out_fd() -> Iterator[int]:
    fd = os.open(os.devnull, os.O_WRONLY)
    yield fd
    os.close(fd)


async def read_all(stream: StdioStream) -> bytes:
    data = b""
    while chunk := await asyncio.wait_for(stream.read(), HANG_GUARD):
        data += chunk
    return data


async def test_a_pipe_is_watched_by_the_loop_and_read_in_order(out_fd: int) -> None:
    read_fd, write_fd = os.pipe()
    flags = fcntl.fcntl(read_fd, fcntl.F_GETFL)
    try:
        stream = StdioStream(read_fd, out_fd)
        assert stream._watched and stream._room is None
        payload = bytes(range(256)) * 4096  # 1 MiB: many chunks, more than the pipe holds
        writer = asyncio.get_running_loop().run_in_executor(
            None, _write_and_close, write_fd, payload
        )
        assert await read_all(stream) == payload
        await writer
        assert fcntl.fcntl(read_fd, fcntl.F_GETFL) == flags
        await stream.close()
    finally:
        os.close(read_fd)


async def test_a_socket_is_watched_too(out_fd: int) -> None:
    ours, theirs = socket.socketpair()
    try:
        stream = StdioStream(ours.fileno(), out_fd)
        assert stream._watched
        theirs.sendall(b"Content-Length: 2\r\n\r\n{}")
        theirs.close()
        assert await read_all(stream) == b"Content-Length: 2\r\n\r\n{}"
    finally:
        ours.close()


async def test_a_regular_file_is_read_by_a_thread(tmp_path: Path, out_fd: int) -> None:
    payload = os.urandom(300_000)
    (tmp_path / "in").write_bytes(payload)
    fd = os.open(tmp_path / "in", os.O_RDONLY)
    try:
        stream = StdioStream(fd, out_fd)
        assert not stream._watched and stream._room is not None
        assert await read_all(stream) == payload
    finally:
        os.close(fd)


async def test_no_more_than_a_few_chunks_wait_for_the_connection(out_fd: int) -> None:
    read_fd, write_fd = os.pipe()
    try:
        stream = StdioStream(read_fd, out_fd)
        os.set_blocking(write_fd, False)
        written = 0
        for _ in range(transport.QUEUED_CHUNKS * 4):
            try:
                written += os.write(write_fd, b"x" * 1024)
            except BlockingIOError:
                break
            await asyncio.sleep(0.01)  # the loop reads what is there
        assert len(stream._chunks) <= transport.QUEUED_CHUNKS
        assert not stream._watched  # paused: the rest waits in the pipe
        os.close(write_fd)
        assert len(await read_all(stream)) == written
    finally:
        os.close(read_fd)


def _write_and_close(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)

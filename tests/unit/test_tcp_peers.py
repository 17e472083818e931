"""The peer uid of a loopback TCP connection, by both of the kernel's answers: ``sock_diag`` and
the ``/proc/net/tcp{,6}`` rows. Real sockets of this process (so the uid is ours); another uid's
refusal is in tests/reliability/test_transport.py and test_tcp_flood.py."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest

from dsh_sidecar.lsp.rpc.tcp_peers import Endpoint, PeerUids, SockDiag, TableSnapshot, endpoints


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock
    sock.close()


def _accepted(
    listener: socket.socket, family: int, host: str
) -> tuple[socket.socket, socket.socket]:
    client = socket.socket(family, socket.SOCK_STREAM)
    client.connect((host, listener.getsockname()[1]))
    server_side, _ = listener.accept()
    return client, server_side


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::ffff:127.0.0.1")],
    ids=["ipv4", "ipv4-mapped-ipv6-client"],
)  # fmt: skip
def test_both_sources_name_our_own_uid(listener: socket.socket, family: int, host: str) -> None:
    client, server_side = _accepted(listener, family, host)
    try:
        ends = endpoints(server_side)
        assert ends is not None
        assert TableSnapshot().peer_uid(*ends) == os.geteuid()
        diag = SockDiag()
        if diag.usable:  # netlink may be filtered in a container; the tables are the fallback
            assert diag.peer_uid(*ends) == os.geteuid()
        diag.close()
        peers = PeerUids()
        assert peers.available and peers.peer_uid(*ends) == os.geteuid()
        peers.close()
    finally:
        client.close()
        server_side.close()


def test_a_peer_that_is_not_there_has_no_uid(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    ours, nobody = Endpoint("127.0.0.1", port), Endpoint("127.0.0.1", 1)
    assert TableSnapshot().peer_uid(ours, nobody) is None
    diag = SockDiag()
    if diag.usable:
        assert diag.peer_uid(ours, nobody) is None
    diag.close()


def test_unreadable_tables_are_reported_as_such() -> None:
    snapshot = TableSnapshot(("/nonexistent/tcp", "/nonexistent/tcp6"))
    assert not snapshot.readable
    assert snapshot.peer_uid(Endpoint("127.0.0.1", 1), Endpoint("127.0.0.1", 2)) is None

"""Who is at the other end of a loopback TCP connection: the peer's uid, from the kernel's table.

TCP has no SO_PEERCRED. On Linux, though, both ends of a loopback connection are sockets of this
machine, and ``/proc/net/tcp`` (``/proc/net/tcp6`` for IPv6 sockets, where an IPv4 peer appears
as ``::ffff:a.b.c.d``) lists every socket of the network namespace with its owner's uid. The
peer's socket is the row whose local address is our connection's remote one and whose remote
address is our local one. Nothing is read from the connection to find it.

Where the tables cannot be read (another system, a ``/proc`` mounted without them), the uid is
unknown and the caller falls back to the token alone (docs/protocol.md, "Who may connect").
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from dataclasses import dataclass

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
# A socket in TIME_WAIT belongs to nobody any more (the kernel shows uid 0); never take it.
_TIME_WAIT = b"06"
_UID_FIELD = 7  # sl, local, remote, st, tx:rx, tr:when, retrnsmt, uid


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


class TableSnapshot:
    """The kernel's TCP tables read once, to look up any number of connections accepted
    together (a flood is answered with one read per batch, not one per connection)."""

    def __init__(self, tables: tuple[str, ...] = TABLES) -> None:
        self.readable = False
        self._texts: list[bytes] = []
        for table in tables:
            try:
                with open(table, "rb") as handle:
                    self._texts.append(handle.read())
            except OSError:
                continue
            self.readable = True

    def peer_uid(self, ours: Endpoint, theirs: Endpoint) -> int | None:
        """The uid owning the socket at ``theirs`` connected to ``ours``; None if not listed
        (the peer has already gone, or the tables were unreadable)."""
        for needle in _needles(theirs, ours):
            for text in self._texts:
                uid = _find_uid(text, needle)
                if uid is not None:
                    return uid
        return None


def _find_uid(text: bytes, needle: bytes) -> int | None:
    start = text.find(needle)
    while start >= 0:
        line_end = text.find(b"\n", start)
        line_start = text.rfind(b"\n", 0, start) + 1
        fields = text[line_start : line_end if line_end >= 0 else len(text)].split()
        if len(fields) > _UID_FIELD and fields[3] != _TIME_WAIT:
            try:
                return int(fields[_UID_FIELD])
            except ValueError:
                return None
        start = text.find(needle, start + 1)
    return None


def _needles(local: Endpoint, remote: Endpoint) -> list[bytes]:
    """How a row with this local and remote address starts, in each table's spelling."""
    out = []
    for local_hex, remote_hex in zip(_spellings(local.host), _spellings(remote.host), strict=True):
        out.append(b" %s:%04X %s:%04X " % (local_hex, local.port, remote_hex, remote.port))
    return out


def _spellings(host: str) -> tuple[bytes, bytes]:
    """``host`` as /proc/net/tcp writes an IPv4 address, and as /proc/net/tcp6 writes the same
    address mapped into IPv6: each 32-bit word in the machine's byte order, in hex."""
    address = ipaddress.ip_address(host)
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped
        if mapped is None:
            six = _words(address.packed)
            return six, six
        address = mapped
    four = _words(address.packed)
    return four, _words(ipaddress.IPv6Address(f"::ffff:{address}").packed)


def _words(packed: bytes) -> bytes:
    return b"".join(
        b"%08X" % int.from_bytes(packed[i : i + 4], sys.byteorder) for i in range(0, len(packed), 4)
    )


def endpoints(sock: socket.socket) -> tuple[Endpoint, Endpoint] | None:
    """(our end, their end) of a connected socket; None if it is no longer connected."""
    try:
        local = sock.getsockname()
        remote = sock.getpeername()
    except OSError:
        return None
    return Endpoint(local[0], int(local[1])), Endpoint(remote[0], int(remote[1]))

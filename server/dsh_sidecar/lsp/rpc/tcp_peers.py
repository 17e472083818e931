"""Who is at the other end of a loopback TCP connection: the peer's uid, from the kernel.

TCP has no SO_PEERCRED. On Linux, though, both ends of a loopback connection are sockets of this
machine, and the kernel knows each socket's owner. The peer's socket is the one whose local
address is our connection's remote one and whose remote address is our local one. Nothing is
read from the connection to find it. Two ways to ask, the first preferred:

- ``sock_diag`` (netlink, what ``ss`` uses): one exact lookup of that address pair, so its cost
  does not grow with the number of sockets on the machine, which a flood of connections (and
  the TIME_WAIT entries it leaves) makes large;
- ``/proc/net/tcp`` (``/proc/net/tcp6`` for IPv6 sockets, where an IPv4 peer appears as
  ``::ffff:a.b.c.d``), which lists every socket of the network namespace with its owner's uid;
  read once per batch of accepted connections.

Where neither can be read (another system, a ``/proc`` mounted without them), the uid is
unknown and the caller falls back to the token alone (docs/protocol.md, "Who may connect").
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import socket
import struct
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


# --- sock_diag ------------------------------------------------------------------------------------

_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NLMSG = struct.Struct("=IHHII")  # len, type, flags, seq, pid
# inet_diag_req_v2: family, protocol, ext, pad, states; then inet_diag_sockid: ports (network
# order), addresses (four 32-bit words each, network order), interface, cookie (none: all ones).
_REQUEST = struct.Struct("=BBBBI")
_SOCKID = struct.Struct("!HH16s16s")
_SOCKID_TAIL = struct.Struct("=III")
_ALL_STATES = 0xFFFFFFFF
_NO_COOKIE = 0xFFFFFFFF
# inet_diag_msg: family, state, timer, retrans, the 48-byte sockid, expires, rqueue, wqueue, uid.
_UID_OFFSET = _NLMSG.size + 4 + 48 + 12


class SockDiag:
    """Exact lookups through a netlink ``sock_diag`` socket; ``usable`` is False where there is
    none (not Linux, or the kernel refuses it)."""

    def __init__(self) -> None:
        self._sock: socket.socket | None = None
        self._seq = 0
        family = getattr(socket, "AF_NETLINK", None)
        if family is None:
            return
        try:
            self._sock = socket.socket(family, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG)
            self._sock.settimeout(1.0)
        except OSError:
            self._sock = None

    @property
    def usable(self) -> bool:
        return self._sock is not None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def peer_uid(self, ours: Endpoint, theirs: Endpoint) -> int | None:
        """The uid of the socket at ``theirs`` connected to ``ours``: None if there is none
        (the peer has gone), raises OSError if the lookup itself failed."""
        for family, src, dst in _diag_addresses(theirs.host, ours.host):
            uid = self._lookup(family, src, theirs.port, dst, ours.port)
            if uid is not None:
                return uid
        return None

    def _lookup(self, family: int, src: bytes, sport: int, dst: bytes, dport: int) -> int | None:
        assert self._sock is not None
        self._seq += 1
        body = (
            _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, _ALL_STATES)
            + _SOCKID.pack(sport, dport, src, dst)
            + _SOCKID_TAIL.pack(0, _NO_COOKIE, _NO_COOKIE)
        )
        header = _NLMSG.pack(_NLMSG.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, self._seq, 0)  # fmt: skip
        self._sock.send(header + body)
        while True:
            reply = self._sock.recv(8192)
            if len(reply) < _NLMSG.size:
                raise OSError(errno.EPROTO, "short sock_diag reply")
            _, kind, _, seq, _ = _NLMSG.unpack_from(reply)
            if seq != self._seq:
                continue  # the answer to an earlier lookup that timed out
            if kind == _NLMSG_ERROR:
                (code,) = struct.unpack_from("=i", reply, _NLMSG.size)
                if code in (0, -errno.ENOENT):
                    return None
                raise OSError(-code, os.strerror(-code))
            if len(reply) < _UID_OFFSET + 4:
                raise OSError(errno.EPROTO, "short sock_diag reply")
            (uid,) = struct.unpack_from("=I", reply, _UID_OFFSET)
            return int(uid)


def _diag_addresses(src: str, dst: str) -> list[tuple[int, bytes, bytes]]:
    """(family, source, destination) to try: the IPv4 socket, then an IPv6 one holding the
    same addresses mapped (a dual-stack client), each padded to sock_diag's 16 bytes."""
    out: list[tuple[int, bytes, bytes]] = []
    a, b = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if isinstance(a, ipaddress.IPv4Address) and isinstance(b, ipaddress.IPv4Address):
        out.append((socket.AF_INET, a.packed.ljust(16, b"\0"), b.packed.ljust(16, b"\0")))
        a, b = ipaddress.IPv6Address(f"::ffff:{a}"), ipaddress.IPv6Address(f"::ffff:{b}")
    out.append((socket.AF_INET6, a.packed, b.packed))
    return out


class PeerUids:
    """The door's way to learn peer uids: ``sock_diag`` where it works, else the tables,
    read at most once per batch (``new_batch``)."""

    def __init__(self) -> None:
        self._diag = SockDiag()
        self._snapshot: TableSnapshot | None = None
        self.available = self._diag.usable or TableSnapshot().readable

    def new_batch(self) -> None:
        self._snapshot = None

    def peer_uid(self, ours: Endpoint, theirs: Endpoint) -> int | None:
        if self._diag.usable:
            with contextlib.suppress(OSError):
                return self._diag.peer_uid(ours, theirs)
        if self._snapshot is None:
            self._snapshot = TableSnapshot()
        return self._snapshot.peer_uid(ours, theirs)

    def close(self) -> None:
        self._diag.close()

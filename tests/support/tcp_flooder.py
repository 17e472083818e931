"""A hostile local client for the TCP flood tests: keeps COUNT connections to a port open.

Run as a script (by a second real uid, with the system Python, so it imports nothing of ours):
``tcp_flooder.py PORT COUNT BODY_BYTES``. Each connection, once connected, sends a header
announcing ``BODY_BYTES + 1`` bytes and then ``BODY_BYTES`` of them (a partial body the server
would have to hold), or nothing when BODY_BYTES is 0 (an idle connection). Whenever the server
closes one, it is opened again. After the first COUNT connections have been made (and their
bytes sent, as far as the server took them) it prints ``{"ready": ...}``; it stops when stdin
ends and prints its totals.
"""

from __future__ import annotations

import errno
import json
import os
import select
import socket
import sys
import time


def main() -> None:
    port, count, body = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    payload = (b"Content-Length: %d\r\n\r\n" % (body + 1) + b"x" * body) if body else b""
    poller = select.poll()
    poller.register(sys.stdin.fileno(), select.POLLIN | select.POLLHUP)
    socks: dict[int, tuple[socket.socket, memoryview]] = {}
    totals = {"connects": 0, "closed_by_server": 0, "refusals_read": 0, "connect_errors": 0}

    def open_one() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        code = sock.connect_ex(("127.0.0.1", port))
        if code not in (0, errno.EINPROGRESS):
            totals["connect_errors"] += 1
            sock.close()
            return
        totals["connects"] += 1
        socks[sock.fileno()] = (sock, memoryview(payload))
        poller.register(sock.fileno(), select.POLLIN | select.POLLOUT)

    def gone(fd: int) -> None:
        first.discard(fd)
        sock, _ = socks.pop(fd)
        poller.unregister(fd)
        sock.close()
        totals["closed_by_server"] += 1

    for _ in range(count):
        open_one()
    # The first COUNT connections not yet through (connected and their bytes sent, or closed).
    first = set(socks)
    announced = False
    started = time.monotonic()
    while True:
        for fd, events in poller.poll(200):
            if fd == sys.stdin.fileno():
                if not os.read(fd, 4096):
                    print(json.dumps({"done": totals, "open": len(socks)}), flush=True)
                    return
                continue
            sock, left = socks[fd]
            if events & (select.POLLIN | select.POLLHUP | select.POLLERR):
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if b"Unauthorized" in data:
                    totals["refusals_read"] += 1
                if not data:
                    gone(fd)
                    open_one()
                    continue
            if events & select.POLLOUT:
                if left:
                    try:
                        sent = sock.send(left)
                    except BlockingIOError:
                        sent = 0
                    except OSError:
                        gone(fd)
                        open_one()
                        continue
                    left = left[sent:]
                    socks[fd] = (sock, left)
                if not left:
                    first.discard(fd)
                    poller.modify(fd, select.POLLIN)
        if not announced and (not first or time.monotonic() - started > 30):
            announced = True
            print(
                json.dumps({"ready": totals, "open": len(socks), "pending": len(first)}), flush=True
            )


if __name__ == "__main__":
    main()

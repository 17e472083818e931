"""A server command for the fast dev loop (tests/forked_servers.py): hand this process's stdin,
stdout and stderr to the test zygote, which forks ``dsh-sidecar ARGS`` on them; forward SIGINT
and SIGTERM to it; exit with its status. Runs with ``python -I -S``: the standard library only.

    python -I -S forked_launcher.py ZYGOTE_SOCKET ARGS...
"""

import contextlib
import json
import os
import signal
import socket
import sys


def main() -> int:
    socket_path, args = sys.argv[1], sys.argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(socket_path)
    request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    # The server has them now: holding a copy of stdout would keep its reader from seeing EOF.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    reader = conn.makefile("rb")
    first = reader.readline().split()
    if len(first) != 2 or first[0] != b"pid":
        return 1
    child = int(first[1])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(child, signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    last = reader.readline().split()
    if len(last) == 2 and last[0] == b"exit":
        return int(last[1])
    return 1


if __name__ == "__main__":
    sys.exit(main())

"""Forked servers for the fast dev loop: ``DSH_TEST_FORKED_SERVERS=1``.

Most of the dev loop's time is spent starting real server subprocesses, and most of each start
is importing pygls and lsprotocol (about half a second of CPU). With the variable set, each test
process starts one *zygote* that imports the server once; a server command is then a tiny
launcher (``tests/forked_launcher.py``, a Python without site-packages) that hands its stdin,
stdout and stderr to the zygote, which forks a child that runs ``dsh-sidecar`` on them with the
launcher's arguments, environment and directory. The launcher forwards SIGINT and SIGTERM to the
child and exits with its status, so pytest-lsp sees a server process over real pipes as before.

A forked child is not an exec'd process in every respect (its ``/proc`` environment block and
parent are the zygote's), so CI and the README's test command never use this: without the
variable every server is the real command, ``python -m dsh_sidecar serve``.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ENABLE_ENV = "DSH_TEST_FORKED_SERVERS"
SOCKET_ENV = "DSH_TEST_ZYGOTE_SOCKET"
REAL_COMMAND = [sys.executable, "-m", "dsh_sidecar"]
LAUNCHER = str(Path(__file__).with_name("forked_launcher.py"))
MAX_REQUEST = 1 << 20


def enabled() -> bool:
    return os.environ.get(ENABLE_ENV) == "1"


def server_command(*args: str) -> list[str]:
    """``dsh-sidecar ARGS`` as a test starts it: forked from the zygote when enabled."""
    if enabled() and os.environ.get(SOCKET_ENV):
        return [sys.executable, "-I", "-S", LAUNCHER, os.environ[SOCKET_ENV], *args]
    return [*REAL_COMMAND, *args]


class Zygote:
    """The zygote process of this test process (one per xdist worker)."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="dsh-zygote-")
        self.socket_path = os.path.join(self.directory, "zygote.sock")
        self.log_path = os.path.join(self.directory, "zygote.log")
        self.ready_path = self.socket_path + ".ready"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, __file__, self.socket_path],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )  # fmt: skip

    def wait_ready(self, timeout: float = 30.0) -> None:
        import time

        deadline = time.monotonic() + timeout
        while not os.path.exists(self.ready_path):
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = Path(self.log_path).read_text(errors="replace")
                raise RuntimeError(f"the test server zygote did not start:\n{log}")
            time.sleep(0.01)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        subprocess.run(["rm", "-rf", self.directory], check=False)


# --- the zygote itself ------------------------------------------------------------------------


def _serve(socket_path: str) -> None:
    # Everything a server needs, imported once; nothing started (no thread, no event loop),
    # so that a fork is a clean copy.
    import dsh_sidecar.cli
    import dsh_sidecar.lsp.main

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    Path(socket_path + ".ready").touch()
    waiting: dict[int, socket.socket] = {}  # child pid -> its launcher's connection
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while True:
        for _key, _ in selector.select(timeout=0.05):
            conn, _ = listener.accept()
            pid = _start_child(conn, listener, waiting, dsh_sidecar.cli.main)
            if pid is not None:
                waiting[pid] = conn
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(b"exit %d\n" % os.waitstatus_to_exitcode(status))
                conn.close()


def _start_child(
    conn: socket.socket, listener: socket.socket, waiting: dict[int, socket.socket], main: object
) -> int | None:
    try:
        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
        request = json.loads(data)
    except (OSError, ValueError):
        conn.close()
        return None
    pid = os.fork()
    if pid == 0:  # the child: become the server the launcher asked for
        code = 1
        try:
            listener.close()
            for other in waiting.values():
                other.close()
            conn.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.argv = ["dsh-sidecar", *request["args"]]
            code = main(request["args"])  # type: ignore[operator]
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    for fd in fds:
        os.close(fd)
    conn.sendall(b"pid %d\n" % pid)
    return pid


if __name__ == "__main__":
    _serve(sys.argv[1])

"""A ``serve --tcp`` with a low descriptor limit and the ``tcp_flooder.py`` attacker against it.

Shared by tests/reliability/test_tcp_flood.py and bench/tcp_flood.py.
"""

from __future__ import annotations

import contextlib
import json
import resource
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.listening import NOBODY_PYTHON, Listening, options
from tests.support.reliability_rpc import HANG_GUARD, SERVE, SocketPeer, server_env

FLOODER = str(Path(__file__).with_name("tcp_flooder.py"))
SERVER_FILE_LIMIT = 1024


class Limited(Listening):
    """``serve --tcp`` with its descriptor limit set to ``SERVER_FILE_LIMIT``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.stderr_path = base / "stderr.log"

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_FILE_LIMIT, SERVER_FILE_LIMIT))

        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*SERVE, "--tcp", "--port", "0"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=server_env(str(self.home), fsync=False),
                preexec_fn=limit,
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], HANG_GUARD)
        line = self.proc.stdout.readline() if ready else b""
        assert line, f"nothing announced; stderr: {self.stderr()}"
        self.info: dict[str, Any] = json.loads(line)

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")


@contextlib.contextmanager
def limited_server(base: Path) -> Iterator[Limited]:
    server = Limited(base)
    try:
        yield server
    finally:
        server.kill()


class Flood:
    """``tcp_flooder.py`` running, as ``nobody`` or as this user; stopped by closing stdin."""

    def __init__(self, port: int, count: int, body: int, *, as_nobody: bool) -> None:
        # The source goes on the command line: nobody may not be able to read this checkout
        # (CI clones it under a 0700 directory).
        argv = ["-c", Path(FLOODER).read_text(), str(port), str(count), str(body)]
        if as_nobody:
            argv = [
                "setpriv",
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                NOBODY_PYTHON,
                *argv,
            ]
        else:
            argv = [sys.executable, *argv]
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = count + 64
        assert hard == resource.RLIM_INFINITY or hard >= wanted, f"ulimit -Hn {hard} < {wanted}"

        def enough_descriptors() -> None:
            # The flooder must be able to hold its connections, whatever this shell's soft limit.
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))

        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
            preexec_fn=enough_descriptors,
        )
        self.ready = self._line()
        assert "ready" in self.ready, self.ready

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], HANG_GUARD)
        line = self.proc.stdout.readline() if ready else b""
        assert self.proc.stderr is not None
        said = (
            self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""
        )
        assert line, f"the flooder said nothing: {said}"
        result: dict[str, Any] = json.loads(line)
        return result

    def stop(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        done = self._line()
        self.proc.wait(timeout=HANG_GUARD)
        return done


def owner_touch_is_delivered(server: Limited, tmp_path: Path, project: Path) -> None:
    """A new client of the owner connects, authenticates, opens a session, touches pkg/x.py and
    is given pkg/AGENTS.md at its next step."""
    owner: SocketPeer = server.client(options(tmp_path))
    try:
        sid = owner.request("dsh/session/open", {"cwd": str(project)})["session"]["id"]
        first = owner.request(
            "dsh/step/prepare", {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}}
        )
        assert "root rule" in json.dumps(first["messages"])
        owner.request("dsh/step/end", {"sessionId": sid, "turn": 1, "step": 1})
        owner.notify(
            "dsh/tool/result",
            {
                "sessionId": sid,
                "token": "t1",
                "name": "read",
                "isError": False,
                "arguments": {"file_path": str(project / "pkg" / "x.py")},
            },
        )
        second = owner.request("dsh/step/prepare", {"sessionId": sid, "turn": 1, "step": 2})
        assert "pkg rule: keep the flood out" in json.dumps(second["messages"])
    finally:
        owner.close()

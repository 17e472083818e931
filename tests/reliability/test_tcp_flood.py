"""The TCP port serves its owner while another local user floods it (docs/protocol.md, "Who may
connect", "Connections waiting at the door").

The attacker is the real uid ``nobody`` running ``tcp_flooder.py`` with the system Python; the
server runs with ``ulimit -n`` set to 1024, so that 2,000 held connections would run it out of
descriptors if it kept them. Memory is measured as the server's VmRSS, with a generous bound
(see each test): the point is the order of magnitude (before the door: 600 partial bodies of
1 MiB took it from 49 to 796 MiB, bench/tcp_flood.py), not a figure.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_rpc import HANG_GUARD, SERVE, ServerGone, SocketPeer, server_env
from test_transport import NOBODY_PYTHON, Listening, options

FLOODER = str(Path(__file__).with_name("tcp_flooder.py"))
SERVER_FILE_LIMIT = 1024
MIB = 1024 * 1024
# The long variant holds 10,000 (the flooder's own descriptor limit is this process's).
HOSTILE_CONNECTIONS = 10_000 if os.environ.get("DSH_LONG_TESTS") == "1" else 2000


class _Limited(Listening):
    """``serve --tcp`` with its descriptor limit set to ``SERVER_FILE_LIMIT``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.stderr_path = base / "stderr.log"

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_FILE_LIMIT, SERVER_FILE_LIMIT))

        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*SERVE, "--tcp", "--port", "0"], stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=err, env=server_env(str(self.home), fsync=False),
                preexec_fn=limit,
            )  # fmt: skip
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
def limited_server(base: Path) -> Iterator[_Limited]:
    server = _Limited(base)
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
            argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", NOBODY_PYTHON, *argv]  # fmt: skip
        else:
            argv = [sys.executable, *argv]
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = count + 64
        assert hard == resource.RLIM_INFINITY or hard >= wanted, f"ulimit -Hn {hard} < {wanted}"

        def enough_descriptors() -> None:
            # The flooder must be able to hold its connections, whatever this shell's soft limit.
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))

        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
            preexec_fn=enough_descriptors,
        )  # fmt: skip
        self.ready = self._line()
        assert "ready" in self.ready, self.ready

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], HANG_GUARD)
        line = self.proc.stdout.readline() if ready else b""
        assert line, f"the flooder said nothing: {self.proc.stderr.read() if self.proc.poll() is not None else ''}"  # type: ignore[union-attr]  # fmt: skip
        result: dict[str, Any] = json.loads(line)
        return result

    def stop(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        done = self._line()
        self.proc.wait(timeout=HANG_GUARD)
        return done


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule: keep the flood out\n")
    (root / "pkg" / "x.py").write_text("x = 1\n")
    return root


def owner_touch_is_delivered(server: _Limited, tmp_path: Path, project: Path) -> None:
    """A new client of the owner connects, authenticates, opens a session, touches pkg/x.py and
    is given pkg/AGENTS.md at its next step."""
    owner: SocketPeer = server.client(options(tmp_path))
    try:
        sid = owner.request("dsh/session/open", {"cwd": str(project)})["session"]["id"]
        first = owner.request("dsh/step/prepare", {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}})  # fmt: skip
        assert "root rule" in json.dumps(first["messages"])
        owner.request("dsh/step/end", {"sessionId": sid, "turn": 1, "step": 1})
        owner.notify("dsh/tool/result", {
            "sessionId": sid, "token": "t1", "name": "read", "isError": False,
            "arguments": {"file_path": str(project / "pkg" / "x.py")}})  # fmt: skip
        second = owner.request("dsh/step/prepare", {"sessionId": sid, "turn": 1, "step": 2})
        assert "pkg rule: keep the flood out" in json.dumps(second["messages"])
    finally:
        owner.close()


def test_the_owner_is_served_while_another_user_holds_2000_connections(
    tmp_path: Path, project: Path
) -> None:
    with limited_server(tmp_path) as server:
        flood = Flood(server.info["port"], HOSTILE_CONNECTIONS, 0, as_nobody=True)
        try:
            # The flood goes on (every refused connection is opened again) while the owner works.
            owner_touch_is_delivered(server, tmp_path, project)
            owner_touch_is_delivered(server, tmp_path, project)
        finally:
            totals = flood.stop()
        assert totals["done"]["connects"] >= HOSTILE_CONNECTIONS, totals
        assert totals["done"]["refusals_read"] > 0, totals
        # A wave of refusals is a line and a summary per 10 s, never a line per connection.
        log = server.stderr()
        assert log.count("refused") <= 2 + log.count("more connection(s)"), log
        assert log.count("\n") < 50, log
        assert "Too many open files" not in log and "Traceback" not in log


@pytest.mark.parametrize(
    ("as_nobody", "body"),
    [(True, MIB - 1), (False, 60 * 1024)],
    ids=["another-user-1MiB", "own-user-60KiB"],
)
def test_600_partial_bodies_do_not_swell_the_server(
    tmp_path: Path, project: Path, as_nobody: bool, body: int
) -> None:
    """Another user's 600 partial bodies of 1 MiB are refused unread. The owner's own processes
    get further (the token is the check), but only 32 wait at a time, each held to 64 KiB: 600
    partial bodies of 60 KiB keep at most about 32 x (64 KiB parsed + 128 KiB in the stream's
    buffer), some 6 MiB. The bound of 100 MiB is that plus ample room for the interpreter's
    own growth; the unguarded server grew by about 760 MiB."""
    with limited_server(tmp_path) as server:
        before = server.rss_mib()
        flood = Flood(server.info["port"], 600, body, as_nobody=as_nobody)
        try:
            during = server.rss_mib()
            if as_nobody:
                owner_touch_is_delivered(server, tmp_path, project)
        finally:
            totals = flood.stop()
        # The owner's own processes can always crowd its door (they can read the token too);
        # once they stop and the server has seen them go, it is open again.
        deadline = time.monotonic() + HANG_GUARD
        while True:
            try:
                owner_touch_is_delivered(server, tmp_path, project)
                break
            except ServerGone:
                assert time.monotonic() < deadline, "the door never opened again"
                time.sleep(0.2)
        assert totals["done"]["connects"] >= 600, totals
        assert during - before < 100, (before, during)
        assert "Traceback" not in server.stderr()
        print(f"RSS {before:.0f} -> {during:.0f} MiB with 600 partial bodies of {body} bytes")


def test_flood_helpers_use_a_real_second_uid() -> None:
    """The attack is from another uid only if setpriv can switch to nobody here."""
    done = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", NOBODY_PYTHON, "-c",
         "import os; print(os.getuid())"], capture_output=True, check=True, timeout=HANG_GUARD,
    )  # fmt: skip
    assert int(done.stdout) != os.geteuid()

"""A ``dsh-sidecar serve`` listening on TCP or a Unix socket, for the transport tests.

Shared by tests/reliability/test_transport.py and test_tcp_flood.py.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

from tests.support.reliability_rpc import HANG_GUARD, SERVE, SocketPeer, server_env

NOBODY_PYTHON = "/usr/bin/python3"


class Listening:
    """A ``serve`` process listening on TCP or a Unix socket, and the line it announced."""

    def __init__(self, base: Path, *flags: str, home: Path | None = None) -> None:
        self.base = base
        self.home = home or base / "home"
        self.stderr_path = base / "stderr.log"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*SERVE, *flags],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=server_env(str(self.home)),
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], HANG_GUARD)
        line = self.proc.stdout.readline() if ready else b""
        assert line, f"nothing announced; stderr: {self.stderr()}"
        self.info: dict[str, Any] = json.loads(line)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def token(self) -> str:
        return Path(self.info["tokenFile"]).read_text().strip()

    def connect(self) -> SocketPeer:
        if self.info["transport"] == "tcp":
            sock = socket.create_connection((self.info["host"], self.info["port"]), HANG_GUARD)
        else:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(HANG_GUARD)
            sock.connect(self.info["path"])
        sock.settimeout(None)
        return SocketPeer(sock)

    def client(self, options: dict[str, Any]) -> SocketPeer:
        peer = self.connect()
        if self.info["transport"] == "tcp":
            options = {**options, "authToken": self.token()}
        peer.initialize(options)
        return peer

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=HANG_GUARD)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=HANG_GUARD)


def options(tmp_path: Path, **instructions: Any) -> dict[str, Any]:
    return {
        "store": {"path": str(tmp_path / "store.sqlite3")},
        "instructions": {"dshHome": str(tmp_path / "dsh-home"), **instructions},
    }

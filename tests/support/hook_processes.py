"""Real ``dsh-sidecar hook`` processes of one Claude Code session on one real store, and the
moments between: ``HookAgent`` runs events (to their end, or stopped at a stage of the hook's
test point, ``DSH_TEST_HOOK_PAUSE``, then killed or let go on), reads ``sessions`` and the spool;
``LockHolder`` is another process holding the store's write lock until released.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.sessions.spool import Spool

STAGE_WAIT_S = 60  # only bounds a hook that never reaches its stage (a failing test)


class HookAgent:
    """A Claude Code session of one project, its hooks run as real processes."""

    def __init__(self, tmp: Path, sid: str) -> None:
        self.sid, self.tmp, self.events = sid, tmp, 0
        self.root = tmp / "proj"
        (self.root / ".git").mkdir(parents=True)
        for rel, text in {
            # With a CLAUDE.md beside it, Claude Code never loads an AGENTS.md itself.
            "CLAUDE.md": "ROOT-CLAUDE\n",
            "AGENTS.md": "ROOT-AGENTS\n",
            "pkg/CLAUDE.md": "PKG-CLAUDE\n",
            "pkg/AGENTS.md": "PKG-AGENTS\n",
            "other/CLAUDE.md": "OTHER-CLAUDE\n",
            "pkg/x.py": "x = 1\n",
            "other/AGENTS.md": "OTHER-AGENTS\n",
            "other/y.py": "y = 1\n",
            "notes.txt": "n\n",
        }.items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(text)
        self.home = tmp / "dsh"
        self.home.mkdir()
        self.fifo = tmp / "stage.fifo"
        os.mkfifo(self.fifo)
        self.env = {
            "DSH_HOME": str(self.home),
            "HOME": str(tmp / "userhome"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "DSH_TEST_STORE_NO_FSYNC": "1",
        }
        self.spool = Spool.of_home(str(self.home))
        self.session = f"claude:{sid}"

    def payload(self, name: str, **fields: Any) -> bytes:
        body = {"hook_event_name": name, "session_id": self.sid, "cwd": str(self.root), **fields}
        return json.dumps(body).encode()

    def read(self, rel: str, tool_id: str) -> bytes:
        path = str(self.root / rel)
        return self.payload(
            "PostToolUse",
            tool_name="Read",
            tool_input={"file_path": path},
            tool_use_id=tool_id,
            tool_response={"file": {"filePath": path}},
        )

    def prompt(self, text: str) -> bytes:
        return self.payload("UserPromptSubmit", prompt=text)

    def start(
        self, payload: bytes, pause: str | None = None, *args: str
    ) -> subprocess.Popen[bytes]:
        env = dict(self.env)
        if pause is not None:
            env["DSH_TEST_HOOK_PAUSE"] = f"{pause}:{self.fifo}"
        self.events += 1
        event = self.tmp / f"event-{self.events}.json"
        event.write_bytes(payload)
        with event.open("rb") as stdin:
            return subprocess.Popen(
                [sys.executable, "-m", "dsh_sidecar", "hook", "--agent", "claude", *args],
                stdin=stdin,
                stdout=subprocess.PIPE,
                env=env,
            )

    def hook(self, payload: bytes, *args: str) -> str:
        """One event run to its end; the text it added ("" for none)."""
        proc = self.start(payload, None, *args)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        return text_of(out)

    def reached(self, proc: subprocess.Popen[bytes], stage: str) -> None:
        """Wait until ``proc`` stands at ``stage`` (it says so through the FIFO)."""
        fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            deadline = time.monotonic() + STAGE_WAIT_S
            said = b""
            while not said.endswith(b"\n"):
                ready, _, _ = select.select([fd], [], [], 0.2)
                if ready:
                    said += os.read(fd, 100)
                elif proc.poll() is not None:
                    pytest.fail(f"the hook ended (status {proc.returncode}) before {stage!r}")
                assert time.monotonic() < deadline, f"the hook never reached {stage!r}"
            assert said == f"{stage}\n".encode()
        finally:
            os.close(fd)

    def go_on(self) -> None:
        with open(self.fifo, "w") as fifo:  # meets the hook opening it to wait
            fifo.write("go\n")

    def kill(self, proc: subprocess.Popen[bytes]) -> str:
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        return text_of(out)

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "dsh_sidecar", *args],
            capture_output=True,
            text=True,
            env=self.env,
            check=True,
            timeout=60,
        )
        return done.stdout

    def waiting_json(self) -> list[str]:
        listed = json.loads(self.cli("sessions", "--json"))["sessions"]
        (ours,) = [s for s in listed if s["id"] == self.session]
        touches = ours["waitingTouches"]
        assert isinstance(touches, list)
        return touches

    def log(self) -> str:
        path = self.home / "log" / "hooks.log"
        return path.read_text() if path.exists() else ""


def text_of(out: bytes) -> str:
    if not out:
        return ""
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


class LockHolder:
    """Another process holding the store's write lock until released."""

    def __init__(self, store: Path) -> None:
        script = (
            "import sqlite3, sys\n"
            f"db = sqlite3.connect({str(store)!r}, isolation_level=None)\n"
            "db.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\n"
            "sys.stdin.readline()\ndb.execute('ROLLBACK')\n"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "held\n"

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.close()
        assert self.proc.wait(60) == 0

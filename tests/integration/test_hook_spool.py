"""Spooled touches against killed and waiting hook processes: real ``dsh-sidecar hook``
processes on one real store, stopped where a test wants them through the hook's test point
(``DSH_TEST_HOOK_PAUSE``, a FIFO), killed with ``os.kill``. Every touch a busy hook kept is
delivered exactly once, whichever moment a kill hits; a lock held for a second is waited for."""

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


class Agent:
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

    def start(self, payload: bytes, pause: str | None = None) -> subprocess.Popen[bytes]:
        env = dict(self.env)
        if pause is not None:
            env["DSH_TEST_HOOK_PAUSE"] = f"{pause}:{self.fifo}"
        self.events += 1
        event = self.tmp / f"event-{self.events}.json"
        event.write_bytes(payload)
        with event.open("rb") as stdin:
            return subprocess.Popen(
                [sys.executable, "-m", "dsh_sidecar", "hook", "--agent", "claude"],
                stdin=stdin,
                stdout=subprocess.PIPE,
                env=env,
            )

    def hook(self, payload: bytes) -> str:
        """One event run to its end; the text it added ("" for none)."""
        proc = self.start(payload)
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


class Holder:
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


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    a = Agent(tmp_path, "s1")
    assert "ROOT-AGENTS" in a.hook(a.payload("SessionStart", source="startup"))
    return a


def keep_two(agent: Agent) -> None:
    """What two busy events of the session left in the spool."""
    agent.spool.keep(agent.session, (str(agent.root / "pkg/x.py"),))
    agent.spool.keep(agent.session, (str(agent.root / "other/y.py"),))


def test_a_hook_killed_inside_its_transaction_leaves_every_spooled_touch_for_the_next_event(
    agent: Agent,
) -> None:
    keep_two(agent)
    killed = agent.start(agent.read("notes.txt", "t1"), pause="printed")
    agent.reached(killed, "printed")  # printed, not committed: the agent throws it away
    printed = agent.kill(killed)
    assert printed.count("PKG-AGENTS") == 1 and printed.count("OTHER-AGENTS") == 1
    assert agent.waiting_json() == [str(agent.root / "pkg/x.py"), str(agent.root / "other/y.py")]

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1 and text.count("OTHER-AGENTS") == 1
    assert agent.waiting_json() == []
    assert agent.spool.read(agent.session) == []  # settled after the commit
    again = agent.hook(agent.read("notes.txt", "t2"))
    assert "PKG-AGENTS" not in again and "OTHER-AGENTS" not in again


def test_a_hook_killed_after_its_commit_delivers_nothing_twice(agent: Agent) -> None:
    keep_two(agent)
    killed = agent.start(agent.read("notes.txt", "t1"), pause="committed")
    agent.reached(killed, "committed")
    delivered = agent.kill(killed)
    assert delivered.count("PKG-AGENTS") == 1 and delivered.count("OTHER-AGENTS") == 1
    # The spool still holds both entries, but the store says they were consumed.
    assert len(agent.spool.read(agent.session)) == 2
    assert agent.waiting_json() == []

    text = agent.hook(agent.prompt("go on"))
    assert "PKG-AGENTS" not in text and "OTHER-AGENTS" not in text
    assert agent.spool.read(agent.session) == []  # and now they are gone from it too
    assert "PKG-AGENTS" not in agent.hook(agent.read("pkg/x.py", "t2"))


def test_a_kill_between_the_spool_being_set_aside_and_removed_loses_nothing(
    agent: Agent,
) -> None:
    """What an older dsh-sidecar, or a kill during settling, leaves: ``<name>.jsonl.<suffix>``
    beside the live file, holding one entry of its own and one already in the live file."""
    keep_two(agent)
    (live,) = [p for p in Path(agent.spool.directory).iterdir()]
    legacy = json.dumps([str(agent.root / "pkg/x.py")])
    aside = live.read_text().splitlines()[1]  # other/y.py's entry, written back twice
    live.with_name(live.name + ".4242").write_text(legacy + "\n" + aside + "\n")

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1 and text.count("OTHER-AGENTS") == 1
    assert list(Path(agent.spool.directory).iterdir()) == []


def test_a_lock_held_for_a_second_is_waited_for_not_spooled(agent: Agent) -> None:
    holder = Holder(agent.home / "sessions.sqlite3")
    try:
        waiting = agent.start(agent.read("pkg/x.py", "t1"), pause="begin")
        agent.reached(waiting, "begin")
        agent.go_on()  # to BEGIN IMMEDIATE, where the lock is held
        time.sleep(1.0)  # the other process's one second with the lock, not a synchronisation
    finally:
        holder.release()
    out, _ = waiting.communicate(timeout=60)
    assert waiting.returncode == 0
    assert text_of(out).count("PKG-AGENTS") == 1
    assert "store busy" not in agent.log()
    assert agent.spool.read(agent.session) == []


def test_sessions_and_doctor_show_spooled_touches_as_touches_waiting(agent: Agent) -> None:
    holder = Holder(agent.home / "sessions.sqlite3")
    try:  # held for longer than the hook may wait: its touch is kept
        assert agent.hook(agent.read("pkg/x.py", "t1")) == ""
    finally:
        holder.release()
    assert "store busy: kept 1 touch(es)" in agent.log()
    agent.spool.keep(agent.session, (str(agent.root / "other/y.py"),))

    listing = agent.cli("sessions").splitlines()
    assert "  pending  2 touches waiting" in listing
    assert agent.waiting_json() == [str(agent.root / "pkg/x.py"), str(agent.root / "other/y.py")]
    doctor = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "doctor"],
        capture_output=True,
        text=True,
        env=agent.env,
        cwd=agent.root,
        timeout=60,
    ).stdout.splitlines()
    assert [line.split(None, 1)[1] for line in doctor if line.startswith("spool ")] == [
        f"2 touches waiting for {agent.session}"
    ]

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1 and text.count("OTHER-AGENTS") == 1
    assert "  pending  nothing" in agent.cli("sessions").splitlines()
    assert agent.waiting_json() == []

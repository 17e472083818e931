"""The resident hook engine (``hooks/resident*.py``) with real hook processes, a real resident, a
real socket and a real store: the same bytes as the hook's own process, every touch exactly once
whatever happens to the resident, and no engine module in the thin client.

Each test stops the residents its hooks started (``tests.support.resident.stop``)."""

from __future__ import annotations

import ast
import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import resident

from dsh_sidecar.hooks import resident_wire as wire

STAGE_WAIT_S = 60  # bounds a resident that never reaches its stage (a failing test)

TREE = {
    "AGENTS.md": "ROOT-AGENTS\n",
    "CLAUDE.md": "ROOT-CLAUDE\n",
    "pkg/AGENTS.md": "PKG-AGENTS\n",
    "pkg/CLAUDE.md": "PKG-CLAUDE\n",
    "pkg/sub/x.py": "x = 1\n",
    "other/AGENTS.md": "OTHER-AGENTS\n",
    "other/y.py": "y = 1\n",
}


class Hooks:
    """A project, a ``$DSH_HOME`` and hook processes run as the agents run them."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None) -> None:
        self.tmp = tmp
        self.root = tmp / "proj"
        self.home = tmp / "dsh"
        self.env = {
            "DSH_HOME": str(self.home),
            "HOME": str(tmp / "userhome"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "DSH_TEST_STORE_NO_FSYNC": "1",
            wire.SWITCH_ENV: "1",
            # Tests stop their residents; this only bounds one a failing test left behind.
            wire.IDLE_ENV: "120",
            **(env or {}),
        }
        self.reset()

    def reset(self) -> None:
        """The same tree and an empty ``$DSH_HOME`` again, at the same paths."""
        for path in (self.root, self.home):
            if path.exists():
                shutil.rmtree(path)
        (self.root / ".git").mkdir(parents=True)
        for rel, text in TREE.items():
            self.write(rel, text)
        self.home.mkdir(mode=0o700)
        (self.home / "AGENTS.md").write_text("USER-GLOBAL\n")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def popen(self, agent: str, payload: dict[str, Any], **env: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_sidecar", "hook", "--agent", agent],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=self.root,
            env={**self.env, **env},
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"cwd": str(self.root), **payload}).encode())
        proc.stdin.close()
        return proc

    def finish(self, proc: subprocess.Popen[bytes]) -> bytes:
        assert proc.stdout is not None
        out = proc.stdout.read()
        assert proc.wait(60) == 0
        return out

    def hook(self, agent: str, payload: dict[str, Any], **env: str) -> bytes:
        return self.finish(self.popen(agent, payload, **env))

    def hooks_log(self) -> str:
        path = self.home / "log" / "hooks.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[Hooks]:
    made = Hooks(tmp_path)
    yield made
    resident.stop(made.home)


def text(out: bytes) -> str:
    if not out:
        return ""
    body = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(body, str)
    return body


def answered_count(home: Path) -> int:
    """Events the (stopped) resident answered, from its last line."""
    lines = resident.log(home).strip().splitlines()
    # A resident leaves when a module it loaded changes on disk, as it must; in a checkout that
    # someone edits while the test runs, a second resident then answers the rest and the count
    # below comes out short. That says nothing about the resident, so the failure says what it is.
    edited = [line for line in lines if "changed on disk; leaving" in line]
    assert not edited, f"the package's code was edited during the test: {edited[0]}"
    last = lines[-1]
    assert "stopped: answered" in last, last
    return int(last.split("answered ")[1].split()[0])


# -- payloads, shaped as each CLI sends them (tests/unit/test_hooks.py) ---------------------------


def start(sid: str, source: str = "startup") -> dict[str, Any]:
    return {"hook_event_name": "SessionStart", "session_id": sid, "source": source}


def prompt(agent: str, sid: str, said: str, stamp: int) -> dict[str, Any]:
    if agent == "gemini":
        return {
            "hook_event_name": "BeforeAgent",
            "session_id": sid,
            "prompt": said,
            "timestamp": f"2026-12-04T21:00:{stamp:02d}Z",
        }
    return {"hook_event_name": "UserPromptSubmit", "session_id": sid, "prompt": said}


def read(agent: str, sid: str, root: Path, rel: str, call: str) -> dict[str, Any]:
    path = str(root / rel)
    if agent == "claude":
        return {
            "hook_event_name": "PostToolUse",
            "session_id": sid,
            "tool_name": "Read",
            "tool_input": {"file_path": path},
            "tool_use_id": call,
            "tool_response": {"file": {"filePath": path}},
        }
    if agent == "codex":
        return {
            "hook_event_name": "PostToolUse",
            "session_id": sid,
            "tool_name": "Bash",
            "tool_input": {"command": f"cat {rel}"},
            "tool_use_id": call,
        }
    return {
        "hook_event_name": "AfterTool",
        "session_id": sid,
        # Gemini sends no call id: the hook tells calls apart by timestamp, tool and input.
        "timestamp": f"2026-12-04T21:01:{int(call[1:]):02d}Z",
        "tool_name": "read_file",
        "tool_input": {"file_path": rel},
    }


# A step of a script: ("start", agent, sid, source), ("prompt", agent, sid, text, stamp),
# ("read", agent, sid, relative path, call id), or ("write", relative path, text; None deletes).
Step = tuple[Any, ...]


def script(agents: tuple[str, ...]) -> list[Step]:
    """Start, prompts and reads of one session per agent, interleaved, with instruction files
    edited, deleted and added between events."""
    steps: list[Step] = [("start", agent, f"{agent}1", "startup") for agent in agents]
    for agent in agents:
        sid = f"{agent}1"
        steps += [
            ("prompt", agent, sid, "one", 1),
            ("read", agent, sid, "pkg/sub/x.py", "t1"),
            ("read", agent, sid, "pkg/sub/x.py", "t1"),  # the same call's hook again: a retry
            ("read", agent, sid, "other/y.py", "t6"),
        ]
    steps += [
        ("write", "pkg/AGENTS.md", "PKG-AGENTS, second version\n"),
        ("write", "other/AGENTS.md", None),
        ("write", "other/inner/AGENTS.md", "INNER-AGENTS\n"),
        ("write", "other/inner/z.py", "z = 1\n"),
    ]
    for agent in agents:
        sid = f"{agent}1"
        steps += [
            ("read", agent, sid, "pkg/sub/x.py", "t2"),
            ("read", agent, sid, "other/y.py", "t3"),
            ("read", agent, sid, "other/inner/z.py", "t4"),
            ("prompt", agent, sid, "two", 2),
        ]
    steps.append(("write", "pkg/AGENTS.md", None))
    for agent in agents:
        sid = f"{agent}1"
        steps += [
            ("read", agent, sid, "pkg/sub/x.py", "t5"),
            ("start", agent, sid, "resume"),
            ("prompt", agent, sid, "three", 3),
        ]
    return steps


def play(h: Hooks, step: Step) -> bytes | None:
    kind, *args = step
    if kind == "write":
        rel, content = args
        if content is None:
            (h.root / rel).unlink()
        else:
            h.write(rel, content)
        return None
    agent, sid = args[0], args[1]
    if kind == "start":
        return h.hook(agent, start(sid, args[2]))
    if kind == "prompt":
        return h.hook(agent, prompt(agent, sid, args[2], args[3]))
    return h.hook(agent, read(agent, sid, h.root, args[2], args[3]))


def run_script(h: Hooks, steps: list[Step], *, after_first: Callable[[], object]) -> list[bytes]:
    outputs: list[bytes] = []
    for index, step in enumerate(steps):
        out = play(h, step)
        if out is not None:
            outputs.append(out)
        if index == 0:
            after_first()
    return outputs


# -- the tests ------------------------------------------------------------------------------------


def test_the_resident_answers_byte_for_byte_as_the_hooks_own_process(hooks: Hooks) -> None:
    steps = script(("claude", "codex", "gemini"))
    hooks.env[wire.SWITCH_ENV] = "0"
    alone = run_script(hooks, steps, after_first=lambda: None)
    assert not hooks.home.joinpath("run", wire.SOCKET_NAME).exists()  # off means off
    hooks.reset()
    hooks.env[wire.SWITCH_ENV] = "1"
    # The first event starts the resident and is answered in its own process; the rest go to it.
    through = run_script(hooks, steps, after_first=lambda: resident.wait_until_up(hooks.home))
    resident.stop(hooks.home)
    assert through == alone
    assert answered_count(hooks.home) == len(alone) - 1
    # What the script is about happened: the files, their edits and deletions, each once.
    joined = "".join(text(out) for out in alone)
    assert joined.count("PKG-AGENTS, second version") == 3  # once per agent
    assert joined.count("INNER-AGENTS") == 3
    assert "Instructions removed: other/AGENTS.md" in joined
    assert "Instructions removed: pkg/AGENTS.md" in joined


def test_the_thin_client_loads_nothing_of_the_engine(hooks: Hooks) -> None:
    hooks.hook("claude", start("s0"))  # starts the resident
    resident.wait_until_up(hooks.home)
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write(repr(sorted(sys.modules))))\n"
        "from dsh_sidecar.launch import main\n"
        "sys.exit(main(['hook', '--agent', 'claude']))\n"
    )
    payload = {"cwd": str(hooks.root), **start("s1")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=hooks.root,
        env=hooks.env,
        check=True,
        timeout=60,
    )
    assert "ROOT-AGENTS" in text(done.stdout)
    loaded = set(ast.literal_eval(done.stderr.decode()))
    ours = {m for m in loaded if m.startswith("dsh_sidecar")}
    assert ours == {
        "dsh_sidecar",
        "dsh_sidecar.launch",
        "dsh_sidecar.hooks",
        "dsh_sidecar.hooks.budget",
        "dsh_sidecar.hooks.resident_client",
        "dsh_sidecar.hooks.resident_wire",
        "dsh_sidecar.private_paths",
    }
    for heavy in ("attrs", "sqlite3", "socket", "typing", "argparse"):
        assert heavy not in loaded
    resident.stop(hooks.home)
    assert answered_count(hooks.home) == 1


def stopped_residents(home: Path, count: int) -> list[int]:
    """Wait until ``count`` residents of ``home`` have said they stopped; their pids, from the
    log (read, not raced: a resident with a short idle may come and go between two looks)."""
    deadline = time.monotonic() + resident.WAIT_S
    while True:
        lines = resident.log(home).splitlines()
        stopped = [line for line in lines if "] stopped: " in line]
        if len(stopped) >= count:
            return [int(line.split("[", 1)[1].split("]", 1)[0]) for line in stopped]
        assert time.monotonic() < deadline, f"{count} resident(s) never stopped"
        time.sleep(0.05)


def test_started_on_demand_and_gone_when_idle(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path, {wire.IDLE_ENV: "0.5"})
    assert "ROOT-AGENTS" in text(hooks.hook("claude", start("s1")))
    (first,) = stopped_residents(hooks.home, 1)
    resident.wait_until_gone(first)
    log = resident.log(hooks.home)
    assert f"[{first}] listening on {hooks.home / 'run' / wire.SOCKET_NAME}" in log
    assert f"[{first}] idle for 0.5 s; leaving" in log
    assert not (hooks.home / "run" / wire.SOCKET_NAME).exists()
    # The next event starts another one, which leaves in turn.
    hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1"))
    second = stopped_residents(hooks.home, 2)[1]
    assert second != first
    resident.wait_until_gone(second)


def test_its_directory_and_socket_are_the_owners_alone(hooks: Hooks) -> None:
    hooks.hook("claude", start("s1"))
    resident.wait_until_up(hooks.home)
    run = hooks.home / "run"
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
    assert stat.S_IMODE((run / wire.SOCKET_NAME).lstat().st_mode) == 0o600
    assert stat.S_IMODE((run / wire.LOCK_NAME).lstat().st_mode) == 0o600
    log = hooks.home / "log" / wire.LOG_NAME
    assert stat.S_IMODE(log.lstat().st_mode) == 0o600


def deliveries(outputs: list[bytes], marker: str) -> int:
    return sum(text(out).count(marker) for out in outputs)


def test_a_stale_socket_is_replaced_and_the_event_answered_once(hooks: Hooks) -> None:
    run = hooks.home / "run"
    run.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(run / wire.SOCKET_NAME))  # bound, never listening, then closed: stale
    dead.close()
    (run / wire.SOCKET_NAME).chmod(0o600)  # as a killed resident leaves it
    outs = [hooks.hook("claude", start("s1"))]
    resident.wait_until_up(hooks.home)
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1")))
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t2")))
    resident.stop(hooks.home)
    assert deliveries(outs, "ROOT-AGENTS") == 1
    assert deliveries(outs, "PKG-AGENTS") == 1
    assert answered_count(hooks.home) == 2


@pytest.mark.parametrize("where", ["run directory", "socket", "DSH_HOME"])
def test_a_socket_others_could_reach_is_not_used(hooks: Hooks, where: str) -> None:
    hooks.hook("claude", start("s0"))
    pid = resident.wait_until_up(hooks.home)
    target = {
        "run directory": hooks.home / "run",
        "socket": hooks.home / "run" / wire.SOCKET_NAME,
        "DSH_HOME": hooks.home,
    }[where]
    mode = stat.S_IMODE(target.lstat().st_mode)
    target.chmod(mode | (0o022 if where == "DSH_HOME" else 0o066))
    try:
        outs = [hooks.hook("claude", start("s1"))]
        outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1")))
    finally:
        target.chmod(mode)
    assert deliveries(outs, "ROOT-AGENTS") == 1 and deliveries(outs, "PKG-AGENTS") == 1
    assert hooks.hooks_log().count("resident not used") == 2
    assert resident.pid_of(hooks.home) == pid  # refused, not replaced
    resident.stop(hooks.home)
    assert answered_count(hooks.home) == 0


def test_a_socket_of_another_user_is_not_used(hooks: Hooks) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user takes root")
    hooks.hook("claude", start("s0"))
    pid = resident.wait_until_up(hooks.home)
    planted = hooks.home / "run" / wire.SOCKET_NAME
    os.chown(planted, 65534, -1, follow_symlinks=False)
    try:
        out = hooks.hook("claude", read("claude", "s0", hooks.root, "pkg/sub/x.py", "t1"))
    finally:
        os.chown(planted, 0, -1, follow_symlinks=False)
    assert "PKG-AGENTS" in text(out)
    assert "belongs to uid 65534, not to this user" in hooks.hooks_log()
    assert resident.pid_of(hooks.home) == pid
    resident.stop(hooks.home)
    assert answered_count(hooks.home) == 0


class Stage:
    """The resident's test stop (``DSH_TEST_RESIDENT_PAUSE``), through a FIFO."""

    def __init__(self, tmp: Path, name: str) -> None:
        self.fifo = tmp / f"{name}.fifo"
        os.mkfifo(self.fifo)
        self.env = {"DSH_TEST_RESIDENT_PAUSE": f"{name}:{self.fifo}"}
        self.name = name

    def reached(self) -> None:
        fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            deadline = time.monotonic() + STAGE_WAIT_S
            said = b""
            while not said.endswith(b"\n"):
                if select.select([fd], [], [], 0.2)[0]:
                    said += os.read(fd, 100)
                assert time.monotonic() < deadline, f"the resident never reached {self.name!r}"
            assert said == f"{self.name}\n".encode()
        finally:
            os.close(fd)


@pytest.mark.parametrize("stage", ["received", "answered"])
def test_a_resident_killed_mid_request_leaves_the_event_to_the_hook(
    hooks: Hooks, tmp_path: Path, stage: str
) -> None:
    outs = [hooks.hook("claude", start("s1"))]
    pid = resident.wait_until_up(hooks.home)
    pause = Stage(tmp_path, stage)
    proc = hooks.popen(
        "claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1"), **pause.env
    )
    # "answered": its answer computed and offered (the offer committed), not yet sent.
    pause.reached()
    os.kill(pid, signal.SIGKILL)
    outs.append(hooks.finish(proc))
    resident.wait_until_gone(pid)
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1")))
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t2")))
    outs.append(hooks.hook("claude", prompt("claude", "s1", "go", 1)))
    assert deliveries(outs, "ROOT-AGENTS") == 1
    assert deliveries(outs, "PKG-AGENTS") == 1  # answered by the hook, not lost, not twice
    assert "PKG-AGENTS" in text(outs[1])


def test_a_stopped_resident_is_passed_by(hooks: Hooks) -> None:
    outs = [hooks.hook("claude", start("s1"))]
    pid = resident.wait_until_up(hooks.home)
    os.kill(pid, signal.SIGSTOP)
    try:
        outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1")))
    finally:
        os.kill(pid, signal.SIGCONT)
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t2")))
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "other/y.py", "t3")))
    resident.stop(hooks.home)
    assert "PKG-AGENTS" in text(outs[1])
    assert deliveries(outs, "PKG-AGENTS") == 1 and deliveries(outs, "OTHER-AGENTS") == 1
    # The request it held when it was continued had been given up on: not answered there.
    assert answered_count(hooks.home) == 2


def test_an_event_its_client_gave_up_on_is_handed_back_not_logged_as_a_failure(
    hooks: Hooks, tmp_path: Path
) -> None:
    outs = [hooks.hook("claude", start("s1"))]
    resident.wait_until_up(hooks.home)
    pause = Stage(tmp_path, "answered")
    proc = hooks.popen(
        "claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1"), **pause.env
    )
    pause.reached()
    # The resident holds the event, its answer offered; the hook stops waiting for it and
    # answers the event itself (the resident's offer reserves the session, so it keeps the
    # touch for the session's next event).
    outs.append(hooks.finish(proc))
    with open(pause.fifo, "w", encoding="utf-8") as go_on:
        go_on.write("go\n")
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "other/y.py", "t2")))
    resident.stop(hooks.home)
    assert deliveries(outs, "PKG-AGENTS") == 1 and deliveries(outs, "OTHER-AGENTS") == 1
    # A fallback lost nothing: the resident's own log says it, hooks.log (failures) does not.
    assert "event handed back: the hook left before confirming its answer" in resident.log(
        hooks.home
    )
    assert "confirming" not in hooks.hooks_log()


def test_a_resident_of_another_version_leaves_and_the_hook_answers(hooks: Hooks) -> None:
    outs = [hooks.hook("claude", start("s1"))]
    pid = resident.wait_until_up(hooks.home)
    newer = {wire.TEST_VERSION_ENV: "newer"}
    outs.append(
        hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t1"), **newer)
    )
    resident.wait_until_gone(pid)
    assert "a client of another version" in resident.log(hooks.home)
    outs.append(
        hooks.hook("claude", read("claude", "s1", hooks.root, "pkg/sub/x.py", "t2"), **newer)
    )
    pid2 = resident.wait_until_up(hooks.home)  # started by the newer client, its version
    outs.append(hooks.hook("claude", read("claude", "s1", hooks.root, "other/y.py", "t3"), **newer))
    assert resident.pid_of(hooks.home) == pid2
    resident.stop(hooks.home)
    assert deliveries(outs, "PKG-AGENTS") == 1 and deliveries(outs, "OTHER-AGENTS") == 1
    assert answered_count(hooks.home) == 1


def test_parallel_sessions_through_one_resident_get_everything_once(hooks: Hooks) -> None:
    sessions, rounds = 4, 20
    for d in range(6):
        hooks.write(f"d{d}/AGENTS.md", f"DIR{d}-AGENTS\n")
        hooks.write(f"d{d}/f.py", "f = 1\n")
    agents = ("claude", "codex", "gemini", "claude")

    def events(n: int) -> list[dict[str, Any]]:
        agent, sid = agents[n], f"p{n}"
        made = [start(sid)]
        for r in range(1, rounds):
            if r % 7 == 0:
                made.append(prompt(agent, sid, f"prompt {r}", r))
            else:
                # Every directory read three times or so; a directory's file once per session.
                made.append(read(agent, sid, hooks.root, f"d{r % 6}/f.py", f"t{r}"))
        return made

    def one_session(n: int, into: dict[int, list[bytes]]) -> None:
        into[n] = [hooks.hook(agents[n], payload) for payload in events(n)]

    def run_all() -> dict[int, list[bytes]]:
        results: dict[int, list[bytes]] = {}
        threads = [threading.Thread(target=one_session, args=(n, results)) for n in range(sessions)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == sessions
        return results

    hooks.hook("claude", start("warm"))  # the resident is up before the sessions begin
    resident.wait_until_up(hooks.home)
    through = run_all()
    resident.stop(hooks.home)
    assert answered_count(hooks.home) == sessions * rounds
    assert resident.log(hooks.home).count("listening on") == 1
    for n in range(sessions):
        for d in range(6):
            assert deliveries(through[n], f"DIR{d}-AGENTS") == 1, (n, d)
    # The same bytes as each session's hooks in their own processes.
    hooks.env[wire.SWITCH_ENV] = "0"
    hooks.reset()
    for d in range(6):
        hooks.write(f"d{d}/AGENTS.md", f"DIR{d}-AGENTS\n")
        hooks.write(f"d{d}/f.py", "f = 1\n")
    alone = {n: [hooks.hook(agents[n], payload) for payload in events(n)] for n in range(sessions)}
    assert through == alone


def test_two_hooks_racing_to_start_it_start_one(hooks: Hooks) -> None:
    procs = [hooks.popen("claude", start(f"r{n}")) for n in range(4)]
    outs = [hooks.finish(proc) for proc in procs]
    assert all("ROOT-AGENTS" in text(out) for out in outs)
    resident.wait_until_up(hooks.home)
    resident.stop(hooks.home)
    assert resident.log(hooks.home).count("listening on") == 1


def test_a_resident_notices_its_code_changed_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import ModuleType

    from dsh_sidecar.hooks.resident import LoadedCode

    source = tmp_path / "fake.py"
    source.write_text("x = 1\n")
    module = ModuleType("dsh_sidecar_test_fake")
    module.__file__ = str(source)
    monkeypatch.setitem(sys.modules, "dsh_sidecar_test_fake", module)
    code = LoadedCode()
    assert code.changed() is None
    source.write_text("x = 22\n")  # another size: seen whatever the clock's resolution
    assert code.changed() == str(source)


def test_what_only_the_hooks_own_process_can_do_is_left_to_it(hooks: Hooks) -> None:
    hooks.hook("claude", start("s1"))
    pid = resident.wait_until_up(hooks.home)
    # doctor names the running resident.
    doctor = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "doctor"],
        capture_output=True,
        text=True,
        env=hooks.env,
        timeout=60,
    ).stdout
    socket_path = hooks.home / "run" / wire.SOCKET_NAME
    assert f"resident     running (pid {pid}, {socket_path})\n" in doctor
    # argparse's help goes to the hook's stdout: declined, answered by the hook itself.
    helped = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "hook", "--help"],
        capture_output=True,
        text=True,
        env=hooks.env,
        input="",
        timeout=60,
    )
    assert helped.returncode == 0 and helped.stdout.startswith("usage: dsh-sidecar hook")
    # A prompt that reads tmux asks about the hook's parent process: declined too.
    settings = hooks.tmp / "tmux.json"
    settings.write_text(json.dumps({"tmuxContext": {"enabled": True}}))
    said = {"cwd": str(hooks.root), **prompt("claude", "s1", "go", 1)}
    command = ["hook", "--agent", "claude", "--settings", str(settings)]
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", *command],
        input=json.dumps(said).encode(),
        capture_output=True,
        env=hooks.env,
        cwd=hooks.root,
        timeout=60,
    )
    assert done.returncode == 0
    resident.stop(hooks.home)
    assert "declined 2" in resident.log(hooks.home).strip().splitlines()[-1]
    assert answered_count(hooks.home) == 0


RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "agent_hooks"
# The events hooks install registers, in the order a session sends them.
INSTALLED = {
    "claude": (
        "SessionStart",
        "SubagentStart",
        "UserPromptSubmit",
        "InstructionsLoaded",
        "PostToolUse",
        "PostToolUseFailure",
    ),
    "codex": ("SessionStart", "UserPromptSubmit", "PostToolUse"),
    "gemini": ("SessionStart", "BeforeAgent", "AfterTool"),
}


def recorded_events(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every recorded payload of an installed event (tests/fixtures/agent_hooks, as the real
    CLIs sent them), scenario by scenario, each scenario's events in the order they come."""
    found: list[tuple[tuple[str, str, int, str], str, dict[str, Any]]] = []
    for agent, events in INSTALLED.items():
        for path in (RECORDED / agent).glob("*.json"):
            event, _, scenario = path.stem.partition("-")
            if event not in events:
                continue
            payload = json.loads(path.read_text().replace("$ROOT", str(root)))
            found.append(((agent, scenario, events.index(event), path.stem), agent, payload))
    return [(agent, payload) for _, agent, payload in sorted(found, key=lambda f: f[0])]


def recorded_tree(root: Path) -> None:
    """The repository the recordings were made in (tests/unit/test_hook_payloads.py)."""
    repo = root / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    for rel, content in {
        "AGENTS.md": "ROOT-AGENTS\n",
        "CLAUDE.md": "ROOT-CLAUDE\n",
        "pkg/AGENTS.md": "PKG-AGENTS\n",
        "pkg/sub/CLAUDE.md": "SUB-CLAUDE\n",
        "pkg/sub/x.py": "VALUE = 1\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    (repo / ".git").mkdir()


def test_recorded_sessions_of_the_three_clis_get_the_same_bytes(
    hooks: Hooks, tmp_path: Path
) -> None:
    events = recorded_events(tmp_path)
    assert {agent for agent, _ in events} == {"claude", "codex", "gemini"}
    hooks.env[wire.SWITCH_ENV] = "0"
    recorded_tree(tmp_path)
    alone = [hooks.hook(agent, payload) for agent, payload in events]
    hooks.reset()
    recorded_tree(tmp_path)
    hooks.env[wire.SWITCH_ENV] = "1"
    hooks.hook("claude", start("warm-up"))  # starts the resident; answered in its own process
    resident.wait_until_up(hooks.home)
    through = [hooks.hook(agent, payload) for agent, payload in events]
    resident.stop(hooks.home)
    assert through == alone
    assert answered_count(hooks.home) == len(events)
    assert sum(1 for out in alone if out) >= 10  # the recordings do get answers

"""Exactly once, on time, with many agents (issue 31): four real CLI sessions and an editor at
once on one repository, on a loaded machine, with instruction files edited and deleted mid-run.

Each round starts, at the same time, four headless CLI sessions (all three kinds; each with a
fake model of its own, so every session's request bodies are its own) and one editor session (a
real ``dsh-sidecar serve`` over stdio, driven as an editor does: ``dsh/tool/result``, then
``dsh/context/pending``, then ``dsh/step/prepare``), all with the hooks as ``dsh-sidecar hooks
install`` writes them (events, matchers, the 5-second timeout), one ``$DSH_HOME`` and so one
store, one resident engine and one spool. Two processes spin on the CPUs for the whole test.

The model reads files at several depths (Claude Code's ``Read``, Gemini CLI's ``read_file``, and
``cat``/``grep`` through each CLI's shell; a listing for Gemini CLI). After the first half of
every session's tool calls, all sessions wait at a barrier: the test edits (new marker) and
deletes instruction files there, while every CLI is mid-turn, then lets them go on. Between
rounds the tree changes again (deleted files come back with new markers).

What is due is computed from the sidecar's own chain (``load_document_chain``, what ``dsh-sidecar
scopes`` reports) on the tree as it stood when the tool ran; the request bodies hold what the
agent loaded itself as well as what the hook sent (the hook's complement mode leaves out what
each agent loads itself: docs/agents.md), so every file of a chain counts once however it came:

- the first request holds the baseline (the chain of the session's directory);
- the request right after a touching tool result holds the current marker of every file of that
  path's chain exactly once, and, for every file the session was told that changed or is gone
  since (whatever the touch: the hook delivers changes at the next event), its new marker or
  ``Instructions removed: PATH``;
- no marker shows before it is due, none that is never due for this session (nothing of another
  session's touches), none twice; the final request holds each due one exactly once;
- after each round no session has anything pending or waiting in the spool, and the store lists
  every agent session.

Claude Code adds two repeats of its own that no hook can prevent (CHANGE_NOTE, and ``judge`` on
repeats): its note of the changed lines of a nested file it loaded itself, and its own load of a
nested CLAUDE.md the hook had sent, unchanged, after a search. They are counted apart, and each
must be of a file this session was due. The facts:
docs/reference/agent-clis.md, Claude Code's own reads through Bash

The figures (files due, on time, late, lost, twice) are printed per round (``-s`` shows them).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.hooks.install import HOOK_EVENTS, TIMEOUT_SECONDS
from dsh_sidecar.sources.agent_instructions.baseline import load_document_chain
from tests.support.agent_cli import Agent, AgentRun, run_agent
from tests.support.fake_model import FakeModel
from tests.support.hooks import Hook, HookConfig
from tests.support.recorded import RecordedRequest, texts_of
from tests.support.reliability_rpc import Server, server_env
from tests.support.steps import DONE_TEXT, ReadFile, Shell, Step, Text, ToolCall

pytestmark = pytest.mark.agent_clis

HOOK = shlex.join([str(Path(sys.executable).parent / "dsh-sidecar"), "hook"])
# Only guards against a hang (a CLI that never reaches the barrier): never a speed assertion.
HANG_GUARD_S = 300
CLI_TIMEOUT_S = 300
SPINNERS = 2  # processes spinning on the CPUs for the whole test (the machine has two cores)

# Rounds in one test; the long variant (README, Development) runs more of the same.
ROUNDS = 9 if os.environ.get("DSH_LONG_TESTS") == "1" else 3
# The agents of each round's four CLI sessions: every kind each round, each kind twice once.
MIXES: tuple[tuple[Agent, Agent, Agent, Agent], ...] = (
    ("claude", "claude", "codex", "gemini"),
    ("claude", "codex", "codex", "gemini"),
    ("claude", "codex", "gemini", "gemini"),
)

# The instruction files (``~/`` is $DSH_HOME), at four depths on one branch and two on others.
FILES = (
    "~/AGENTS.md",
    "AGENTS.md",
    "CLAUDE.md",
    "AGENTS.local.md",
    "a/AGENTS.md",
    "a/CLAUDE.md",
    "a/b/AGENTS.md",
    "a/b/CLAUDE.local.md",
    "a/b/c/CLAUDE.md",
    "a/b/c/d/AGENTS.md",
    "s/AGENTS.md",
    "s/t/AGENTS.md",
    "s/t/CLAUDE.md",
    "u/AGENTS.md",
    "u/AGENTS.local.md",
)
SOURCES = {"a/b/c/d/x.py": "x = 1\n", "a/b/y.py": "y = 2\n", "s/t/z.py": "value = 3\n"}
SOURCES |= {"u/w.py": "value = 4\n", "a/b/q.py": "value = 5\n"}

# Mid-run, at the barrier of round N: files given a new marker, and files deleted. Each round
# also changes files the agents load themselves (Claude Code: CLAUDE.md at the start and, after a
# Read, the nested ones; Codex CLI: the root AGENTS.md).
MID_EDITS = (
    ("AGENTS.md", "a/CLAUDE.md", "u/AGENTS.local.md"),
    ("CLAUDE.md", "a/b/AGENTS.md", "s/t/CLAUDE.md", "~/AGENTS.md"),
    ("AGENTS.local.md", "a/b/CLAUDE.local.md", "a/b/c/CLAUDE.md", "s/AGENTS.md"),
)
MID_DELETES = (
    ("a/b/c/CLAUDE.md", "s/t/AGENTS.md"),
    ("a/b/c/d/AGENTS.md", "u/AGENTS.md"),
    ("a/AGENTS.md", "a/CLAUDE.md"),
)


@dataclass(frozen=True)
class Touch:
    """One tool call of the model: a file read (its own tool or ``cat``), or a directory
    searched (``grep``) or listed."""

    target: str  # relative to the repository
    kind: Literal["file", "dir"] = "file"
    style: Literal["tool", "shell"] = "tool"


@dataclass(frozen=True)
class Plan:
    before: tuple[Touch, ...]  # before the mid-run barrier
    after: tuple[Touch, ...]

    @property
    def touches(self) -> tuple[Touch, ...]:
        return (*self.before, *self.after)


# Per slot (the four CLIs of a round): different branches and depths, so each session is due
# files the others are not; each one's second half re-touches what the edits changed.
PLANS = (
    Plan(
        (Touch("a/b/y.py"), Touch("a/b/c/d/x.py")),
        (Touch("a/b/c/d/x.py"), Touch("u/w.py")),
    ),
    Plan(
        (Touch("s/t/z.py", style="shell"), Touch("a/b", "dir", "shell")),
        (Touch("a/b/c/d/x.py", style="shell"), Touch("s/t/z.py", style="shell")),
    ),
    Plan(
        (Touch("a/b/c/d/x.py"), Touch("s/t", "dir", "shell")),
        (Touch("s/t/z.py"), Touch("a/b/y.py", style="shell")),
    ),
    Plan(
        (Touch("u/w.py", style="shell"), Touch("a/b/q.py")),
        (Touch("a/b/q.py"), Touch("a/b/c/d/x.py", style="shell")),
    ),
)
EDITOR_PLAN = Plan(
    (Touch("a/b/c/d/x.py"), Touch("s/t/z.py")),
    (Touch("a/b/c/d/x.py"), Touch("u/w.py")),
)
# A run from another tree than the virtualenv's (PYTHONPATH set) hooks that tree's code too.
IMPORT_PATH = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
PROMPT = "Work through the files and stop."
REMOVED = "Instructions removed: {path}"
# Claude Code 2.1.332 watches every file it took as read, the nested CLAUDE.md files it loaded
# itself included, and when one changes on disk its next request carries its own note with the
# changed lines ("Note: PATH changed on disk since you last read it. ... Here are the relevant
# changes (shown with line numbers): 1<TAB>Rule ..."), which it may merge into the text of the
# hook's own message. That is the agent's diff, not a delivery of the file: the hook still sends
# the new text whole (a diff may be cut, or left out when many files changed), so a changed
# nested file that Claude Code loaded itself shows its new marker in that note as well. The
# notes' numbered lines are counted apart: each must show a change due by then.
CHANGE_NOTE = "changed on disk since you last read it"


def installed(agent: Agent) -> HookConfig:
    """The events, matchers and timeout ``hooks install`` writes, running this checkout's hook."""
    command = f"{HOOK} --agent {agent}"
    return HookConfig(
        tuple(Hook(e.event, command, e.matcher, TIMEOUT_SECONDS) for e in HOOK_EVENTS[agent])
    )


def slug(rel: str) -> str:
    return rel.replace("~/", "home_").replace("/", "_").replace(".", "_")


def marker(rel: str, version: int) -> str:
    # "MK_a_AGENTS_md_v1_" is no part of any other marker (the underscores close each field).
    return f"MK_{slug(rel)}_v{version}_"


# --- the repository ------------------------------------------------------------------------


@dataclass
class Entry:
    """One file of a chain as it stood: where, how the sidecar names it, its marker."""

    path: str  # absolute
    display: str
    marker: str


class Tree:
    """The generated repository and $DSH_HOME, each instruction file holding one marker."""

    def __init__(self, base: Path) -> None:
        self.repo = base / "repo"
        self.dsh = base / "dsh"
        self.home = base / "os-home"
        for directory in (self.repo / ".git", self.dsh, self.home):
            directory.mkdir(parents=True)
        self.versions: dict[str, int] = {}
        for rel, text in SOURCES.items():
            self.file(rel).parent.mkdir(parents=True, exist_ok=True)
            self.file(rel).write_text(text)
        for rel in FILES:
            self.write(rel)

    def file(self, rel: str) -> Path:
        return self.dsh / rel[2:] if rel.startswith("~/") else self.repo / rel

    def write(self, rel: str) -> None:
        """A new version of ``rel`` (its marker changes), or ``rel`` again after a delete."""
        self.versions[rel] = self.versions.get(rel, 0) + 1
        self.file(rel).write_text(f"Rule {marker(rel, self.versions[rel])}\n")

    def delete(self, rel: str) -> None:
        self.file(rel).unlink()

    def present(self) -> dict[str, str]:
        """Absolute path -> current marker of every instruction file on disk."""
        return {
            str(self.file(rel)): marker(rel, self.versions[rel])
            for rel in FILES
            if self.file(rel).exists()
        }

    def markers(self) -> dict[str, str]:
        """Every marker the tree ever held -> its file's absolute path."""
        return {
            marker(rel, v): str(self.file(rel))
            for rel in FILES
            for v in range(1, self.versions[rel] + 1)
        }

    def chain(self, directory: Path) -> list[Entry]:
        """The sidecar's chain for a touch in ``directory`` (what ``dsh-sidecar scopes``
        reports as kept), with each file's current marker."""
        load = load_document_chain(
            str(directory),
            InstructionSettings(),
            LOCAL_FS,
            dsh_home=str(self.dsh),
            os_home=str(self.home),
        )
        present = self.present()
        return [
            Entry(f.candidate.abs_path, f.candidate.display_path, present[f.candidate.abs_path])
            for f in load.kept
        ]

    def snapshot(self, plans: Sequence[Plan]) -> State:
        """The chain of every target of ``plans`` and of the session directory, now."""
        chains = {"": self.chain(self.repo)}
        for plan in plans:
            for touch in plan.touches:
                where = self.repo / touch.target
                chains[touch.target] = self.chain(where if touch.kind == "dir" else where.parent)
        return State(chains, self.present())


@dataclass(frozen=True)
class State:
    chains: dict[str, list[Entry]]  # target ("" for the session directory) -> its chain
    markers: dict[str, str]  # absolute path -> marker of each instruction file on disk

    @property
    def present(self) -> frozenset[str]:
        return frozenset(self.markers)


# --- what each session was shown -----------------------------------------------------------


@dataclass
class Session:
    name: str
    plan: Plan
    bodies: list[list[str]] = field(default_factory=list)  # per request: the texts it showed
    pending: list[list[str]] = field(default_factory=list)  # editor: dsh/context/pending texts
    failure: str = ""


@dataclass(frozen=True)
class Due:
    needle: str  # a marker, or a removal notice
    index: int  # the request that must hold it
    what: str


@dataclass
class Figures:
    due: int = 0
    on_time: int = 0
    late: int = 0
    lost: int = 0
    twice: int = 0
    own_notes: int = 0  # Claude Code's own change notes (CHANGE_NOTE), not counted as deliveries
    own_repeats: int = 0  # Claude Code's own loads of files the hook sent before (judge)
    problems: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        self.due += other.due
        self.on_time += other.on_time
        self.late += other.late
        self.lost += other.lost
        self.twice += other.twice
        self.own_notes += other.own_notes
        self.own_repeats += other.own_repeats
        self.problems += other.problems

    def line(self) -> str:
        return (
            f"files due {self.due}, on time {self.on_time}, late {self.late}, lost {self.lost}, "
            f"twice {self.twice}; Claude Code's own change notes {self.own_notes}, own repeats "
            f"{self.own_repeats}; other problems {len(self.problems)}"
        )


def dues(plan: Plan, before: State, after: State) -> list[Due]:
    """What each request must hold, walking the session's touches over the tree's states.

    At each touch: the change of every file the session was told that changed since (its new
    marker) or is gone (its removal), whatever the touch (the hook delivers changes at the next
    event that answers: docs/agents.md); then every file of the touched path's chain that the
    session was not told yet."""
    told: dict[str, Entry] = {}
    out: list[Due] = []

    def deliver(index: int, state: State, chain: list[Entry]) -> None:
        for path, entry in list(told.items()):
            if path not in state.present:
                out.append(Due(REMOVED.format(path=entry.display), index, entry.display))
                del told[path]
            elif state.markers[path] != entry.marker:
                told[path] = Entry(path, entry.display, state.markers[path])
                out.append(Due(state.markers[path], index, f"{entry.display}, changed"))
        for entry in chain:
            if entry.path not in told:
                out.append(Due(entry.marker, index, entry.display))
                told[entry.path] = entry

    deliver(0, before, before.chains[""])
    for k, touch in enumerate(plan.touches):
        state = before if k < len(plan.before) else after
        deliver(k + 1, state, state.chains[touch.target])
    return out


def in_note(text: str, needle: str) -> int:
    """How many times ``text`` shows ``needle`` as a changed line of Claude Code's own change
    note (a numbered line: ``3\tRule MK_..._``); the hook's texts never number their lines."""
    if CHANGE_NOTE not in text:
        return 0
    return len(re.findall(r"\d+\tRule " + re.escape(needle), text))


def delivered(text: str, needle: str) -> int:
    """How many times ``text`` delivers ``needle``: every occurrence but in a change note."""
    return text.count(needle) - in_note(text, needle)


def own_load(text: str, needle: str, path: str) -> int:
    """How many times ``text`` is Claude Code's own load of ``path`` showing ``needle``."""
    return text.count(f"Contents of {path}:\n\nRule {needle}")


def judge(session: Session, due: list[Due], where: dict[str, str]) -> Figures:
    """The figures of one session: ``due`` against its request bodies; ``where`` maps every
    marker the tree ever held to its file."""
    bodies = session.bodies
    figures = Figures()
    wanted = {d.needle: d for d in due}
    every_marker = list(where)
    # Claude Code loads a nested CLAUDE.md itself at its first read below it even when the
    # hook sent that file before, after a search or listing (where Claude Code loads nothing):
    # such a repeat of the same text shown in an earlier request is the agent's own and counted
    # apart; a load of a text not shown before (a file new to it, or changed since the hook sent
    # it, whose replacement the hook then leaves to it) is a delivery like any.
    repeats: dict[str, list[int]] = {}
    for needle, path in where.items():
        loads = [sum(own_load(t, needle, path) for t in texts) for texts in bodies]
        first = next((i for i, c in enumerate(loads) if c), None)
        shown_before = first is not None and any(
            d.needle == needle and d.index < first for d in due
        )
        if shown_before:
            repeats[needle] = loads
            figures.own_repeats += 1
    for d in due:
        counts = [sum(delivered(t, d.needle) for t in texts) for texts in bodies]
        if d.needle in repeats:
            counts = [c - r for c, r in zip(counts, repeats[d.needle], strict=True)]
        figures.due += 1
        if d.index >= len(counts):
            figures.lost += 1
            figures.problems.append(f"{session.name}: no request {d.index} for {d.what}")
            continue
        first = next((i for i, c in enumerate(counts) if c), None)
        if counts[d.index] == 1 and first == d.index:
            figures.on_time += 1
        elif first is None:
            figures.lost += 1
            figures.problems.append(f"{session.name}: {d.needle} ({d.what}) never came")
        elif first > d.index:
            figures.late += 1
            figures.problems.append(
                f"{session.name}: {d.needle} ({d.what}) due in request {d.index}, came in {first}"
            )
        elif first < d.index:
            figures.problems.append(
                f"{session.name}: {d.needle} ({d.what}) due in request {d.index}, came early "
                f"in {first}"
            )
        if counts[-1] != 1 and first is not None:
            figures.problems.append(
                f"{session.name}: {d.needle} ({d.what}) {counts[-1]} times in the last request"
            )
        if max(counts) > 1:
            figures.twice += 1
            figures.problems.append(f"{session.name}: {d.needle} ({d.what}) twice: {counts}")
    last = bodies[-1] if bodies else []
    for needle in every_marker:
        if needle not in wanted and any(delivered(t, needle) for t in last):
            figures.problems.append(f"{session.name}: {needle} was never due here but came")
    changed = {(d.index, d.needle) for d in due if d.what.endswith(", changed")}
    noted: set[str] = set()
    for index, texts in enumerate(bodies):
        for needle in every_marker:
            if needle not in noted and any(in_note(t, needle) for t in texts):
                noted.add(needle)
                figures.own_notes += 1
                # Claude Code's pass over its changed files has a time budget of its own (what
                # it did not examine waits for its next request), so a note may come later.
                if not any(n == needle and i <= index for i, n in changed):
                    figures.problems.append(
                        f"{session.name}: request {index} has Claude Code's own change note "
                        f"showing {needle}, whose change was not due by then"
                    )
    if session.pending:  # the editor: pending showed each due needle before the step took it
        for d in due:
            if d.index >= 1 and d.index - 1 < len(session.pending):
                shown = sum(t.count(d.needle) for t in session.pending[d.index - 1])
                if shown != 1:
                    figures.problems.append(
                        f"{session.name}: dsh/context/pending showed {d.needle} ({d.what}) "
                        f"{shown} times before request {d.index}"
                    )
    return figures


# --- running the sessions ------------------------------------------------------------------


def step_for(agent: Agent, touch: Touch, repo: Path) -> Step:
    if touch.kind == "dir":
        if agent == "gemini" and touch.style == "tool":
            return ToolCall("list_directory", {"dir_path": touch.target})
        return Shell(f"grep -rn value {touch.target}")
    if touch.style == "shell":
        return Shell(f"cat {touch.target}")
    # Claude Code's Read takes an absolute path; the others get the path as a user writes it.
    return ReadFile(str(repo / touch.target) if agent == "claude" else touch.target)


class Barrier:
    """The mid-run stop: the fake models hold each session's answer to the request after its
    first half of tool calls until every session is there, then the tree is changed."""

    def __init__(self, parties: int, change: Any) -> None:
        self._barrier = threading.Barrier(parties, action=change)

    def wait(self) -> None:
        self._barrier.wait(HANG_GUARD_S)

    def abort(self) -> None:
        self._barrier.abort()


class Script:
    """A policy for one session's fake model: its steps in order, waiting at the barrier."""

    def __init__(self, steps: list[Step], stop_at: int, barrier: Barrier) -> None:
        self.steps, self.stop_at, self.barrier = steps, stop_at, barrier
        self.answered = 0
        self.passed = False

    def __call__(self, request: RecordedRequest) -> Step:
        index = self.answered
        self.answered += 1
        if index == self.stop_at:
            self.barrier.wait()
            self.passed = True
        return self.steps[index] if index < len(self.steps) else Text(DONE_TEXT)


def run_cli(
    agent: Agent, session: Session, tree: Tree, home: Path, barrier: Barrier
) -> AgentRun | None:
    plan = session.plan
    steps = [step_for(agent, t, tree.repo) for t in plan.touches] + [Text("done")]
    script = Script(steps, len(plan.before), barrier)
    model = FakeModel().start()
    model.script(script)
    try:
        result = run_agent(
            agent,
            tree.repo,
            PROMPT,
            home=home,
            hooks=installed(agent),
            model=model,
            extra_env={"DSH_HOME": str(tree.dsh), **IMPORT_PATH},
            timeout=CLI_TIMEOUT_S,
        )
    except BaseException as error:
        session.failure = f"{session.name}: {error!r}"
        return None
    finally:
        model.stop()
        if not script.passed:
            barrier.abort()  # nobody waits for a session that will never come
    session.bodies = [texts_of(r) for r in result.main_requests]
    # Kept beside the test's other files, for reading what a failing session was sent.
    (home / "requests.json").write_text(
        json.dumps([r.body for r in result.main_requests], indent=1)
    )
    if result.exit_code != 0:
        session.failure = result.describe()
    return result


def message_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [
        block["text"]
        for m in messages
        for block in m.get("content", [])
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]


def run_editor(session: Session, tree: Tree, barrier: Barrier, log: Path) -> None:
    """An editor's agent loop over ``dsh-sidecar serve``: each read reported with
    ``dsh/tool/result``, pending asked, then the step prepared (what its model would be sent)."""
    server = Server(server_env(str(tree.dsh)), stderr=str(log))
    passed = False
    try:
        server.initialize(
            {
                "store": {"path": str(tree.dsh / "sessions.sqlite3")},
                "instructions": {"dshHome": str(tree.dsh)},
            }
        )
        sid = server.request("dsh/session/open", {"cwd": str(tree.repo)})["session"]["id"]
        shown: list[str] = []

        def step(number: int, prompt: dict[str, Any] | None) -> None:
            params: dict[str, Any] = {"sessionId": sid, "turn": 1, "step": number}
            if prompt is not None:
                params["prompt"] = prompt
            prepared = server.request("dsh/step/prepare", params)
            server.request("dsh/step/end", {"sessionId": sid, "turn": 1, "step": number})
            shown.extend(message_texts(prepared["messages"]))
            session.bodies.append(list(shown))

        step(1, {"text": PROMPT})
        for k, touch in enumerate(session.plan.touches):
            if k == len(session.plan.before):
                barrier.wait()
                passed = True
            server.notify(
                "dsh/tool/result",
                {
                    "sessionId": sid,
                    "token": f"read-{k}",
                    "name": "read",
                    "arguments": {"file_path": str(tree.repo / touch.target)},
                    "isError": False,
                },
            )
            pending = server.request("dsh/context/pending", {"sessionId": sid})
            session.pending.append(message_texts(pending["messages"]))
            step(k + 2, None)
        server.request("dsh/turn/end", {"sessionId": sid, "turn": 1, "reason": "completed"})
    except BaseException as error:
        session.failure = f"{session.name}: {error!r}"
    finally:
        if not passed:
            barrier.abort()
        server.close()


@pytest.fixture
def loaded_machine() -> Iterator[None]:
    """Processes spinning on every core for the whole test (ours, ended by pid)."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(SPINNERS)
    ]
    try:
        yield
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()


def change_mid_run(tree: Tree, round_: int, plans: list[Plan], box: list[State]) -> None:
    """At the barrier: this round's edits and deletes, then the tree's state after them."""
    for rel in MID_EDITS[round_ % len(MID_EDITS)]:
        tree.write(rel)
    for rel in MID_DELETES[round_ % len(MID_DELETES)]:
        tree.delete(rel)
    box.append(tree.snapshot(plans))


def sessions_json(tree: Tree) -> list[dict[str, Any]]:
    env = {**os.environ, "DSH_HOME": str(tree.dsh), "HOME": str(tree.home)}
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "sessions", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    sessions: list[dict[str, Any]] = json.loads(done.stdout)["sessions"]
    return sessions


def test_many_agents_and_an_editor_at_once_get_every_file_once_and_on_time(
    tmp_path: Path, loaded_machine: None
) -> None:
    tree = Tree(tmp_path)
    total = Figures()
    failures: list[str] = []
    for round_ in range(ROUNDS):
        mix = MIXES[round_ % len(MIXES)]
        if round_:  # between rounds: what was deleted comes back, new markers
            for rel in MID_DELETES[(round_ - 1) % len(MID_DELETES)]:
                tree.write(rel)
        plans = [*PLANS, EDITOR_PLAN]
        before = tree.snapshot(plans)
        after_box: list[State] = []
        change = functools.partial(change_mid_run, tree, round_, plans, after_box)
        barrier = Barrier(len(mix) + 1, change)
        sessions = [
            Session(f"r{round_}-{i}-{agent}", PLANS[i % len(PLANS)]) for i, agent in enumerate(mix)
        ]
        editor = Session(f"r{round_}-editor", EDITOR_PLAN)
        with ThreadPoolExecutor(len(mix) + 1) as pool:
            runs = [
                pool.submit(run_cli, agent, s, tree, tmp_path / f"home-{s.name}", barrier)
                for agent, s in zip(mix, sessions, strict=True)
            ]
            pool.submit(run_editor, editor, tree, barrier, tmp_path / f"serve-r{round_}.log")
        for run in runs:
            run.result()
        failures += [s.failure for s in [*sessions, editor] if s.failure]
        if failures or not after_box:
            break
        figures = Figures()
        every = tree.markers()
        for session in [*sessions, editor]:
            figures.add(judge(session, dues(session.plan, before, after_box[0]), every))
        print(f"round {round_} ({', '.join(mix)} + editor): {figures.line()}")
        for problem in figures.problems:
            print("  ", problem)
        total.add(figures)
        listed_sessions = sessions_json(tree)
        agents = sorted(str(s.get("agent")) for s in listed_sessions if s.get("agent"))
        if agents != sorted(a for r in range(round_ + 1) for a in MIXES[r % len(MIXES)]):
            total.problems.append(f"round {round_}: the store lists agent sessions {agents}")
        for listed in listed_sessions:
            if listed.get("pending") or listed.get("waitingTouches"):
                total.problems.append(
                    f"round {round_}: session {listed['id']} ended with pending "
                    f"{listed.get('pending')} and waiting {listed.get('waitingTouches')}"
                )
    print(f"all rounds: {total.line()}")
    assert not failures, "\n\n".join(failures)
    assert not total.problems, "\n".join(total.problems)
    assert total.due and total.on_time == total.due, total.line()
    log = tree.dsh / "log" / "hooks.log"
    assert not log.exists(), log.read_text()

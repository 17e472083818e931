"""A hook event works itself out without the store's write lock (issue 31): a hook stuck reading
an instruction file holds up no other writer, and the event still delivers its answer once.

Two hooks run in this process on one real store, each with its own ``Store`` as two hook processes
would have; the slow reader is a filesystem seam whose ``stat`` of one file waits for the test.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.sessionkit import check_store_consistent

from dsh_sidecar.config import Settings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.hooks.answer import EventRun
from dsh_sidecar.hooks.config import HookConfig
from dsh_sidecar.hooks.main import parse_event
from dsh_sidecar.hooks.runtime import handle
from dsh_sidecar.sessions.scratch import OFFER_PREFIX
from dsh_sidecar.sessions.store import Store

WAIT_S = 60  # only bounds a test that fails (a thread that never gets where it should)


class GatedFileSystem(LocalFileSystem):
    """The local filesystem, but a ``stat`` of ``gated`` waits until the test opens the gate."""

    def __init__(self, gated: str) -> None:
        self.gated = gated
        self.reached = threading.Event()
        self.gate = threading.Event()

    def stat(self, path: str) -> os.stat_result:
        if path == self.gated and not self.gate.is_set():
            self.reached.set()
            assert self.gate.wait(WAIT_S), "the test never opened the gate"
        return super().stat(path)


class Tree:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "proj"
        (self.root / ".git").mkdir(parents=True)
        for rel, text in {
            "AGENTS.md": "ROOT-AGENTS\n",
            "pkg/AGENTS.md": "PKG-AGENTS\n",
            "pkg/x.py": "x = 1\n",
        }.items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(text)
        self.home = tmp / "dsh"
        self.home.mkdir()
        self.env = {
            "DSH_HOME": str(self.home),
            "HOME": str(tmp / "userhome"),
            "DSH_TEST_STORE_NO_FSYNC": "1",
        }
        self.db = self.home / "sessions.sqlite3"

    def event(self, sid: str, name: str, **fields: Any) -> Any:
        body = {"hook_event_name": name, "session_id": sid, "cwd": str(self.root), **fields}
        return parse_event("claude", body)

    def read(self, sid: str, rel: str, tool_id: str) -> Any:
        path = str(self.root / rel)
        return self.event(
            sid,
            "PostToolUse",
            tool_name="Read",
            tool_input={"file_path": path},
            tool_use_id=tool_id,
            tool_response={"file": {"filePath": path}},
        )

    def answer(self, event: Any, fs: GatedFileSystem | None = None) -> str:
        """One event answered by a hook of its own (its own store connection); its text.

        A hook held in a read by ``fs`` gets a busy timeout as long as the test's own bound: the
        timeout counts the whole event (``runtime.handle``), the time held included, which is
        however long this machine takes to answer the other hooks meanwhile. With 3 s, a machine
        that took that long would make the held hook give up (``StoreBusy``) instead of working
        its event out again.
        """
        config = HookConfig(Settings(), self.env, "all", fs or LocalFileSystem())
        out = io.BytesIO()
        store = Store(str(self.db), busy_timeout_ms=3_000 if fs is None else WAIT_S * 1000)
        try:
            handle(store, event, config, lambda data: print_to(out, data))
        finally:
            store.close()
        if not out.getvalue():
            return ""
        text = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
        assert isinstance(text, str)
        return text

    def offers(self) -> list[str]:
        with sqlite3.connect(self.db) as db:
            rows = db.execute(
                "SELECT key FROM hook_events WHERE key LIKE ?", (OFFER_PREFIX + "%",)
            ).fetchall()
        return [r[0] for r in rows]


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


def print_to(out: io.BytesIO, data: bytes) -> None:
    out.write(data)


def write_lock_is_free(db: Path) -> bool:
    """Whether another connection could take the store's write lock right now."""
    conn = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def test_a_hook_stuck_on_a_slow_read_holds_up_no_other_writer(tree: Tree) -> None:
    assert "ROOT-AGENTS" in tree.answer(tree.event("a", "SessionStart", source="startup"))
    slow = GatedFileSystem(str(tree.root / "pkg" / "AGENTS.md"))
    answers: list[str] = []
    stuck = threading.Thread(
        target=lambda: answers.append(tree.answer(tree.read("a", "pkg/x.py", "t1"), slow))
    )
    stuck.start()
    try:
        assert slow.reached.wait(WAIT_S), "the hook never read pkg/AGENTS.md"
        # The hook of session a is inside its read: the lock is free, and another agent's hook
        # (session b) answers and records its event meanwhile.
        assert write_lock_is_free(tree.db)
        assert "ROOT-AGENTS" in tree.answer(tree.event("b", "SessionStart", source="startup"))
        assert tree.answer(tree.event("b", "SessionStart", source="startup")) == ""  # recorded
        assert stuck.is_alive()  # still inside its read all along
    finally:
        slow.gate.set()
        stuck.join(WAIT_S)
    assert answers and "PKG-AGENTS" in answers[0]
    # Recorded once: the same file read again delivers nothing, and no offer is left behind.
    assert "PKG-AGENTS" not in tree.answer(tree.read("a", "pkg/x.py", "t2"))
    assert tree.offers() == []
    assert not (tree.home / "log" / "hooks.log").exists()


def test_a_session_written_while_its_hook_read_is_worked_out_again(tree: Tree) -> None:
    """Another hook of the same session records first: the slow one's copy is out of date, so it
    works the event out again on the new state instead of recording on top of it."""
    tree.answer(tree.event("a", "SessionStart", source="startup"))
    slow = GatedFileSystem(str(tree.root / "pkg" / "AGENTS.md"))
    answers: list[str] = []
    stuck = threading.Thread(
        target=lambda: answers.append(tree.answer(tree.read("a", "pkg/x.py", "t1"), slow))
    )
    stuck.start()
    try:
        assert slow.reached.wait(WAIT_S)
        quick = tree.answer(tree.read("a", "pkg/x.py", "t0"))
        assert "PKG-AGENTS" in quick
    finally:
        slow.gate.set()
        stuck.join(WAIT_S)
    # The slow hook's first answer (PKG-AGENTS) was worked out before the quick one recorded
    # it; worked out again, it has nothing left to say.
    assert answers == [""]
    assert "PKG-AGENTS" not in tree.answer(tree.read("a", "pkg/x.py", "t2"))


class _Held:
    """What ``check_store_consistent`` reads: a ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store


def test_the_copy_gives_the_answers_the_engine_gives_on_the_store_itself(tmp_path: Path) -> None:
    """The same scripted session, answered by ``handle`` (the engine on a copy, its writes
    applied after) and by the engine run straight on a store inside one transaction (as before):
    the same texts, event after event, and a store whose surface and inbox are the folds of its
    log."""
    tree = Tree(tmp_path)
    (tree.root / "other").mkdir()
    (tree.root / "other" / "AGENTS.md").write_text("OTHER-AGENTS\n")
    (tree.root / "other" / "y.py").write_text("y = 1\n")
    direct = Store(str(tmp_path / "direct.sqlite3"))
    config = HookConfig(Settings(), tree.env, "all")

    def straight(event: Any) -> str:
        with direct.transaction():
            shaped = EventRun(direct, event, config).answer([])
        return shaped.text if shaped is not None else ""

    def edit(rel: str, text: str | None) -> None:
        path = tree.root / rel
        if text is None:
            path.unlink()
        else:
            path.write_text(text)

    script: list[tuple[str, Any]] = [
        ("event", tree.event("s", "SessionStart", source="startup")),
        ("event", tree.read("s", "pkg/x.py", "t1")),
        ("edit", ("pkg/AGENTS.md", "PKG-AGENTS, EDITED\n")),
        ("event", tree.read("s", "pkg/x.py", "t2")),
        ("event", tree.event("s", "UserPromptSubmit", prompt="go on")),
        ("event", tree.read("s", "other/y.py", "t3")),
        ("edit", ("other/AGENTS.md", None)),
        ("event", tree.read("s", "other/y.py", "t4")),
        ("event", tree.event("s", "SessionStart", source="compact")),
        ("event", tree.event("s", "UserPromptSubmit", prompt="again")),
        ("event", tree.read("s", "pkg/x.py", "t5")),
    ]
    texts: list[tuple[str, str]] = []
    for kind, step in script:
        if kind == "edit":
            edit(*step)
            continue
        texts.append((tree.answer(step), straight(step)))
    assert [a for a, _ in texts] == [b for _, b in texts]
    assert sum(1 for a, _ in texts if a) >= 5  # the script does get answers
    held = Store(str(tree.db))
    try:
        log = check_store_consistent(_Held(held), "claude:s")  # type: ignore[arg-type]
        assert [e.type for e in log] == [e.type for e in direct.events("claude:s")]
    finally:
        held.close()
        direct.close()


def test_a_copy_kept_from_the_last_event_never_outlives_another_processs_write(
    tree: Tree,
) -> None:
    """This process keeps the copy its last event left (``runtime._Copies``); another process
    records an event of the same session in between, and the next event here answers from what
    the store holds: the kept copy is not served (its version is not the store's), and were it
    served, the check before the record would send the event back to a fresh copy."""
    assert "ROOT-AGENTS" in tree.answer(tree.event("a", "SessionStart", source="startup"))
    path = str(tree.root / "pkg" / "x.py")
    payload = {
        "hook_event_name": "PostToolUse",
        "session_id": "a",
        "cwd": str(tree.root),
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_use_id": "t1",
        "tool_response": {"file": {"filePath": path}},
    }
    other = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "hook", "--agent", "claude", "--mode", "all"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**tree.env, "DSH_HOOK_RESIDENT": "0", "PATH": os.environ.get("PATH", "")},
        timeout=60,
        check=True,
    )
    assert b"PKG-AGENTS" in other.stdout  # delivered and recorded by the other process
    assert "PKG-AGENTS" not in tree.answer(tree.read("a", "pkg/x.py", "t2"))


def test_the_copies_kept_are_the_last_few_whatever_store_they_came_from(tmp_path: Path) -> None:
    from dsh_sidecar.hooks.runtime import _COPIES, _Copies

    trees = [Tree(tmp_path / str(i)) for i in range(_Copies.LIMIT + 3)]
    for t in trees:
        assert "ROOT-AGENTS" in t.answer(t.event("s", "SessionStart", source="startup"))
    kept = list(_COPIES._kept)
    assert len(kept) == _Copies.LIMIT
    assert kept[-1] == (str(trees[-1].db), "claude:s")
    # The first tree's copy was dropped; its session goes on from a fresh one.
    assert "PKG-AGENTS" in trees[0].answer(trees[0].read("s", "pkg/x.py", "t1"))


def test_a_session_deleted_and_made_again_to_the_same_version_is_not_served_from_its_old_copy(
    tree: Tree,
) -> None:
    """A version counts what was written to the session; a session deleted and made again by
    the same events counts the same. Its making (``created_at``) is part of the version, so
    the copy this process kept of the old one is not taken for the new one."""
    assert "ROOT-AGENTS" in tree.answer(tree.event("s", "SessionStart", source="startup"))
    store = Store(str(tree.db))
    try:
        assert store.delete_session("claude:s")
    finally:
        store.close()
    (tree.root / "AGENTS.md").write_text("ROOT-AGENTS v2\n")
    start = {
        "hook_event_name": "SessionStart",
        "session_id": "s",
        "cwd": str(tree.root),
        "source": "startup",
    }
    other = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "hook", "--agent", "claude", "--mode", "all"],
        input=json.dumps(start).encode(),
        capture_output=True,
        env={**tree.env, "DSH_HOOK_RESIDENT": "0", "PATH": os.environ.get("PATH", "")},
        timeout=60,
        check=True,
    )
    assert b"ROOT-AGENTS v2" in other.stdout  # the session made again, by another process
    # Read from the old copy, the new text would be a change the session had not been told.
    assert tree.answer(tree.event("s", "UserPromptSubmit", prompt="go on")) == ""


def test_the_copy_kept_serves_the_next_event_while_nothing_was_written(tree: Tree) -> None:
    from dsh_sidecar.hooks.runtime import _COPIES

    assert "ROOT-AGENTS" in tree.answer(tree.event("s", "SessionStart", source="startup"))
    store = Store(str(tree.db))
    try:
        copy = _COPIES.take(store, "claude:s")
        assert copy is not None  # current: the next event starts from it, not from a new copy
        copy.close()
        assert _COPIES.take(store, "claude:s") is None  # handed out once
    finally:
        store.close()

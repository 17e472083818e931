"""``dsh-sidecar sessions``: the stored sessions, read without writing (sessions/listing.py)."""

from __future__ import annotations

import io
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.cli import main
from dsh_sidecar.hooks.main import main as hook_main
from dsh_sidecar.model import Message, SessionHeader
from dsh_sidecar.sessions.inbox import splice_draft
from dsh_sidecar.sessions.store import Store

Capture = pytest.CaptureFixture[bytes]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "os-home"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / "pkg").mkdir()
    (project / "AGENTS.md").write_text("root rule\n")
    (project / "pkg" / "AGENTS.md").write_text("pkg rule\n")
    (project / "pkg" / "x.py").write_text("x = 1\n")
    return tmp_path


def run(capsysbinary: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


def hook(agent: str, event: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    assert (
        hook_main(["--agent", agent], stdin=io.BytesIO(json.dumps(event).encode()), stdout=out) == 0
    )
    return out.getvalue()


def test_without_a_store_nothing_is_created(env: Path, capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary, "sessions")
    assert (code, err) == (0, "")
    assert out == f"no sessions: there is no session store at {env}/dsh/sessions.sqlite3 yet\n"
    assert not (env / "dsh").exists()
    code, out, _ = run(capsysbinary, "sessions", "--json")
    assert json.loads(out) == {"store": f"{env}/dsh/sessions.sqlite3", "sessions": []}
    assert not (env / "dsh").exists()


def test_an_agents_session_and_what_it_was_told(env: Path, capsysbinary: Capture) -> None:
    cwd = str(env / "p")
    hook(
        "codex",
        {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": cwd, "source": "startup"},
    )
    answer = hook(
        "codex",
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s1",
            "cwd": cwd,
            "tool_name": "Bash",
            "tool_input": {"command": "cat pkg/x.py"},
            "tool_use_id": "call_1",
        },
    )
    assert b"pkg rule" in answer
    store = env / "dsh" / "sessions.sqlite3"
    before = store.read_bytes()
    code, out, _ = run(capsysbinary, "sessions")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("codex:s1  codex  ") and lines[0].endswith(f" UTC  {cwd}")
    # Codex loads the root AGENTS.md itself (recorded as seen); the hook sent pkg/AGENTS.md.
    assert lines[1:] == ["  told     AGENTS.md, pkg/AGENTS.md", "  pending  nothing"]
    code, out, _ = run(capsysbinary, "sessions", "--json", "--agent", "codex")
    (session,) = json.loads(out)["sessions"]
    assert {k: session[k] for k in ("id", "agent", "agentSession", "cwd", "pending")} == {
        "id": "codex:s1",
        "agent": "codex",
        "agentSession": "s1",
        "cwd": cwd,
        "pending": [],
    }
    assert [c["path"] for c in session["told"]] == ["AGENTS.md", "pkg/AGENTS.md"]
    assert (
        run(capsysbinary, "sessions", "--agent", "claude")[1]
        == f"no sessions of claude in {store}\n"
    )
    assert store.read_bytes() == before  # read without writing


def test_pending_messages_and_a_panel_session(env: Path, capsysbinary: Capture) -> None:
    store_path = env / "dsh" / "sessions.sqlite3"
    store = Store(str(store_path), durable=False)
    try:
        store.create_session(
            SessionHeader("panel-1", 1_700_000_000_000, str(env / "p"), title="Fix")
        )
        store.create_session(
            SessionHeader(
                "claude:a",
                1_700_000_001_000,
                str(env / "p"),
                agent="claude",
                agent_session="a",
                parent_id="claude:root",
            )
        )
        pending = Message.user(
            ["<system-reminder>\nx\n</system-reminder>"],
            {
                "kind": "agent-instructions",
                "form": "instructions",
                "changes": [
                    {
                        "action": "set",
                        "scope": "pkg\u0000AGENTS.md",
                        "path": "pkg/AGENTS.md",
                        "digest": "0" * 40,
                    },
                    {"action": "remove", "scope": "old\u0000AGENTS.md", "path": "old/AGENTS.md"},
                ],
            },
        )
        other = Message.user(["now"], {"kind": "time-context"})
        draft = splice_draft([], [pending, other])
        assert draft is not None
        store.append("panel-1", [draft], inbox=[pending, other])
    finally:
        store.close()
    code, out, _ = run(capsysbinary, "sessions")
    assert code == 0
    assert out.splitlines() == [
        f"claude:a  claude  2023-11-14 22:13:21 UTC  {env}/p",
        "  subagent of claude:root",
        "  told     no instruction files",
        "  pending  nothing",
        f"panel-1  panel  2023-11-14 22:13:20 UTC  {env}/p",
        "  title    Fix",
        "  told     no instruction files",
        "  pending  pkg/AGENTS.md, old/AGENTS.md (removed); time-context",
    ]
    _, out, _ = run(capsysbinary, "sessions", "--json")
    sessions = json.loads(out)["sessions"]
    assert sessions[1]["pending"] == [pending.to_json(), other.to_json()]
    assert sessions[0]["parentId"] == "claude:root"


@pytest.mark.no_invariant_check
def test_an_older_store_is_listed_without_migrating_it(env: Path, capsysbinary: Capture) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "store-schema-2.sqlite3"
    store = env / "dsh" / "sessions.sqlite3"
    store.parent.mkdir()
    store.write_bytes(fixture.read_bytes())
    code, out, _ = run(capsysbinary, "sessions")
    assert code == 0 and "  panel  " in out.splitlines()[0]
    assert store.read_bytes() == fixture.read_bytes()


@pytest.mark.no_invariant_check
@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: p.write_bytes(b"not a database at all" * 100), "file is not a database"),
        (lambda p: p.mkdir(), "not a regular file"),
    ],
)
def test_an_unreadable_store(env: Path, capsysbinary: Capture, setup: Any, message: str) -> None:
    store = env / "dsh" / "sessions.sqlite3"
    store.parent.mkdir()
    setup(store)
    code, out, err = run(capsysbinary, "sessions")
    assert (code, out) == (2, "")
    assert (
        err.startswith(f"dsh-sidecar: cannot read the session store {store}: ") and message in err
    )


@pytest.mark.no_invariant_check
def test_a_newer_store_is_refused(env: Path, capsysbinary: Capture) -> None:
    store = env / "dsh" / "sessions.sqlite3"
    store.parent.mkdir()
    db = sqlite3.connect(store)
    db.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '99');"
    )
    db.close()
    code, _, err = run(capsysbinary, "sessions")
    assert code == 2 and "newer than this dsh-sidecar supports" in err
    assert os.listdir(store.parent) == ["sessions.sqlite3"]

"""The hook on payloads recorded from the real CLIs (tests/fixtures/agent_hooks, by the harness):
each adapter reads them, and a session replayed from them gets what it lacks."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.hooks.main import main, parse_event
from dsh_sidecar.sessions.store import Store

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "agent_hooks"


def recorded(agent: str, name: str, root: Path) -> dict[str, Any]:
    text = (RECORDED / agent / f"{name}.json").read_text()
    data: dict[str, Any] = json.loads(text.replace("$ROOT", str(root)))
    return data


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("ROOT-AGENTS\n")
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE\n")
    (repo / "pkg/sub").mkdir(parents=True)
    (repo / "pkg/AGENTS.md").write_text("PKG-AGENTS\n")
    (repo / "pkg/sub/CLAUDE.md").write_text("SUB-CLAUDE\n")
    (repo / "pkg/sub/x.py").write_text("VALUE = 1\n")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_TEST_STORE_NO_FSYNC", "1")
    return tmp_path


def hook(agent: str, payload: dict[str, Any]) -> str | None:
    out = io.BytesIO()
    assert main(["--agent", agent], io.BytesIO(json.dumps(payload).encode()), out) == 0
    if not out.getvalue():
        return None
    body = json.loads(out.getvalue())["hookSpecificOutput"]
    assert body["hookEventName"] == payload["hook_event_name"]
    return str(body["additionalContext"])


def test_claude_payloads_parse_to_their_events(root: Path) -> None:
    repo = root / "repo"
    start = parse_event("claude", recorded("claude", "SessionStart-read", root))
    assert (start.kind, start.source, start.cwd) == ("start", "startup", str(repo))
    read = parse_event("claude", recorded("claude", "PostToolUse-read", root))
    assert (read.kind, read.touched) == ("after-tool", (str(repo / "pkg/sub/x.py"),))
    assert read.tool_use_id and read.agent_id is None
    write = parse_event("claude", recorded("claude", "PreToolUse-write", root))
    assert write.kind == "pre-tool" and write.touched
    prompt = parse_event("claude", recorded("claude", "UserPromptSubmit-read", root))
    assert prompt.kind == "prompt" and prompt.prompt
    sub = parse_event("claude", recorded("claude", "PostToolUse-subagent", root))
    assert (sub.agent_id, sub.agent_type) == ("aec599d160312aa5b", "general-purpose")
    assert sub.touched == (str(repo / "pkg/sub/x.py"),)
    started = parse_event("claude", recorded("claude", "SubagentStart-subagent", root))
    assert (started.kind, started.agent_id) == ("start", "aec599d160312aa5b")
    loaded = parse_event("claude", recorded("claude", "InstructionsLoaded-subagent-2", root))
    assert (loaded.kind, loaded.touched) == ("loaded", (str(repo / "pkg/sub/CLAUDE.md"),))


def test_codex_payloads_parse_shell_reads_and_patches(root: Path) -> None:
    repo = root / "repo"
    read = parse_event("codex", recorded("codex", "PostToolUse-read", root))
    assert (read.kind, read.touched) == ("after-tool", (str(repo / "pkg/sub/x.py"),))
    edit = parse_event("codex", recorded("codex", "PostToolUse-edit", root))
    assert edit.touched == (str(repo / "pkg/sub/x.py"),)
    new = parse_event("codex", recorded("codex", "PostToolUse-write", root))
    assert new.touched == (str(repo / "pkg/sub/new.py"),)


def test_a_replayed_claude_session_with_a_subagent(root: Path) -> None:
    first = hook("claude", recorded("claude", "SessionStart-read", root))
    assert first is not None and "ROOT-AGENTS" in first and "ROOT-CLAUDE" not in first
    read = hook("claude", recorded("claude", "PostToolUse-read", root))
    assert read is not None and "PKG-AGENTS" in read and "SUB-CLAUDE" not in read
    assert hook("claude", recorded("claude", "PostToolUse-read", root)) is None  # retried
    started = hook("claude", recorded("claude", "SubagentStart-subagent", root))
    assert started is not None and "ROOT-AGENTS" in started  # the child's own baseline
    # Claude reports loading pkg/sub/CLAUDE.md for the subagent: recorded, never sent.
    assert hook("claude", recorded("claude", "InstructionsLoaded-subagent-2", root)) is None
    sub = hook("claude", recorded("claude", "PostToolUse-subagent", root))
    assert sub is not None and "PKG-AGENTS" in sub and "SUB-CLAUDE" not in sub
    store = Store(str(root / "dsh" / "sessions.sqlite3"))
    sessions = {h.id: h for h in store.list_sessions()}
    parent = "claude:84954365-c185-4da2-8de2-91fef7ba619c"
    child = "claude:5674baad-67b3-4d7e-9942-6dc91bd86279:aec599d160312aa5b"
    assert sessions[parent].agent == "claude"
    assert sessions[child].parent_id == "claude:5674baad-67b3-4d7e-9942-6dc91bd86279"
    store.close()


def test_a_replayed_codex_session(root: Path) -> None:
    first = hook("codex", recorded("codex", "SessionStart-read", root))
    assert first is not None and "ROOT-CLAUDE" in first and "ROOT-AGENTS" not in first
    read = hook("codex", recorded("codex", "PostToolUse-read", root))
    assert read is not None and "PKG-AGENTS" in read and "SUB-CLAUDE" in read


def test_gemini_payloads_parse_to_their_events(root: Path) -> None:
    repo = root / "repo"
    start = parse_event("gemini", recorded("gemini", "SessionStart-read", root))
    assert (start.kind, start.source) == ("start", "startup")
    prompt = parse_event("gemini", recorded("gemini", "BeforeAgent-read", root))
    assert (prompt.kind, prompt.prompt) == ("prompt", "Read pkg/sub/x.py.")
    read = parse_event("gemini", recorded("gemini", "AfterTool-read", root))
    assert (read.kind, read.touched) == ("after-tool", (str(repo / "pkg/sub/x.py"),))
    assert read.tool_use_id is not None  # made from the call's timestamp, tool and input
    write = parse_event("gemini", recorded("gemini", "AfterTool-write", root))
    assert write.touched == (str(repo / "pkg/sub/new.py"),)
    edit = parse_event("gemini", recorded("gemini", "AfterTool-edit", root))
    assert edit.touched == (str(repo / "pkg/sub/x.py"),)
    assert parse_event("gemini", recorded("gemini", "AfterTool-missing", root)).touched == ()
    assert parse_event("gemini", recorded("gemini", "AfterTool-shell", root)).touched == ()


def test_a_failed_codex_read_touches_nothing(root: Path) -> None:
    assert parse_event("codex", recorded("codex", "PostToolUse-missing", root)).touched == ()


def test_a_replayed_gemini_session(root: Path) -> None:
    first = hook("gemini", recorded("gemini", "SessionStart-read", root))
    assert first is not None and "ROOT-AGENTS" in first and "ROOT-CLAUDE" in first
    assert hook("gemini", recorded("gemini", "BeforeAgent-read", root)) is None
    read = hook("gemini", recorded("gemini", "AfterTool-read", root))
    assert read is not None and "PKG-AGENTS" in read and "SUB-CLAUDE" in read
    assert hook("gemini", recorded("gemini", "AfterTool-read", root)) is None

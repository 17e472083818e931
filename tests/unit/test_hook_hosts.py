"""A host is never mistaken for another (issue 32, deliver 7): a hook installed for Claude Code is
run by GitHub Copilot CLI too (the project's ``.claude/settings.json``, in a trusted folder),
each with its own payload. The payload names the host; the host's record reads it, shapes the
answer and keys the session, so nothing is delivered twice or into another host's session.

Payload shapes: docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102 (as run), and
Claude Code's recorded in tests/fixtures/agent_hooks/claude.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.hooks.host import host_of
from dsh_sidecar.hooks.main import main, parse_event
from dsh_sidecar.hooks.trust import strip_comments, trust_here

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_hooks" / "claude"
SID = "8fd4c38e-84f2-4e4f-9975-0dbe2bd7e0ba"
SUB = "be171259-e4a9-4583-b95f-a48fc3dd7e5e"


def copilot(event: str, **fields: Any) -> dict[str, Any]:
    """A Claude-shaped hook's payload as Copilot CLI 1.0.102 sends it."""
    return {
        "hook_event_name": event,
        "session_id": SID,
        "timestamp": "2026-12-04T23:44:11.139Z",
        "cwd": "/work/repo",
        **fields,
    }


def claude(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "hook_event_name": event,
        "session_id": SID,
        "transcript_path": f"/home/u/.claude/projects/p/{SID}.jsonl",
        "cwd": "/work/repo",
        **fields,
    }


COPILOT_SUBAGENT_START = {  # its own payload, handed to a Claude-shaped SubagentStart hook
    "sessionId": SID,
    "timestamp": 1796427851402,
    "cwd": "/work/repo",
    "transcriptPath": f"/home/u/.copilot/session-state/{SID}/events.jsonl",
    "agentName": "explore",
    "agent_id": SUB,
    "agent_type": "explore",
    "parent_agent_id": SID,
}


def test_every_recorded_claude_code_payload_is_claude_code_s() -> None:
    payloads = [json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))]
    assert len(payloads) > 80
    assert {host_of("claude", p) for p in payloads} == {"claude"}


@pytest.mark.parametrize(
    "payload",
    [
        copilot("SessionStart", source="new", initial_prompt="hi"),
        copilot(
            "PostToolUse",
            tool_name="Read",
            tool_input={"path": "/work/repo/x.py"},
            tool_result={"result_type": "success", "text_result_for_llm": "x"},
        ),
        # A turn's end carries a transcript path: the timestamp still names Copilot.
        copilot("Stop", transcript_path="/t.jsonl", stop_reason="end_turn"),
        COPILOT_SUBAGENT_START,
    ],
)
def test_copilot_cli_payloads_run_by_a_claude_hook_are_copilot_s(payload: dict[str, Any]) -> None:
    assert host_of("claude", payload) == "copilot-cli"
    assert parse_event("claude", payload).agent == "copilot-cli"


def test_only_claude_code_s_hooks_are_run_by_other_hosts() -> None:
    payload = copilot("PostToolUse", tool_name="Read", tool_input={"path": "x"})
    assert host_of("codex", payload) == "codex"
    assert host_of("copilot-cli", payload) == "copilot-cli"


def test_copilot_events_read_with_claude_s_tool_names_and_its_own_fields(tmp_path: Path) -> None:
    read = parse_event(
        "copilot-cli",
        copilot("PostToolUse", tool_name="Read", tool_input={"path": "pkg/x.py"}),
    )
    assert (read.kind, read.touched) == ("after-tool", ("/work/repo/pkg/x.py",))
    assert not read.scanned  # Copilot loads nested files itself after a view
    # No tool-use id: the timestamp, tool and input stand for one, so a second hook that Copilot
    # runs for the same call (installed for Claude Code too) is the same call.
    assert read.tool_use_id and read.tool_use_id.startswith("copilot-cli-")
    (tmp_path / "lib").mkdir()
    for paths in ("lib", ["lib"]):  # its grep's paths: one path or a list
        grep = copilot("PostToolUse", tool_name="Grep", tool_input={"pattern": "A", "paths": paths})
        event = parse_event("copilot-cli", {**grep, "cwd": str(tmp_path)})
        assert event.touched == (f"{tmp_path}/lib/",) and event.scanned == {f"{tmp_path}/lib/"}
    shell = parse_event(
        "copilot-cli",
        copilot("PostToolUse", tool_name="Bash", tool_input={"command": "cat /etc/hostname"}),
    )
    assert shell.scanned == frozenset(shell.touched)
    # A prompt event answers nothing: with several hooks only the last one's text arrives.
    assert parse_event("copilot-cli", copilot("UserPromptSubmit", prompt="hi")).kind == "other"


def test_a_copilot_subagent_s_events_belong_to_a_child_of_the_main_session() -> None:
    start = parse_event("claude", COPILOT_SUBAGENT_START)
    assert (start.name, start.kind, start.session_id, start.agent_id) == (
        "SubagentStart",
        "start",
        SID,
        SUB,
    )
    inside = copilot(
        "PostToolUse",
        session_id=SUB,
        agent_id=SUB,
        agent_type="explore",
        parent_agent_id=SID,
        tool_name="Bash",
        tool_input={"command": "ls"},
    )
    event = parse_event("copilot-cli", inside)
    assert (event.session_id, event.agent_id) == (SID, SUB)


class Project:
    """One project; hooks run in this process with their own DSH_HOME."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "repo"
        (self.root / ".git").mkdir(parents=True)
        (self.root / "AGENTS.md").write_text("Root ROOT-r1\n")
        (self.root / "lib").mkdir()
        (self.root / "lib" / "AGENTS.md").write_text("Lib LIB-l1\n")
        (self.root / "lib" / "y.py").write_text("y = 2\n")
        (tmp / "dsh").mkdir()
        (tmp / "dsh" / "AGENTS.md").write_text("User USER-u1\n")
        self.store = tmp / "dsh" / "sessions.sqlite3"

    def hook(self, agent: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        out = io.BytesIO()
        data = {**payload, "cwd": str(self.root)}
        assert main(["--agent", agent], io.BytesIO(json.dumps(data).encode()), out) == 0
        return json.loads(out.getvalue()) if out.getvalue() else None

    def sessions(self) -> list[str]:
        with sqlite3.connect(self.store) as db:
            return sorted(row[0] for row in db.execute("SELECT id FROM sessions"))


@pytest.fixture(autouse=True)
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_TEST_STORE_NO_FSYNC", "1")


def test_copilot_is_answered_in_its_shape_and_kept_in_its_own_sessions(tmp_path: Path) -> None:
    project = Project(tmp_path)
    start = project.hook("claude", copilot("SessionStart", source="new"))
    assert start is not None and set(start) == {"additionalContext"}  # top level only
    assert "USER-u1" in start["additionalContext"]
    assert "ROOT-r1" not in start["additionalContext"]  # Copilot loads its root AGENTS.md
    shell = copilot("PostToolUse", tool_name="Bash", tool_input={"command": "cat lib/y.py"})
    after = project.hook("claude", shell)
    assert after is not None and "LIB-l1" in after["additionalContext"]
    # The same call, run again by the hook installed for Copilot CLI itself: nothing twice.
    assert project.hook("copilot-cli", shell) is None
    # Claude Code with the very same session id is another session, with a baseline of its own.
    claude_start = project.hook("claude", claude("SessionStart", source="startup"))
    assert claude_start is not None and set(claude_start) == {"hookSpecificOutput"}
    assert "USER-u1" in claude_start["hookSpecificOutput"]["additionalContext"]
    assert project.sessions() == [f"claude:{SID}", f"copilot-cli:{SID}"]


def test_copilot_folder_trust_is_read_from_its_config_with_comments(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = tmp_path / "work" / "repo"
    env: dict[str, str] = {}
    assert not trust_here("copilot-cli", "project", str(root), env, str(home)).runs
    assert trust_here("copilot-cli", "user", str(root), env, str(home)).runs
    (home / ".copilot").mkdir(parents=True)
    config = home / ".copilot" / "config.json"
    config.write_text('// managed\n{"trustedFolders": ["' + str(tmp_path / "work") + '"]}\n')
    assert trust_here("copilot-cli", "project", str(root), env, str(home)).runs
    config.write_text('{"trustedFolders": ["' + str(tmp_path / "elsewhere") + '"]}')
    assert not trust_here("copilot-cli", "project", str(root), env, str(home)).runs
    assert json.loads(strip_comments('/* a */ {"u": "http://x//y"} // b')) == {"u": "http://x//y"}


def vscode(event: str, **fields: Any) -> dict[str, Any]:
    """A hook's payload as Copilot in VS Code documents it (its hooks reference: the common
    fields, then each event's own)."""
    return {
        "timestamp": "2026-02-09T10:30:00.000Z",
        "cwd": "/work/repo",
        "sessionId": SID,
        "hookEventName": event,
        "transcript_path": "/t/transcript.json",
        **fields,
    }


def test_copilot_in_vs_code_is_told_apart_and_answered_as_itself(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.root / "src").mkdir()
    (project.root / "src" / "AGENTS.md").write_text("Src SRC-s1\n")
    (project.root / "src" / "x.py").write_text("x = 1\n")
    start = vscode("SessionStart", source="new")
    assert host_of("claude", start) == "copilot-vscode"
    assert parse_event("claude", start).agent == "copilot-vscode"
    first = project.hook("claude", start)
    assert first is not None and set(first) == {"hookSpecificOutput"}
    assert first["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    told = first["hookSpecificOutput"]["additionalContext"]
    assert "USER-u1" in told and "ROOT-r1" not in told  # VS Code loads the root AGENTS.md
    read = vscode(
        "PostToolUse",
        tool_name="read_file",
        tool_input={"filePath": str(project.root / "src" / "x.py")},
        tool_use_id="tool-123",
        tool_response="x = 1",
    )
    after = project.hook("claude", read)
    assert after is not None and "SRC-s1" in after["hookSpecificOutput"]["additionalContext"]
    assert project.hook("claude", read) is None  # the same tool call again: answered once
    # Its prompt hook takes no text: nothing is answered, nothing recorded as told.
    assert project.hook("claude", vscode("UserPromptSubmit", prompt="hi")) is None
    # Claude Code and Copilot CLI with the same session id: sessions of their own.
    assert project.hook("claude", claude("SessionStart", source="startup")) is not None
    assert project.hook("claude", copilot("SessionStart", source="new")) is not None
    assert project.sessions() == [f"claude:{SID}", f"copilot-cli:{SID}", f"copilot-vscode:{SID}"]

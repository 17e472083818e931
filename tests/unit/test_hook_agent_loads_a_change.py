"""A changed nested file and Claude Code's own load of it (complement mode).

Claude Code loads a nested CLAUDE.md at its first read below it, as the file is then. So when
only the hook had sent that file (after a search, where Claude Code loads nothing) and it changed
since, Claude Code's own load brings the change, and the hook's replacement would be a second
copy (the many-agents run saw a/CLAUDE.md's new text twice). A file Claude Code did load itself
it keeps, and reports only the changed lines of: there the hook's replacement is still sent.
docs/reference/agent-clis.md, Claude Code's own reads through Bash
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "lib/deep").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE\n")
    (repo / "lib/AGENTS.md").write_text("LIB-AGENTS\n")
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE-v1\n")
    (repo / "lib/deep/y.py").write_text("v = 1\n")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_TEST_STORE_NO_FSYNC", "1")
    return repo


class Session:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.calls = 0

    def event(self, payload: dict[str, Any]) -> str:
        from dsh_sidecar.hooks.main import main

        out = io.BytesIO()
        data = json.dumps({"cwd": str(self.repo), "session_id": "c1", **payload}).encode()
        assert main(["--agent", "claude"], io.BytesIO(data), out) == 0
        if not out.getvalue():
            return ""
        return str(json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"])

    def tool(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls += 1
        return self.event(
            {
                "hook_event_name": "PostToolUse",
                "tool_name": name,
                "tool_use_id": f"t{self.calls}",
                "tool_input": arguments,
            }
        )


def test_a_change_claude_code_loads_afresh_is_not_sent_again(repo: Path) -> None:
    session = Session(repo)
    session.event({"hook_event_name": "SessionStart", "source": "startup"})
    searched = session.tool("Bash", {"command": "grep -rn v lib"})
    assert searched.count("LIB-CLAUDE-v1") == 1 and searched.count("LIB-AGENTS") == 1
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE-v2\n")
    read = session.tool("Read", {"file_path": str(repo / "lib/deep/y.py")})
    assert "LIB-CLAUDE-v2" not in read  # Claude Code's own load of lib/CLAUDE.md carries it
    assert "Updated instructions from: lib/CLAUDE.md" not in read
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE-v3\n")
    again = session.tool("Read", {"file_path": str(repo / "lib/deep/y.py")})
    assert again.count("LIB-CLAUDE-v3") == 1  # now it is Claude Code's: only a diff note of it


def test_a_change_of_a_file_claude_code_loaded_itself_is_sent(repo: Path) -> None:
    session = Session(repo)
    session.event({"hook_event_name": "SessionStart", "source": "startup"})
    first = session.tool("Read", {"file_path": str(repo / "lib/deep/y.py")})
    assert "LIB-CLAUDE" not in first and first.count("LIB-AGENTS") == 1
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE-v2\n")
    read = session.tool("Read", {"file_path": str(repo / "lib/deep/y.py")})
    assert read.count("LIB-CLAUDE-v2") == 1
    assert read.count("Updated instructions from: lib/CLAUDE.md") == 1


def test_a_change_of_a_file_only_the_hook_sent_is_sent_when_claude_code_loads_nothing(
    repo: Path,
) -> None:
    session = Session(repo)
    session.event({"hook_event_name": "SessionStart", "source": "startup"})
    session.tool("Bash", {"command": "grep -rn v lib"})
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE-v2\n")
    searched = session.tool("Bash", {"command": "grep -rn v lib/deep"})
    assert searched.count("LIB-CLAUDE-v2") == 1

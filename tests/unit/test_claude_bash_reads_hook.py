"""A Claude Code Bash command that only prints one file is a read to Claude Code: it loads the
nested CLAUDE.md files for it itself, so the hook sends them no second time (the many-agents
run saw s/t/CLAUDE.md twice after ``cat s/t/z.py``). Facts:
docs/reference/agent-clis.md, Claude Code's own reads through Bash
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.hooks.main import main, parse_event


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "lib/deep").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE\n")
    (repo / "lib/AGENTS.md").write_text("LIB-AGENTS\n")
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE\n")
    (repo / "lib/deep/y.py").write_text("v = 1\n")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_TEST_STORE_NO_FSYNC", "1")
    return repo


def bash(repo: Path, command: str) -> Any:
    return parse_event(
        "claude",
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s",
            "cwd": str(repo),
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_1",
        },
    )


def test_a_printed_file_is_read_and_a_searched_directory_is_scanned(repo: Path) -> None:
    printed = bash(repo, "cat lib/deep/y.py")
    assert printed.touched == (str(repo / "lib/deep/y.py"),)
    assert printed.scanned == frozenset()
    searched = bash(repo, "grep -rn v lib")
    assert searched.touched and searched.scanned == frozenset(searched.touched)
    piped = bash(repo, "cat lib/deep/y.py | head -n 1")  # Claude Code reads nothing here
    assert piped.scanned == frozenset(piped.touched) != frozenset()


def hook(repo: Path, payload: dict[str, Any]) -> str | None:
    out = io.BytesIO()
    data = json.dumps({"cwd": str(repo), "session_id": "c1", **payload}).encode()
    assert main(["--agent", "claude"], io.BytesIO(data), out) == 0
    if not out.getvalue():
        return None
    return str(json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize(
    ("command", "sends_claude_md"),
    [
        ("cat lib/deep/y.py", False),  # Claude Code loads lib/CLAUDE.md itself
        ("sed -n 1,1p lib/deep/y.py", False),
        ("cat lib/deep/y.py | head -n 1", True),  # it does not: the hook sends it
        ("grep -rn v lib/deep", True),
    ],
)
def test_the_nested_claude_md_is_sent_only_when_claude_code_does_not_load_it(
    repo: Path, command: str, sends_claude_md: bool
) -> None:
    hook(repo, {"hook_event_name": "SessionStart", "source": "startup"})
    text = hook(
        repo,
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": "t1",
            "tool_input": {"command": command},
        },
    )
    assert text is not None and text.count("LIB-AGENTS") == 1
    assert text.count("LIB-CLAUDE") == (1 if sends_claude_md else 0)


MATCHED = {"stdout": "v = 1", "stderr": "", "interrupted": False, "isImage": False}
NO_MATCH = {**MATCHED, "stdout": "", "returnCodeInterpretation": "No matches found"}


@pytest.mark.parametrize(
    ("response", "sends_claude_md"),
    [
        (MATCHED, False),  # exit 0: Claude Code loads lib/CLAUDE.md itself
        (NO_MATCH, True),  # exit 1: it loads nothing, so the hook sends it
    ],
)
def test_a_grep_of_one_file_reads_it_only_when_it_exited_zero(
    repo: Path, response: dict[str, Any], sends_claude_md: bool
) -> None:
    hook(repo, {"hook_event_name": "SessionStart", "source": "startup"})
    text = hook(
        repo,
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_use_id": "t1",
            "tool_input": {"command": "grep v lib/deep/y.py"},
            "tool_response": response,
        },
    )
    assert text is not None and text.count("LIB-AGENTS") == 1
    assert text.count("LIB-CLAUDE") == (1 if sends_claude_md else 0)

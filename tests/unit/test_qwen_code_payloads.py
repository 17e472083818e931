"""Qwen Code 0.24.4's hook payloads read through its record (dsh_sidecar/agents/qwen_code.py), in
the shapes tests/agents/test_qwen_facts_real.py saw it send; the facts:
docs/reference/agent-clis.md, Qwen Code 0.24.4
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.agents.registry import hook_record
from dsh_sidecar.hooks.main import parse_event

SESSION = "e6b10fd3-0d32-42b3-b0da-0bedcc6b9775"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg/sub").mkdir(parents=True)
    (tmp_path / "pkg/sub/x.py").write_text("x = 1\n")
    return tmp_path


def payload(repo: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/u/.qwen/projects/p/chats/{SESSION}.jsonl",
        "cwd": str(repo),
        "hook_event_name": event,
        "timestamp": "2026-12-04T23:42:29.927Z",
        "permission_mode": "yolo",
        **fields,
    }


def test_the_prompt_and_its_re_fires_share_one_key(repo: Path) -> None:
    prompt_id = f"{SESSION}########0"
    first = parse_event(
        "qwen-code",
        payload(
            repo,
            "UserPromptSubmit",
            prompt="Read it.",
            submitted_prompt="Read it.",
            prompt_id=prompt_id,
        ),
    )
    again = parse_event(
        "qwen-code", payload(repo, "UserPromptSubmit", prompt="", prompt_id=prompt_id)
    )
    assert first.kind == again.kind == "prompt"
    assert first.prompt == "Read it."
    assert first.answer_key == again.answer_key == f"prompt:{prompt_id}"
    later = parse_event(
        "qwen-code",
        payload(repo, "UserPromptSubmit", prompt="Next.", prompt_id=f"{SESSION}########2"),
    )
    assert later.answer_key != first.answer_key


def test_a_tool_event_is_keyed_by_its_own_call_not_the_prompt(repo: Path) -> None:
    event = parse_event(
        "qwen-code",
        payload(
            repo,
            "PostToolUse",
            prompt_id=f"{SESSION}########0",
            tool_name="read_file",
            tool_input={"file_path": str(repo / "pkg/sub/x.py")},
            tool_response={"llmContent": "x = 1\n", "returnDisplay": ""},
            tool_use_id="toolu_1",
            tool_call_id="call_1_0",
        ),
    )
    assert event.kind == "after-tool" and event.answer_key == "after-tool:toolu_1"
    assert event.touched == (str(repo / "pkg/sub/x.py"),)
    # Qwen loads nothing after a read: the touch is the sidecar's alone to answer.
    assert event.scanned == frozenset(event.touched)


@pytest.mark.parametrize(
    ("tool", "arguments", "touched"),
    [
        ("grep_search", {"pattern": "x", "path": "pkg", "glob": "*.py"}, "pkg/"),
        ("glob", {"pattern": "sub/**/*.py", "path": "pkg"}, "pkg/sub/"),
        ("list_directory", {"path": "pkg/sub"}, "pkg/sub/"),
        ("run_shell_command", {"command": "cat x.py", "directory": "pkg/sub"}, "pkg/sub/x.py"),
        (
            "edit",
            {"file_path": "pkg/sub/x.py", "old_string": "1", "new_string": "2"},
            "pkg/sub/x.py",
        ),
    ],
)
def test_qwens_tools_touch_what_their_fields_name(
    repo: Path, tool: str, arguments: dict[str, Any], touched: str
) -> None:
    event = parse_event(
        "qwen-code",
        payload(repo, "PostToolUse", tool_name=tool, tool_input=arguments, tool_use_id="t"),
    )
    # A directory is touched with a trailing separator (hooks/payload.py, ``directory``).
    assert event.touched == (str(repo / touched.rstrip("/")) + "/" * touched.endswith("/"),)


def test_a_subagents_events_carry_its_id(repo: Path) -> None:
    event = parse_event(
        "qwen-code",
        payload(
            repo,
            "PostToolUse",
            agent_id="general-purpose-call_1_0",
            tool_name="read_file",
            tool_input={"file_path": str(repo / "pkg/sub/x.py")},
            tool_use_id="t",
        ),
    )
    assert event.agent_id == "general-purpose-call_1_0"


def test_the_record_installs_what_reaches_the_model() -> None:
    hooks = hook_record("qwen-code").hooks
    assert hooks is not None
    # PreCompact prints nothing: it tells a compression by hand from one on its own.
    assert [e.name for e in hooks.installed_events()] == [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PreCompact",
    ]
    assert hooks.compaction == "start-keeps-call"
    assert hooks.resume_drops_start_context and not hooks.resume_drops_prompt_context
    assert hooks.output.cap == 18_000 and hooks.output.frames_itself

"""What the real CLIs do with a hook whose program is gone, with and without the guard that
``hooks install`` writes (hooks/command_form.py), and where Claude Code looks for its project
files when started in a subdirectory (docs/agents.md, "A team").

The hook entries are written by hand here, in the shape install writes them, because the point
is a program that does not exist: ``/gone/venv/bin/dsh-sidecar``, as after a deleted virtualenv.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Literal

import pytest

from dsh_sidecar.hooks.command_form import guarded
from tests.support.agent_cli import run_agent
from tests.support.fake_model import FakeModel
from tests.support.hooks import HookConfig
from tests.support.recorded import count_in
from tests.support.steps import ReadFile, Text

pytestmark = pytest.mark.agent_clis

GONE = "/gone/venv/bin/dsh-sidecar"
EVENTS = {
    "claude": ("SessionStart", "UserPromptSubmit", "PostToolUse"),
    "gemini": ("SessionStart", "BeforeAgent", "AfterTool"),
}


def settings(agent: str, command: str) -> str:
    timeout = 5000 if agent == "gemini" else 5
    handler = {"type": "command", "command": command, "timeout": timeout}
    return json.dumps({"hooks": {e: [{"hooks": [handler]}] for e in EVENTS[agent]}}, indent=2)


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / "x.py").write_text("VALUE = 1\n")
    return repo


@pytest.mark.parametrize("guard", [False, True])
def test_gemini_blocks_every_prompt_unless_the_hook_is_guarded(tmp_path: Path, guard: bool) -> None:
    """Gemini CLI 0.61.0 reads exit 127 with text on stderr as a ``deny``: at ``BeforeAgent``
    the turn stops before any model request. The guard's exit 0 lets it go on."""
    repo = project(tmp_path)
    command = f"{GONE} hook --agent gemini"
    path = repo / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(settings("gemini", guarded(command) if guard else command))
    run = run_agent(
        "gemini",
        repo,
        "Read x.py and say what VALUE is.",
        [ReadFile("x.py"), Text("VALUE is 1.")],
        home=tmp_path / "home",
        extra_env={"GEMINI_CLI_TRUST_WORKSPACE": "true"},
        timeout=150,
    )
    assert run.exit_code == 0, run.describe()
    blocked = [
        e
        for e in run.events()
        if e.get("type") == "error"
        and str(e.get("message", "")).startswith("Agent execution blocked:")
    ]
    if guard:
        assert blocked == [], run.describe()
        assert len(run.main_requests) == 2, run.describe()  # the read, then the answer
    else:
        assert run.main_requests == [], run.describe()
        assert [e["message"] for e in blocked] == [
            f"Agent execution blocked: bash: line 1: {GONE}: No such file or directory"
        ]


@pytest.mark.parametrize("guard", [False, True])
def test_claude_code_reports_each_failed_hook_unless_it_is_guarded(
    tmp_path: Path, guard: bool
) -> None:
    repo = project(tmp_path)
    command = f"{GONE} hook --agent claude"
    path = repo / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text(settings("claude", guarded(command) if guard else command))
    run = run_agent(
        "claude",
        repo,
        "Read x.py and say what VALUE is.",
        [ReadFile(str(repo / "x.py")), Text("VALUE is 1.")],
        home=tmp_path / "home",
        timeout=150,
    )
    assert run.exit_code == 0, run.describe()  # the turn goes on either way
    assert len(run.main_requests) == 2, run.describe()
    # stream-json reports the SessionStart hooks' runs (not the later events').
    responses = [
        e
        for e in run.events()
        if e.get("type") == "system"
        and e.get("subtype") == "hook_response"
        and e.get("hook_event") == "SessionStart"
    ]
    assert responses, run.describe()
    expected = (0, "success", "") if guard else (127, "error", f"/bin/sh: 1: {GONE}: not found\n")
    for response in responses:
        assert (response["exit_code"], response["outcome"], response["stderr"]) == expected


def test_claude_code_in_a_subdirectory_reads_the_tops_local_file_only(tmp_path: Path) -> None:
    """Started in ``pkg/``, Claude Code 2.1.332 runs the hooks of the repository top's
    ``.claude/settings.local.json`` (its local settings live at the git root) but not those of
    the top's ``.claude/settings.json`` (project settings are read in the starting directory):
    one more reason install writes the local file by default."""
    repo = project(tmp_path)
    marks = {"settings.local.json": "LOCAL-MARK-3b1d", "settings.json": "SHARED-MARK-8e42"}
    (repo / ".claude").mkdir()
    for name, mark in marks.items():
        answer = json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": mark}}
        )
        script = tmp_path / f"{mark}.sh"
        script.write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{answer}'\n")
        script.chmod(0o755)
        handler = {"type": "command", "command": guarded(str(script)), "timeout": 5}
        (repo / ".claude" / name).write_text(
            json.dumps({"hooks": {"SessionStart": [{"hooks": [handler]}]}})
        )
    model = FakeModel().start()
    try:
        model.script([Text("Hello.")])
        run = run_agent(
            "claude", repo / "pkg", "Say hello.", model=model, home=tmp_path / "home", timeout=150
        )
    finally:
        model.stop()
    assert run.exit_code == 0, run.describe()
    first = run.main_requests[0]
    assert count_in(first, marks["settings.local.json"]) == 1, run.describe()
    assert count_in(first, marks["settings.json"]) == 0, run.describe()


@pytest.mark.parametrize("agent", ["copilot", "qwen"])
@pytest.mark.parametrize("guard", [False, True])
def test_copilot_cli_and_qwen_code_go_on_quietly_when_the_program_is_gone(
    tmp_path: Path, agent: Literal["copilot", "qwen"], guard: bool
) -> None:
    """GitHub Copilot CLI 1.0.102 and Qwen Code 0.24.4 (unlike Gemini CLI, whose code Qwen's
    came from) neither block the turn nor report anything in their headless output when a hook's
    program is missing; guarded or not, the read and the answer go out."""
    repo = project(tmp_path)
    command = f"{GONE} hook --agent {agent}"
    hooks = HookConfig.for_events(
        ("SessionStart", "UserPromptSubmit", "PostToolUse"),
        guarded(command) if guard else command,
        timeout_s=5,
    )
    run = run_agent(
        agent,
        repo,
        "Read x.py and say what VALUE is.",
        [ReadFile(str(repo / "x.py")), Text("VALUE is 1.")],
        home=tmp_path / "home",
        hooks=hooks,
        timeout=150,
    )
    assert run.exit_code == 0, run.describe()
    assert len(run.main_requests) == 2, run.describe()  # the read, then the answer
    assert GONE not in run.stdout + run.stderr, run.describe()


@pytest.mark.parametrize("agent", ["copilot", "qwen"])
def test_copilot_cli_and_qwen_code_run_a_guarded_hook_whose_program_is_there(
    tmp_path: Path, agent: Literal["copilot", "qwen"]
) -> None:
    """The other half of the guard's promise: with the program there, the guard runs it and its
    text reaches the model (Copilot CLI takes only a top-level additionalContext)."""
    repo = project(tmp_path)
    mark = "GUARDED-MARK-5c07"
    answer = (
        {"additionalContext": mark}
        if agent == "copilot"
        else {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": mark}}
    )
    script = tmp_path / "hook.sh"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{json.dumps(answer)}'\n")
    script.chmod(0o755)
    run = run_agent(
        agent,
        repo,
        "Say hello.",
        [Text("Hello.")],
        home=tmp_path / "home",
        hooks=HookConfig.for_events(("SessionStart",), guarded(str(script)), timeout_s=5),
        timeout=150,
    )
    assert run.exit_code == 0, run.describe()
    assert count_in(run.main_requests[0], mark) == 1, run.describe()

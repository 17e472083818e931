"""The harness itself, against each real CLI: the model reads a file and answers.

These pin what every other end-to-end test relies on: the CLI runs offline against the fake
model, the prompt reaches the model, a scripted read runs the agent's own read tool, and the
file's text comes back to the model in the next request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agent_cli import ALL_AGENTS, Agent, run_agent
from tests.support.hooks import HookConfig, Scope, capture_command, captured
from tests.support.recorded import count_in, parts_of
from tests.support.steps import ReadFile, Text

pytestmark = pytest.mark.agent_clis

PROMPT = "Read notes/today.txt and tell me what it says. PROMPT-7d1c"
FILE_MARKER = "FILE-MARKER-5be2a9"
ANSWER = "It says FILE-MARKER-5be2a9."


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_the_model_reads_a_file_and_answers(agent: Agent, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "notes").mkdir(parents=True)
    (repo / ".git").mkdir()  # a project root for the CLIs that look for one
    target = repo / "notes" / "today.txt"
    target.write_text(f"Remember: {FILE_MARKER}\n")
    # Claude's Read, Copilot's view and Qwen's read_file take an absolute path; the others are
    # given the path the user wrote.
    path = str(target) if agent in ("claude", "copilot", "qwen") else "notes/today.txt"

    run = run_agent(
        agent, repo, PROMPT, [ReadFile(path), Text(ANSWER)], home=tmp_path / "home", timeout=120
    )

    assert run.exit_code == 0, run.describe()
    first, second = run.main_requests  # the read, then the answer: exactly two steps
    assert any("PROMPT-7d1c" in p.text for p in parts_of(first) if p.kind == "text"), run.describe()
    assert count_in(first, FILE_MARKER) == 0  # the file is not known before the read
    results = [p.text for p in parts_of(second) if p.kind == "tool_result"]
    assert any(FILE_MARKER in text for text in results), results
    assert ANSWER in run.stdout  # the CLI reported the model's final answer


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_nothing_leaves_the_machine(agent: Agent, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    run = run_agent(agent, repo, "Say hello.", [Text("Hello.")], home=tmp_path / "home")
    assert run.exit_code == 0, run.describe()
    assert run.outside_attempts == []
    assert {r.path.split(":")[0] for r in run.requests} <= {
        "/v1/messages",
        "/v1/responses",
        "/v1/chat/completions",
        "/v1beta/models/gemini-3.5-flash-lite",
        "/v1beta/models/gemini-3.8-flash",
    }


@pytest.mark.parametrize("agent", ALL_AGENTS)
@pytest.mark.parametrize("scope", ["user", "project"])
def test_hooks_run_from_either_place(agent: Agent, scope: Scope, tmp_path: Path) -> None:
    """install_hooks writes each agent's documented place, with the trust the agent needs."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    start = "SessionStart"
    hooks = HookConfig.for_events([start], capture_command(tmp_path / "cap", start), scope=scope)
    run = run_agent(
        agent, repo, "Say hello.", [Text("Hello.")], home=tmp_path / "home", hooks=hooks
    )
    assert run.exit_code == 0, run.describe()
    assert [event for event, _ in captured(tmp_path / "cap")] == [start]
    in_project = {
        "claude": repo / ".claude" / "settings.json",
        "codex": repo / ".codex" / "hooks.json",
        "gemini": repo / ".gemini" / "settings.json",
        "copilot": repo / ".claude" / "settings.json",
        "qwen": repo / ".qwen" / "settings.json",
    }[agent]
    assert in_project.exists() == (scope == "project")

"""What Qwen Code 0.24.4 does with a hook's text: the facts docs/reference/agent-clis.md states
under its heading "Qwen Code 0.24.4", each checked on the request bodies Qwen sends the fake
model. The capture hook (tests/support/capture_hook.py) stands in for the sidecar's hook and
answers a unique marker per call (``{n}``: the call's number).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.agent_cli import AgentRun, run_agent
from tests.support.hooks import Hook, HookConfig, capture_command, captured
from tests.support.record_hooks import make_project
from tests.support.recorded import Part, RecordedRequest, count_in, parts_of
from tests.support.steps import Policy, ReadFile, Step, Text, ToolCall

pytestmark = pytest.mark.agent_clis

ANSWER = "ANSWER-7d31"
PROMPT = "Read pkg/sub/x.py. PROMPT-4e8a"
SECRET = "SECRET-FILE-0b9c"
# Characters Qwen rewrites (< and >) and ones it leaves (& and "), and an @ reference to a file
# that exists: Qwen never reads it.
TAIL = ' <tag> & "q" ops@secret.txt @secret.txt'


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_project(repo)
    (repo / "secret.txt").write_text(SECRET + "\n")
    return repo


def _run(tmp_path: Path, hooks: HookConfig, script: Sequence[Step] | Policy) -> AgentRun:
    run = run_agent(
        "qwen",
        _repo(tmp_path),
        PROMPT,
        script,
        home=tmp_path / "home",
        hooks=hooks,
        timeout=120,
    )
    assert run.exit_code == 0, run.describe()
    assert ANSWER in run.stdout, run.describe()
    return run


def _with(parts: list[Part], marker: str) -> list[Part]:
    return [p for p in parts if marker in p.text]


def test_where_qwens_hook_texts_land(tmp_path: Path) -> None:
    captures = tmp_path / "cap"
    hooks = HookConfig(
        tuple(
            Hook(event, capture_command(captures, event, context=f"{label}-{{n}}{TAIL}"))
            for event, label in (
                ("SessionStart", "START"),
                ("UserPromptSubmit", "PROMPT"),
                ("PreToolUse", "PRE"),
                ("PostToolUse", "POST"),
            )
        )
    )
    repo = tmp_path / "repo"
    run = _run(tmp_path, hooks, [ReadFile(str(repo / "pkg/sub/x.py")), Text(ANSWER)])
    calls = captured(captures)
    names = [event for event, _ in calls]
    # UserPromptSubmit again before the follow-up call, with the prompt's prompt_id, an empty
    # prompt and no submitted_prompt.
    assert names == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
    ], names
    first, again = (payload for event, payload in calls if event == "UserPromptSubmit")
    assert first["prompt"] == PROMPT and first["submitted_prompt"] == PROMPT
    assert again["prompt"] == "" and "submitted_prompt" not in again
    assert again["prompt_id"] == first["prompt_id"] and first["prompt_id"].endswith("########0")
    post = next(payload for event, payload in calls if event == "PostToolUse")
    assert post["tool_name"] == "read_file"
    assert post["tool_input"] == {"file_path": str(repo / "pkg/sub/x.py")}
    assert set(post["tool_response"]) == {"llmContent", "returnDisplay"}

    escaped = ' &lt;tag&gt; & "q" ops@secret.txt @secret.txt'
    one, two = run.main_requests[:2]
    system = parts_of(one)[0]
    assert system.role == "system"
    assert system.text.endswith(
        '\n\n<qwen:session-start-context hidden="true">\nSessionStart additional context:\n'
        f"START-1{escaped}\n</qwen:session-start-context>"
    ), system.text[-400:]
    user = [p for p in parts_of(one) if p.role == "user"]
    assert user[-2].text == PROMPT
    assert user[-1].text == (
        f"<qwen:user-prompt-submit-context>\nPROMPT-2{escaped}\n</qwen:user-prompt-submit-context>"
    )
    second = parts_of(two)
    (tool,) = [p for p in second if p.kind == "tool_result"]
    assert tool.text == f"VALUE = 1\n\n\nPOST-4{escaped}"
    # The re-fire's text: a user message of its own after the tool result; the first one stays.
    assert second[-1].role == "user" and second[-1].text == (
        f"<qwen:user-prompt-submit-context>\nPROMPT-5{escaped}\n</qwen:user-prompt-submit-context>"
    )
    assert len(_with(second, "PROMPT-2")) == 1
    # The pre-tool text reaches no request; no @ was read as a file reference.
    for request in run.main_requests:
        assert count_in(request, "PRE-3") == 0
        assert count_in(request, SECRET) == 0


def _sized(label: str, n: int) -> str:
    head, tail = f"HEAD-{label}-", f"-TAIL-{label}"
    body = "".join(f"line {i:05d} " + "w" * 60 + "\n" for i in range(n // 72 + 1))
    return head + body[: n - len(head) - len(tail)] + tail


@pytest.mark.parametrize("tool", ["read_file", "grep_search"])
def test_forty_five_thousand_characters_after_a_tool(tool: str, tmp_path: Path) -> None:
    """No cap of its own at any event; after a tool, Qwen cuts the tool message when the output
    and the hook's text together pass about twice the tool's output limit: read_file has none,
    grep_search 20,000 characters."""
    start, prompt, post = (_sized(label, 45_000) for label in ("START", "PROMPT", "POST"))
    hooks = HookConfig(
        (
            Hook("SessionStart", capture_command(tmp_path / "cap", "SessionStart", context=start)),
            Hook(
                "UserPromptSubmit",
                capture_command(tmp_path / "cap", "UserPromptSubmit", context=prompt),
            ),
            Hook("PostToolUse", capture_command(tmp_path / "cap", "PostToolUse", context=post)),
        )
    )
    repo = tmp_path / "repo"
    call: Step = (
        ReadFile(str(repo / "pkg/sub/x.py"))
        if tool == "read_file"
        else ToolCall("grep_search", {"pattern": "VALUE", "path": str(repo / "pkg")})
    )
    run = _run(tmp_path, hooks, [call, Text(ANSWER)])
    second = parts_of(run.main_requests[1])
    assert len(_with(second, start)) == 1 and len(_with(second, prompt)) == 2
    (result,) = [p for p in second if p.kind == "tool_result"]
    if tool == "read_file":
        assert result.text.endswith("\n\n" + post)
        return
    assert post not in result.text
    assert "[CONTENT TRUNCATED]" in result.text and "HEAD-POST-" in result.text
    assert result.text.rstrip().endswith("-TAIL-POST"), result.text[-300:]


def test_a_foreground_subagents_start_text_reaches_no_request(tmp_path: Path) -> None:
    """The ``agent`` tool runs a subagent headless against the fake model; SubagentStart fires
    (with agent_id and agent_type, as do the subagent's tool events) but its text reaches
    neither the subagent's requests nor the parent's."""
    captures = tmp_path / "cap"
    hooks = HookConfig(
        (
            Hook("SubagentStart", capture_command(captures, "SubagentStart", context="SUB-{n}")),
            Hook("PostToolUse", capture_command(captures, "PostToolUse", context="POST-{n}")),
        )
    )
    repo = tmp_path / "repo"
    task = {
        "description": "Read a file",
        "prompt": "Read pkg/sub/x.py and report.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }

    def in_subagent(request_parts: list[Part]) -> bool:
        return not any(PROMPT in p.text for p in request_parts)

    def step(request: RecordedRequest) -> Step:
        parts = parts_of(request)
        has_result = any(p.kind == "tool_result" for p in parts)
        if in_subagent(parts):
            return Text("x is 1.") if has_result else ReadFile(str(repo / "pkg/sub/x.py"))
        return Text(ANSWER) if has_result else ToolCall("agent", task)

    run = _run(tmp_path, hooks, step)
    calls = captured(captures)
    (start,) = [payload for event, payload in calls if event == "SubagentStart"]
    assert start["agent_type"] == "general-purpose" and start["agent_id"]
    reads = [p for e, p in calls if e == "PostToolUse" and p["tool_name"] == "read_file"]
    assert [p.get("agent_id") for p in reads] == [start["agent_id"]]
    sub = [r for r in run.main_requests if in_subagent(parts_of(r))]
    assert len(sub) == 2, run.describe()
    for request in run.main_requests:
        assert not any("SUB-" in p.text for p in parts_of(request))
    # The subagent's own tool text does reach the subagent.
    (read_result,) = [p for p in parts_of(sub[1]) if p.kind == "tool_result"]
    assert "POST-" in read_result.text


def test_on_continue_the_start_text_and_the_re_fires_texts_are_gone(tmp_path: Path) -> None:
    """``--continue``: the system message is rebuilt with the new SessionStart text (source
    ``resume``) in place of the first one; the history keeps the first prompt's text and the
    tool message with its PostToolUse text, but not the re-fire's user message."""
    captures = tmp_path / "cap"
    hooks = HookConfig(
        tuple(
            Hook(event, capture_command(captures, event, context=f"{label}-{{n}}-"))
            for event, label in (
                ("SessionStart", "START"),
                ("UserPromptSubmit", "PROMPT"),
                ("PostToolUse", "POST"),
            )
        )
    )
    repo = tmp_path / "repo"
    _run(tmp_path, hooks, [ReadFile(str(repo / "pkg/sub/x.py")), Text(ANSWER)])
    again = run_agent(
        "qwen",
        repo,
        "Second. PROMPT-2b",
        [Text(ANSWER)],
        home=tmp_path / "home",
        hooks=hooks,
        timeout=120,
        resume=True,
    )
    assert again.exit_code == 0, again.describe()
    calls = captured(captures)
    assert [e for e, _ in calls] == [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "UserPromptSubmit",
        "SessionStart",
        "UserPromptSubmit",
    ]
    assert calls[4][1]["source"] == "resume"
    assert calls[5][1]["prompt_id"].endswith("########2")  # the count goes on
    (request,) = again.main_requests
    found = {m: count_in(request, m) for m in ("START-1-", "PROMPT-2-", "POST-3-", "PROMPT-4-")}
    assert found == {"START-1-": 0, "PROMPT-2-": 1, "POST-3-": 1, "PROMPT-4-": 0}, found
    system = parts_of(request)[0]
    assert "START-5-" in system.text and count_in(request, "PROMPT-6-") == 1

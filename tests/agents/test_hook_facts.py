"""What the real CLIs do with hook output: the facts docs/reference/agent-clis.md states.

Each test runs a CLI headless against the fake model with the capture hook
(tests/support/capture_hook.py) answering a unique marker per call, and checks where in the
next model requests that marker landed. When a CLI version moves, these say what changed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_cli import AGENTS, Agent, AgentRun, run_agent
from tests.support.hooks import EVENTS, Hook, HookConfig, capture_all, capture_command, captured
from tests.support.record_hooks import make_project
from tests.support.recorded import Part, count_in, parts_of
from tests.support.steps import ReadFile, Text, WriteFile

pytestmark = pytest.mark.agent_clis

ANSWER = "ANSWER-61f0"
PROMPT = "Read pkg/sub/x.py. PROMPT-9c2e"
# The events used to feed the model: session start, prompt time, before and after a tool.
FEED_EVENTS: dict[Agent, tuple[str, str, str, str]] = {
    "claude": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"),
    "codex": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"),
    "gemini": ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool"),
}


def _read_x(agent: Agent, repo: Path) -> ReadFile:
    return ReadFile(str(repo / "pkg/sub/x.py") if agent == "claude" else "pkg/sub/x.py")


def _run(agent: Agent, tmp_path: Path, hooks: HookConfig, *, resume: bool = False) -> AgentRun:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_project(repo)
    run = run_agent(
        agent,
        repo,
        PROMPT,
        [_read_x(agent, repo), Text(ANSWER)],
        home=tmp_path / "home",
        hooks=hooks,
        timeout=120,
        resume=resume,
    )
    assert run.exit_code == 0, run.describe()
    assert ANSWER in run.stdout, run.describe()
    return run


def _where(parts: list[Part], marker: str) -> list[int]:
    return [i for i, part in enumerate(parts) if marker in part.text]


def _index(parts: list[Part], kind: str) -> int:
    found = [i for i, part in enumerate(parts) if part.kind == kind]
    assert len(found) == 1, parts
    return found[0]


@pytest.mark.parametrize("agent", AGENTS)
def test_where_each_hooks_context_lands(agent: Agent, tmp_path: Path) -> None:
    start, prompt, pre, post = FEED_EVENTS[agent]
    events = [start, prompt, pre, post, *(["InstructionsLoaded"] if agent == "claude" else [])]
    hooks = HookConfig(
        tuple(
            Hook(e, capture_command(tmp_path / "cap", e, context=f"CTX-{e}-#{{n}}")) for e in events
        )
    )
    run = _run(agent, tmp_path, hooks)
    first, second = (parts_of(r) for r in run.main_requests)

    def at(parts: list[Part], event: str) -> list[int]:
        return _where(parts, f"CTX-{event}-#")

    user_prompt = next(
        i for i, p in enumerate(first) if p.kind == "text" and "PROMPT-9c2e" in p.text
    )
    # Session start and prompt time: in the first request, and still there (once) in the next.
    for event in (start, prompt):
        assert len(at(first, event)) == 1, (event, first)
        assert len(at(second, event)) == 1, (event, second)
    # The tool events' text only ever comes after the tool ran: in the request carrying its result.
    assert at(first, pre) == [] and at(first, post) == []
    call, result = _index(second, "tool_call"), _index(second, "tool_result")
    assert call < result
    if agent == "claude":
        # A system-role message after the prompt, one per event kind: the pre-tool and post-tool
        # texts share one message after the tool result.
        (where_start,) = at(first, start)
        assert first[where_start].role == "system" and where_start > user_prompt
        assert "SessionStart hook additional context: CTX-SessionStart-#" in first[where_start].text
        assert "UserPromptSubmit hook additional context: CTX-" in first[at(first, prompt)[0]].text
        (where_pre,) = at(second, pre)
        assert at(second, post) == [where_pre] and where_pre > result
        assert second[where_pre].role == "system"
        assert "PreToolUse:Read hook additional context: CTX-PreToolUse-#" in second[where_pre].text
        assert (
            "PostToolUse:Read hook additional context: CTX-PostToolUse-#" in second[where_pre].text
        )
        # InstructionsLoaded runs (see the fixtures) but its output reaches the model nowhere.
        assert all(at(parts_of(r), "InstructionsLoaded") == [] for r in run.requests)
    elif agent == "codex":
        # Developer messages of their own: start before the prompt, prompt-time after it, the
        # tool events between the call and its output.
        assert at(first, start)[0] < user_prompt < at(first, prompt)[0]
        assert all(first[at(first, e)[0]].role == "developer" for e in (start, prompt))
        assert first[at(first, start)[0]].text == "CTX-SessionStart-#1"  # no framing text
        assert call < at(second, pre)[0] < at(second, post)[0] < result
    else:
        # Inside the user turn, framed by <hook_context>: the start text before the prompt in
        # the same part, the prompt-time text in a part after it; after-tool text appended to
        # the tool's response. BeforeTool's additionalContext is dropped.
        (where_start,) = at(first, start)
        assert where_start == user_prompt
        assert re.search(
            r"<hook_context>CTX-SessionStart-#\d+</hook_context>\s*Read pkg",
            first[where_start].text,
        )
        assert at(first, prompt)[0] == user_prompt + 1
        assert at(second, post) == [result]
        assert re.search(r"<hook_context>CTX-AfterTool-#\d+</hook_context>", second[result].text)
        assert all(at(parts_of(r), pre) == [] for r in run.requests)
    # The capture hook did run for the events whose text was dropped.
    assert pre in [event for event, _ in captured(tmp_path / "cap")]


CAP = 10_000


def _sized(n: int) -> str:
    """``n`` characters: a head mark, filler, a tail mark."""
    return "HEAD-1b7e" + "x" * (n - 18) + "TAIL-4c0d"


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("size", [CAP, CAP + 1, 40_000])
def test_one_hooks_text_cap(agent: Agent, size: int, tmp_path: Path) -> None:
    post = FEED_EVENTS[agent][3]
    text = _sized(size)
    hooks = HookConfig((Hook(post, capture_command(tmp_path / "cap", post, context=text)),))
    run = _run(agent, tmp_path, hooks)
    second = parts_of(run.main_requests[1])
    whole = _where(second, text)
    if agent == "gemini" or size <= CAP:
        assert len(whole) == 1, f"{agent}: {size} characters were not delivered whole"
        return
    assert whole == []
    heads, tails = _where(second, "HEAD-1b7e"), _where(second, "TAIL-4c0d")
    if agent == "claude":
        # A preview of the head and the path of a file holding the whole text.
        (where,) = heads
        assert tails == []
        assert len(second[where].text) < 4_000
        saved = re.search(r"(/\S+)", second[where].text[second[where].text.index("HEAD-1b7e") :])
        assert saved is not None and "tool-results" in second[where].text, second[where].text
    else:
        # Head and tail kept, the middle cut, within the cap.
        assert heads == tails and len(heads) == 1
        assert len(second[heads[0]].text) <= CAP + 200


# What the cap counts: (filler character, count that fits whole, one more that does not).
# Claude Code counts UTF-16 code units (an emoji is two), Codex UTF-8 bytes (an é is two).
CAP_UNITS = {"claude": ("\U0001f600", 5009, 5010), "codex": ("\u00e9", 5009, 5010)}


@pytest.mark.parametrize("agent", sorted(CAP_UNITS))
@pytest.mark.parametrize("fits", [True, False])
def test_what_the_cap_counts(agent: Agent, fits: bool, tmp_path: Path) -> None:
    filler, inside, outside = CAP_UNITS[agent]
    n = inside if fits else outside
    text = "HEAD-1b7e" + filler * (n - 18) + "TAIL-4c0d"  # 10,000 units or 10,002
    post = FEED_EVENTS[agent][3]
    hooks = HookConfig((Hook(post, capture_command(tmp_path / "cap", post, context=text)),))
    run = _run(agent, tmp_path, hooks)
    second = parts_of(run.main_requests[1])
    assert (len(_where(second, text)) == 1) == fits


FAILURES: dict[str, dict[str, Any]] = {
    "exit 1": {"exit_code": 1, "context": "FAILED-CTX"},
    "garbage": {"garbage": True},
    "timeout": {"sleep_s": 8, "context": "LATE-CTX"},
}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_failing_hook_lets_the_turn_finish(agent: Agent, failure: str, tmp_path: Path) -> None:
    how = FAILURES[failure]
    hooks = HookConfig(
        tuple(
            Hook(e, capture_command(tmp_path / "cap", e, **how), None, 2)
            for e in FEED_EVENTS[agent]
        )
    )
    run = _run(agent, tmp_path, hooks)  # exit 0 and the final answer: asserted in _run
    assert len(run.main_requests) == 2
    second = parts_of(run.main_requests[1])
    assert any("VALUE = 1" in p.text for p in second if p.kind == "tool_result")
    # The JSON a hook printed before exiting 1: Claude Code and Gemini CLI still deliver it
    # (Gemini warns on stderr), Codex drops it.
    delivered = agent != "codex" and failure == "exit 1"
    assert bool(_where(second, "FAILED-CTX")) == delivered
    # Broken JSON: Claude Code passes it on as plain text at session start and prompt time
    # (test_plain_stdout); Codex (it starts with "{") and Gemini CLI drop it.
    call = _index(second, "tool_call")
    before = sum(p.text.count("not json at all") for p in second[:call])
    after = sum(p.text.count("not json at all") for p in second[call + 1 :])
    assert (before, after) == ((2, 0) if failure == "garbage" and agent == "claude" else (0, 0))
    assert all(_where(parts_of(r), "LATE-CTX") == [] for r in run.requests)
    assert {e for e, _ in captured(tmp_path / "cap")} == set(FEED_EVENTS[agent])


@pytest.mark.parametrize("agent", AGENTS)
def test_plain_stdout(agent: Agent, tmp_path: Path) -> None:
    """Stdout that is not JSON: sent as is at session start and prompt time by Claude Code and
    Codex, never after a tool; Gemini CLI never sends it."""
    hooks = HookConfig(
        tuple(
            Hook(e, capture_command(tmp_path / "cap", e, plain=f"PLAIN-{e}"))
            for e in FEED_EVENTS[agent]
        )
    )
    run = _run(agent, tmp_path, hooks)
    text = "\n".join(p.text for p in parts_of(run.main_requests[1]))
    start, prompt = FEED_EVENTS[agent][:2]
    sent = {e for e in FEED_EVENTS[agent] if f"PLAIN-{e}" in text}
    assert sent == (set() if agent == "gemini" else {start, prompt})


@pytest.mark.parametrize("agent", AGENTS)
def test_session_start_sources_headless(agent: Agent, tmp_path: Path) -> None:
    first = _run(agent, tmp_path, capture_all(agent, tmp_path / "cap1"))
    again = _run(agent, tmp_path, capture_all(agent, tmp_path / "cap2"), resume=True)
    assert again.exit_code == 0
    starts = [p for e, p in captured(tmp_path / "cap1") if e == "SessionStart"]
    resumed = [p for e, p in captured(tmp_path / "cap2") if e == "SessionStart"]
    assert [p["source"] for p in starts] == ["startup"]
    assert [p["source"] for p in resumed] == ["resume"]
    # The resumed session keeps its id, on every event of the resumed run.
    ids = {p["session_id"] for _, p in captured(tmp_path / "cap2")}
    assert ids == {starts[0]["session_id"]}
    assert first.exit_code == 0


def test_claude_instructions_loaded(tmp_path: Path) -> None:
    """InstructionsLoaded reports the CLAUDE.md-family files and rules as Claude Code loads
    them (at session start; after a Read, with the file that triggered it), not AGENTS.md."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("Root agents.\n")  # no CLAUDE.md: AGENTS.md stands in
    (repo / "pkg" / "sub" / "AGENTS.md").write_text("Nested agents.\n")
    (repo / "pkg" / "sub" / "x.py").write_text("VALUE = 1\n")
    rules = repo / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "always.md").write_text("Always rule.\n")
    (rules / "py.md").write_text('---\npaths: ["pkg/sub/**"]\n---\nPython rule.\n')
    user = tmp_path / "home" / ".claude"
    user.mkdir(parents=True)
    (user / "CLAUDE.md").write_text("User instructions.\n")
    run = _run("claude", tmp_path, capture_all("claude", tmp_path / "cap"))
    loaded = sorted(
        (
            p["file_path"].replace(str(tmp_path), "$T"),
            p["load_reason"],
            p["memory_type"],
            p.get("trigger_file_path", "").replace(str(tmp_path), "$T"),
        )
        for e, p in captured(tmp_path / "cap")
        if e == "InstructionsLoaded"
    )
    assert loaded == sorted(
        [
            ("$T/home/.claude/CLAUDE.md", "session_start", "User", ""),
            ("$T/repo/.claude/rules/always.md", "session_start", "Project", ""),
            ("$T/repo/.claude/rules/py.md", "path_glob_match", "Project", "$T/repo/pkg/sub/x.py"),
        ]
    ), loaded
    # The AGENTS.md files did load (the root one at start, the nested one after the read), but
    # InstructionsLoaded reported neither.
    first, second = run.main_requests
    assert count_in(first, "Root agents.") == 1 and count_in(first, "Nested agents.") == 0
    assert count_in(second, "Nested agents.") == 1


def test_claude_subagent_events_carry_agent_id(tmp_path: Path) -> None:
    from tests.support.record_hooks import SUBAGENT_PROMPT, _subagent

    repo = tmp_path / "repo"
    make_project(repo)
    run = run_agent(
        "claude",
        repo,
        SUBAGENT_PROMPT,
        _subagent(repo, background=False),
        home=tmp_path / "home",
        hooks=capture_all("claude", tmp_path / "cap"),
        timeout=120,
    )
    assert run.exit_code == 0, run.describe()
    events = captured(tmp_path / "cap")
    (start,) = [p for e, p in events if e == "SubagentStart"]
    agent_id = start["agent_id"]
    assert start["agent_type"] == "general-purpose"
    in_subagent = [(e, p.get("tool_name")) for e, p in events if p.get("agent_id") == agent_id]
    assert ("PreToolUse", "Read") in in_subagent and ("PostToolUse", "Read") in in_subagent
    assert ("InstructionsLoaded", None) in in_subagent  # the nested CLAUDE.md, for the subagent
    parent = [(e, p.get("tool_name")) for e, p in events if "agent_id" not in p]
    assert ("PreToolUse", "Agent") in parent and ("SessionStart", None) in parent
    assert {p["session_id"] for _, p in events} == {start["session_id"]}
    assert set(EVENTS["claude"]) >= {e for e, _ in events}


DENY = {
    "claude": {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "DENY-7a1f read pkg/sub/AGENTS.md first",
        }
    },
    "codex": {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "DENY-7a1f read pkg/sub/AGENTS.md first",
        }
    },
    "gemini": {"decision": "deny", "reason": "DENY-7a1f read pkg/sub/AGENTS.md first"},
}
DENIED_AS = {
    "claude": "PreToolUse:Write hook error: DENY-7a1f",
    "codex": "Command blocked by PreToolUse hook: DENY-7a1f",
    "gemini": "Tool execution blocked: DENY-7a1f",
}


@pytest.mark.parametrize("agent", AGENTS)
def test_a_pre_tool_deny_reaches_the_model_before_the_write(agent: Agent, tmp_path: Path) -> None:
    """The one way a pre-tool hook's text reaches the model before a write lands: deny the
    call with a reason. The write does not happen and the reason comes back as the tool's
    result, so the model can write again knowing it."""
    repo = tmp_path / "repo"
    make_project(repo)
    target = repo / "pkg" / "sub" / "new.py"
    pre = FEED_EVENTS[agent][2]
    hooks = HookConfig(
        (Hook(pre, capture_command(tmp_path / "cap", pre, plain=json.dumps(DENY[agent]))),)
    )
    path = str(target) if agent == "claude" else "pkg/sub/new.py"
    run = run_agent(
        agent,
        repo,
        "Create pkg/sub/new.py.",
        [WriteFile(path, "NEW = 1\n"), Text(ANSWER)],
        home=tmp_path / "home",
        hooks=hooks,
        timeout=120,
    )
    assert run.exit_code == 0 and ANSWER in run.stdout, run.describe()
    assert not target.exists()
    second = parts_of(run.main_requests[1])
    result = second[_index(second, "tool_result")]
    assert result.text.startswith(DENIED_AS[agent]), result


def test_claude_subagent_context_goes_to_the_subagent(tmp_path: Path) -> None:
    """A subagent starts without the parent's hook texts: SubagentStart's text is its own (the
    parent never sees it), and its tool events' texts land in its own requests."""
    from tests.support.record_hooks import SUBAGENT_PROMPT, _subagent

    repo = tmp_path / "repo"
    make_project(repo)
    events = ["SessionStart", "UserPromptSubmit", "SubagentStart", "PostToolUse"]
    hooks = HookConfig(
        tuple(Hook(e, capture_command(tmp_path / "cap", e, context=f"CTX-{e}-#")) for e in events)
    )
    run = run_agent(
        "claude",
        repo,
        SUBAGENT_PROMPT,
        _subagent(repo, background=False),
        home=tmp_path / "home",
        hooks=hooks,
        timeout=120,
    )
    assert run.exit_code == 0, run.describe()
    parent_first, sub_first, sub_second, parent_last = run.main_requests
    for request in (parent_first, parent_last):
        assert count_in(request, "CTX-SubagentStart-#") == 0
        assert count_in(request, "CTX-SessionStart-#") == 1
    assert count_in(sub_first, "CTX-SubagentStart-#") == 1
    assert count_in(sub_first, "CTX-SessionStart-#") == 0
    assert count_in(sub_first, "CTX-UserPromptSubmit-#") == 0
    assert count_in(sub_first, "Root instructions.") == 1  # its own CLAUDE.md loading
    assert count_in(sub_second, "PostToolUse:Read hook additional context: CTX-PostToolUse-#") == 1
    assert count_in(sub_second, "Nested instructions.") == 1
    assert (
        count_in(parent_last, "PostToolUse:Agent hook additional context: CTX-PostToolUse-#") == 1
    )
    assert count_in(parent_last, "Nested instructions.") == 0

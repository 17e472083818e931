"""``dsh-sidecar hook --agent qwen-code`` installed into the real Qwen Code 0.24.4: what reaches
the model's requests.

Each run installs the hooks as ``hooks install`` writes them (events, matchers, milliseconds),
each answer also kept with ``tee``, drives tool calls through the fake model, and counts the
marker of every instruction file in the requests Qwen sent. Qwen loads the root ``AGENTS.md``
itself and nothing nested (docs/reference/agent-clis.md, Qwen Code 0.24.4); the hook adds the
rest, each file once, though Qwen runs its ``UserPromptSubmit`` hook again before every
follow-up model call.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from dsh_sidecar.hooks.install import HOOK_EVENTS
from tests.support.agent_cli import AgentRun, run_agent
from tests.support.fake_model import FakeModel
from tests.support.hooks import Hook, HookConfig
from tests.support.recorded import Part, RecordedRequest, count_in, parts_of
from tests.support.steps import ReadFile, Shell, Step, Text, ToolCall

pytestmark = pytest.mark.agent_clis

AGENT = "qwen-code"
HOOK = shlex.join([str(Path(sys.executable).parent / "dsh-sidecar"), "hook"])
MARKERS = {
    "USER-GLOBAL-q1": "home/AGENTS.md",
    "ROOT-AGENTS-q2": "AGENTS.md",
    "ROOT-CLAUDE-q3": "CLAUDE.md",
    "PKG-AGENTS-q4": "pkg/AGENTS.md",
    "PKG-CLAUDE-q5": "pkg/CLAUDE.md",
    "SIBLING-q6": "other/AGENTS.md",
}
EVERY_FILE_ONCE = {m: 0 if m == "SIBLING-q6" else 1 for m in MARKERS}


def tree(tmp_path: Path, big: bool = False) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    dsh = tmp_path / "dsh"
    dsh.mkdir(exist_ok=True)
    for marker, rel in MARKERS.items():
        path = dsh / "AGENTS.md" if rel.startswith("home/") else repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Rule {marker} <b>&\n")
    if big:  # 40 KB
        (repo / "pkg/AGENTS.md").write_text(
            "Rule PKG-AGENTS-q4\n" + "".join(f"rule {i} " + "q" * 70 + "\n" for i in range(520))
        )
    (repo / "pkg/sub").mkdir(parents=True)
    (repo / "pkg/sub/x.py").write_text("x = 1\n")
    return repo, dsh


def installed(printed: Path, settings: Path | None = None) -> HookConfig:
    extra = f" --settings {shlex.quote(str(settings))}" if settings else ""
    command = f"{HOOK} --agent {AGENT}{extra} | tee -a {shlex.quote(str(printed))}"
    return HookConfig(tuple(Hook(e.event, command, e.matcher, 20) for e in HOOK_EVENTS[AGENT]))


def run(
    tmp_path: Path,
    script: Sequence[Step],
    *,
    hooks: bool = True,
    big: bool = False,
    resume: bool = False,
    prompt: str = "Read the file and stop.",
    model: FakeModel | None = None,
) -> AgentRun:
    repo, dsh = tree(tmp_path, big) if not resume else (tmp_path / "repo", tmp_path / "dsh")
    result = run_agent(
        "qwen",
        repo,
        prompt,
        list(script),
        model=model,
        home=tmp_path / "home",
        hooks=installed(tmp_path / "printed.jsonl") if hooks else None,
        timeout=150,
        resume=resume,
        extra_env={"DSH_HOME": str(dsh), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    return result


def answers(tmp_path: Path) -> list[tuple[str, str]]:
    """(event, text) of every answer the hook printed, in order."""
    out = []
    for line in (tmp_path / "printed.jsonl").read_text().splitlines():
        body = json.loads(line)["hookSpecificOutput"]
        out.append((body["hookEventName"], body["additionalContext"]))
    return out


def counts(request: RecordedRequest) -> dict[str, int]:
    return {m: count_in(request, m) for m in MARKERS}


def no_hook_failures(tmp_path: Path) -> None:
    log = tmp_path / "dsh" / "log" / "hooks.log"
    assert not log.exists(), log.read_text()


def as_sent(text: str) -> str:
    """What Qwen makes of a hook's text: every < and > an entity (DefaultHookOutput)."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def read_x(repo: Path) -> ReadFile:
    return ReadFile(str(repo / "pkg/sub/x.py"))


def test_every_applicable_file_arrives_once_as_the_hook_wrote_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    # Two tool calls: Qwen runs UserPromptSubmit three times, the hook answers the first only.
    result = run(tmp_path, [read_x(repo), read_x(repo), Text("done")])
    assert counts(result.main_requests[-1]) == EVERY_FILE_ONCE, result.describe()
    printed = answers(tmp_path)
    assert [event for event, _ in printed] == ["SessionStart", "PostToolUse"], printed
    (start, post) = (text for _, text in printed)
    assert "<system-reminder>" not in start + post  # Qwen frames (and would escape) tags
    first, second, third = result.main_requests
    system = parts_of(first)[0]
    assert system.text.endswith(
        "\nSessionStart additional context:\n"
        + as_sent(start.strip())
        + "\n</qwen:session-start-context>"
    )
    assert "Additional instructions from: pkg/AGENTS.md" in post
    (tool,) = [p for p in parts_of(second) if p.kind == "tool_result"]
    assert tool.text == "x = 1\n\n\n" + as_sent(post)
    # No prompt-time text at all (nothing was due then), and none at the re-fires.
    for request in result.main_requests:
        assert not any(
            p.text.startswith("<qwen:user-prompt-submit-context>") for p in parts_of(request)
        )
    assert count_in(third, "&lt;b&gt;&") == 4  # the hook's four files, < and > as entities
    no_hook_failures(tmp_path)


def test_without_hooks_qwen_misses_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    found = counts(run(tmp_path, [read_x(repo), Text("done")], hooks=False).main_requests[-1])
    assert found == {m: 1 if m == "ROOT-AGENTS-q2" else 0 for m in MARKERS}, found


def test_a_change_and_a_removal_arrive_after_the_next_touch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    change = "printf 'Rule PKG-AGENTS-V%s-q7\\n' 2 > pkg/AGENTS.md && rm pkg/CLAUDE.md"
    script: list[Step] = [read_x(repo), Shell(change), read_x(repo), Text("ok")]
    last = run(tmp_path, script).main_requests[-1]
    assert count_in(last, "PKG-AGENTS-V2-q7") == 1
    assert count_in(last, "Updated instructions from: pkg/AGENTS.md") == 1
    assert count_in(last, "Instructions removed: pkg/CLAUDE.md") == 1
    assert count_in(last, "PKG-AGENTS-q4") == 1 and count_in(last, "PKG-CLAUDE-q5") == 1
    no_hook_failures(tmp_path)


@pytest.mark.parametrize("touch", ["read_file", "grep_search"])
def test_a_forty_kilobyte_nested_file_is_not_cut_by_qwen(touch: str, tmp_path: Path) -> None:
    """The hook keeps under the record's 18,000 characters, so even after a grep_search (whose
    tool message Qwen cuts past about 40,000) the text reaches the model whole; what did not
    fit arrives at the next event."""
    repo = tmp_path / "repo"
    call: Step = (
        read_x(repo)
        if touch == "read_file"
        else ToolCall("grep_search", {"pattern": "x", "path": str(repo / "pkg/sub")})
    )
    result = run(tmp_path, [call, read_x(repo), Text("done")], big=True)
    last = result.main_requests[-1]
    assert count_in(last, "PKG-AGENTS-q4") == 1 and count_in(last, "rule 0 ") == 1
    assert count_in(last, "PKG-CLAUDE-q5") == 1
    for request in result.main_requests:
        assert count_in(request, "[CONTENT TRUNCATED]") == 0, result.describe()
    printed = answers(tmp_path)
    assert max(len(text) for _, text in printed) <= 18_000
    for _, text in printed:
        assert count_in(last, as_sent(text)) == 1
    no_hook_failures(tmp_path)


def test_a_subagent_gets_its_baseline_and_nested_files_in_its_own_requests(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    prompt = "Ask a subagent to read the file."
    task = {
        "description": "Read a file",
        "prompt": "Read pkg/sub/x.py and report.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }

    def in_subagent(parts: list[Part]) -> bool:
        return not any(prompt in p.text for p in parts)

    def step(request: RecordedRequest) -> Step:
        parts = parts_of(request)
        has_result = any(p.kind == "tool_result" for p in parts)
        if in_subagent(parts):
            return Text("x is 1.") if has_result else read_x(repo)
        return Text("done") if has_result else ToolCall("agent", task)

    tree(tmp_path)
    result = run_agent(
        "qwen",
        repo,
        prompt,
        step,
        home=tmp_path / "home",
        hooks=installed(tmp_path / "printed.jsonl"),
        timeout=150,
        extra_env={"DSH_HOME": str(tmp_path / "dsh"), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    sub = [r for r in result.main_requests if in_subagent(parts_of(r))]
    assert len(sub) == 2, result.describe()
    assert counts(sub[-1]) == EVERY_FILE_ONCE, result.describe()
    # The parent had its own baseline; the subagent's reads are not its business.
    parent = result.main_requests[-1]
    assert counts(parent)["PKG-AGENTS-q4"] == 0 and counts(parent)["USER-GLOBAL-q1"] == 1
    no_hook_failures(tmp_path)


def test_a_continued_session_has_every_file_once_and_gets_the_change(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    run(tmp_path, [read_x(repo), Text("one")], prompt="First.")
    (repo / "pkg/AGENTS.md").write_text("Rule PKG-AGENTS-V3-q8\n")
    second = run(tmp_path, [read_x(repo), Text("two")], resume=True, prompt="Second.")
    found = {m: count_in(second.main_requests[-1], m) for m in [*MARKERS, "PKG-AGENTS-V3-q8"]}
    # Qwen rebuilt its system message (the first start text is gone): the hook gave the
    # baseline again; the first read's tool message, with its hook text, stays in the history.
    assert found == {**EVERY_FILE_ONCE, "PKG-AGENTS-V3-q8": 1}, found
    no_hook_failures(tmp_path)


def test_the_prompt_is_answered_once_though_qwen_fires_its_hook_before_every_call(
    tmp_path: Path,
) -> None:
    """With time readings on, the prompt event prints one; Qwen runs UserPromptSubmit again
    before each of the two follow-up calls (the same prompt_id), and those print nothing."""
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"timeContext": {"enabled": True, "timeZone": "UTC"}}))
    repo, dsh = tree(tmp_path)
    result = run_agent(
        "qwen",
        repo,
        "Read the file twice.",
        [read_x(repo), read_x(repo), Text("done")],
        home=tmp_path / "home",
        hooks=installed(tmp_path / "printed.jsonl", settings),
        timeout=150,
        extra_env={"DSH_HOME": str(dsh), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    printed = answers(tmp_path)
    assert [event for event, _ in printed] == ["SessionStart", "UserPromptSubmit", "PostToolUse"]
    prompt_text = printed[1][1]
    last = result.main_requests[-1]
    carried = [
        p.text for p in parts_of(last) if p.text.startswith("<qwen:user-prompt-submit-context>")
    ]
    assert carried == [
        "<qwen:user-prompt-submit-context>\n"
        + as_sent(prompt_text)
        + "\n</qwen:user-prompt-submit-context>"
    ]
    assert counts(last) == EVERY_FILE_ONCE
    no_hook_failures(tmp_path)


def test_hooks_install_for_the_project_runs_without_a_trust_step(tmp_path: Path) -> None:
    """``hooks install --agent qwen-code`` as a user runs it: the project's .qwen/settings.json,
    no trust step (Qwen's folder trust is off by default), and the real CLI runs the hook."""
    repo, dsh = tree(tmp_path)
    home = tmp_path / "home"
    bin_dir = tmp_path / "bin"  # the portable command a project file gets finds it on PATH
    bin_dir.mkdir()
    shim = bin_dir / "dsh-sidecar"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dsh_sidecar "$@"\n')
    shim.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "DSH_HOME": str(dsh), "HOME": str(home)}

    def dsh_sidecar(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dsh_sidecar", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = dsh_sidecar("hooks", "install", "--agent", AGENT, "--project", str(repo))
    assert done.returncode == 0, done.stderr
    assert f"hooks installed in {repo}/.qwen/settings.json" in done.stdout, done.stdout
    status = dsh_sidecar("hooks", "status", "--agent", AGENT, "--project", str(repo))
    assert f"{repo}/.qwen/settings.json  installed; runs here" in status.stdout, status.stdout
    result = run_agent(
        "qwen",
        repo,
        "Read the file and stop.",
        [read_x(repo), Text("done")],
        home=home,
        timeout=150,
        extra_env={"DSH_HOME": str(dsh), "PATH": env["PATH"], "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    assert counts(result.main_requests[-1]) == EVERY_FILE_ONCE, result.describe()
    no_hook_failures(tmp_path)


# What Qwen asks its model for when it compresses the history (a side request, no tools).
COMPRESS_ASK = "produce the <state_snapshot> XML"
RESUME_AFTER_SUMMARY = "Resume the prior task using the summary above."


def compressing_model(model: FakeModel) -> None:
    """The fake reports a prompt near the model's window until Qwen asks for the summary, and
    a small one after, so Qwen compresses once and keeps the summary."""
    compressed: list[bool] = []

    def prompt_tokens(request: RecordedRequest) -> int:
        if not request.main and COMPRESS_ASK in json.dumps(request.body):
            compressed.append(True)
            return 1_000_000  # what the summary replaced: Qwen counts the saving from it
        return 10 if compressed else 1_000_000

    model.report_prompt_tokens(prompt_tokens)


def compressing_run(
    tmp_path: Path, script: Sequence[Step], *, resume: bool = False, prompt: str = "Read."
) -> AgentRun:
    with FakeModel() as model:
        model.script(list(script))
        compressing_model(model)
        result = run(tmp_path, (), model=model, resume=resume, prompt=prompt)
    assert any(COMPRESS_ASK in json.dumps(r.body) for r in result.requests), "no compression"
    return result


def test_after_qwen_compresses_on_its_own_every_file_is_in_its_requests_once(
    tmp_path: Path,
) -> None:
    # Qwen compresses before the call that sends the first read's result: that call's message
    # (the tool result, with the hook's text for pkg/) stays after the summary, and so does the
    # session-start block of its system message. Then it runs SessionStart with source compact,
    # without waiting for it, whose text takes the block's place from the next request on: the
    # hook sends the baseline there again, not the nested files the kept result holds.
    repo = tmp_path / "repo"
    tree(tmp_path)
    result = compressing_run(tmp_path, [read_x(repo), read_x(repo), Text("done")], resume=True)
    printed = answers(tmp_path)
    assert [event for event, _ in printed] == ["SessionStart", "PostToolUse", "SessionStart"]
    after, last = result.main_requests[1:]
    assert RESUME_AFTER_SUMMARY in json.dumps(after.body)
    (kept,) = [p for p in parts_of(after) if p.kind == "tool_result"]
    assert "PKG-AGENTS-q4" in kept.text and "PKG-CLAUDE-q5" in kept.text
    compact_start = printed[2][1]
    assert "USER-GLOBAL-q1" in compact_start and "PKG-AGENTS-q4" not in compact_start
    assert as_sent(compact_start.strip()) in parts_of(last)[0].text
    assert counts(after) == counts(last) == EVERY_FILE_ONCE, result.describe()
    no_hook_failures(tmp_path)


def test_after_qwen_compress_by_hand_every_file_is_in_its_requests_once(tmp_path: Path) -> None:
    # /compress between turns keeps no message of a call: everything the hook had sent is
    # gone from the history but the session-start block, so the compact start sends it all.
    repo = tmp_path / "repo"
    with FakeModel() as model:
        # A history of 50,000 tokens, far below the window, so that a summary is a saving.
        model.script([read_x(repo), Text("one")])
        model.report_prompt_tokens(lambda request: 50_000)
        run(tmp_path, (), model=model, prompt="First.")
    compressing_run(tmp_path, [Text("two")], resume=True, prompt="/compress")
    third = run(tmp_path, [read_x(repo), Text("three")], resume=True, prompt="Third.")
    assert RESUME_AFTER_SUMMARY in json.dumps(third.main_requests[-1].body)
    assert counts(third.main_requests[-1]) == EVERY_FILE_ONCE, third.describe()
    no_hook_failures(tmp_path)

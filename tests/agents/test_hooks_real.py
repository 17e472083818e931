"""``dsh-sidecar hook`` installed into the real CLIs: what reaches the model's requests.

Each run installs the hooks (user scope, as ``tests/support/hooks.py`` writes them) pointing at
this checkout's ``dsh-sidecar hook --agent X``, drives reads through the fake model, and counts
the marker of every instruction file in the last request the model received.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.agent_cli import AGENTS, Agent, AgentRun, run_agent
from tests.support.hooks import HookConfig
from tests.support.recorded import RecordedRequest, count_in, parts_of
from tests.support.steps import ReadFile, Shell, Step, Text, ToolCall

pytestmark = pytest.mark.agent_clis

HOOK = shlex.join([str(Path(sys.executable).parent / "dsh-sidecar"), "hook"])
EVENTS: dict[Agent, tuple[str, ...]] = {
    # As `dsh-sidecar hooks install` writes them (docs/agents.md).
    "claude": (
        "SessionStart",
        "SubagentStart",
        "UserPromptSubmit",
        "PostToolUse",
        "InstructionsLoaded",
    ),
    "codex": ("SessionStart", "UserPromptSubmit", "PostToolUse"),
    "gemini": ("SessionStart", "BeforeAgent", "AfterTool"),
}
MARKERS = {
    "USER-GLOBAL-m1": "home/AGENTS.md",
    "ROOT-AGENTS-m2": "AGENTS.md",
    "ROOT-CLAUDE-m3": "CLAUDE.md",
    "PKG-AGENTS-m4": "pkg/AGENTS.md",
    "PKG-CLAUDE-m5": "pkg/CLAUDE.md",
    "SIBLING-m6": "other/AGENTS.md",
}
EVERY_FILE_ONCE = {m: 0 if m == "SIBLING-m6" else 1 for m in MARKERS}
CAP = 10_000


def tree(tmp_path: Path, big: bool = False) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    dsh = tmp_path / "dsh"
    dsh.mkdir()
    for marker, rel in MARKERS.items():
        path = dsh / "AGENTS.md" if rel.startswith("home/") else repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Rule {marker}\n")
    if big:  # 40 KB
        (repo / "pkg/AGENTS.md").write_text(
            "Rule PKG-AGENTS-m4\n" + "".join(f"rule {i} " + "q" * 70 + "\n" for i in range(520))
        )
    (repo / "pkg/sub").mkdir(parents=True)
    (repo / "pkg/sub/x.py").write_text("x = 1\n")
    return repo, dsh


def target(agent: Agent, repo: Path) -> str:
    # Claude's Read takes an absolute path; the others are given the path the user wrote.
    return str(repo / "pkg/sub/x.py") if agent == "claude" else "pkg/sub/x.py"


def run(
    agent: Agent,
    tmp_path: Path,
    *,
    hooks: bool = True,
    big: bool = False,
    script: Sequence[Step] | None = None,
    dsh: Path | None = None,
) -> AgentRun:
    repo, home = tree(tmp_path, big)
    config = (
        HookConfig.for_events(EVENTS[agent], f"{HOOK} --agent {agent}", timeout_s=20)
        if hooks
        else None
    )
    result = run_agent(
        agent,
        repo,
        "Read the file and stop.",
        script if script is not None else [ReadFile(target(agent, repo)), Text("done")],
        home=tmp_path / "home",
        hooks=config,
        timeout=150,
        extra_env={"DSH_HOME": str(dsh or home), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    return result


def counts(result: AgentRun) -> dict[str, int]:
    last = result.main_requests[-1]
    return {m: count_in(last, m) for m in MARKERS}


def no_hook_failures(tmp_path: Path) -> None:
    log = tmp_path / "dsh" / "log" / "hooks.log"
    assert not log.exists(), log.read_text()


@pytest.mark.parametrize("agent", AGENTS)
def test_every_applicable_file_arrives_once_and_no_siblings(agent: Agent, tmp_path: Path) -> None:
    result = run(agent, tmp_path)
    assert counts(result) == EVERY_FILE_ONCE, result.describe()
    no_hook_failures(tmp_path)


@pytest.mark.parametrize("agent", AGENTS)
def test_without_hooks_the_agent_misses_files(agent: Agent, tmp_path: Path) -> None:
    found = counts(run(agent, tmp_path, hooks=False))
    print(f"{agent} without hooks: {found}")
    assert found != EVERY_FILE_ONCE and found["USER-GLOBAL-m1"] == 0


@pytest.mark.parametrize("agent", AGENTS)
def test_a_file_changed_mid_session_arrives_after_the_next_touch(
    agent: Agent, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    change = "printf 'Rule PKG-AGENTS-V%s-m7\\n' 2 > pkg/AGENTS.md"  # the marker only on disk
    script: list[Step] = [
        ReadFile(target(agent, repo)),
        Shell(change),
        ReadFile(target(agent, repo)),
        Text("ok"),
    ]
    result = run(agent, tmp_path, script=script)
    last = result.main_requests[-1]
    assert count_in(last, "PKG-AGENTS-V2-m7") == 1, result.describe()
    assert count_in(last, "Updated instructions from: pkg/AGENTS.md") == 1
    no_hook_failures(tmp_path)


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_forty_kilobyte_nested_file_stays_within_the_cap(agent: Agent, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    # Two reads: what one hook could not fit (named in its notice) comes with the next event.
    script: list[Step] = [
        ReadFile(target(agent, repo)),
        ReadFile(target(agent, repo)),
        Text("done"),
    ]
    result = run(agent, tmp_path, big=True, script=script)
    last = result.main_requests[-1]
    assert count_in(last, "PKG-AGENTS-m4") == 1 and count_in(last, "rule 0 ") == 1
    assert count_in(last, "PKG-CLAUDE-m5") == 1
    # The hook's texts: in Claude Code's messages of their own, in Codex's <system-reminder>.
    carrying = [
        p.text
        for p in parts_of(last)
        if "hook additional context: " in p.text or "system-reminder>" in p.text
    ]
    assert any("Workspace instruction budget" in text for text in carrying), result.describe()
    # The agent's own prefix ("PostToolUse:Read hook additional context: ") is all it adds.
    assert max(len(text) for text in carrying) <= CAP + 200
    no_hook_failures(tmp_path)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_failing_hook_lets_the_turn_finish(agent: Agent, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "sessions.sqlite3").mkdir(parents=True)  # the store path is a directory
    result = run(agent, tmp_path, dsh=broken)
    assert "done" in result.stdout
    assert (broken / "log" / "hooks.log").read_text().count("\n") >= 2


def test_a_claude_subagent_gets_its_own_baseline_and_its_reads_nested_files(
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

    def step(request: RecordedRequest) -> Step:
        parts = parts_of(request)
        in_subagent = not any(prompt in p.text for p in parts)
        has_result = any(p.kind == "tool_result" for p in parts)
        if in_subagent:
            return Text("x is 1.") if has_result else ReadFile(str(repo / "pkg/sub/x.py"))
        return Text("done") if has_result else ToolCall("Agent", task)

    tree(tmp_path)
    events = EVENTS["claude"]
    result = run_agent(
        "claude",
        repo,
        prompt,
        step,
        home=tmp_path / "home",
        hooks=HookConfig.for_events(events, f"{HOOK} --agent claude", timeout_s=20),
        extra_env={"DSH_HOME": str(tmp_path / "dsh"), "DSH_TEST_STORE_NO_FSYNC": "1"},
        timeout=150,
    )
    assert result.exit_code == 0, result.describe()
    sub = [r for r in result.main_requests if not any(prompt in p.text for p in parts_of(r))]
    assert sub, result.describe()
    last = sub[-1]
    found = {m: count_in(last, m) for m in MARKERS}
    print("claude subagent's last request:", found)
    assert found == EVERY_FILE_ONCE, result.describe()
    no_hook_failures(tmp_path)


@pytest.mark.parametrize(
    ("agent", "resume"), [("claude", ["--continue"]), ("gemini", ["--resume", "latest"])]
)
def test_a_resumed_session_has_every_file_and_gets_the_change(
    agent: Agent, resume: list[str], tmp_path: Path
) -> None:
    repo, dsh = tree(tmp_path)
    config = HookConfig.for_events(EVENTS[agent], f"{HOOK} --agent {agent}", timeout_s=20)
    env = {"DSH_HOME": str(dsh), "DSH_TEST_STORE_NO_FSYNC": "1"}
    script: list[Step] = [ReadFile(target(agent, repo)), Text("one")]
    first = run_agent(
        agent, repo, "First.", script, home=tmp_path / "home", hooks=config, extra_env=env
    )
    assert first.exit_code == 0, first.describe()
    (repo / "pkg/AGENTS.md").write_text("Rule PKG-AGENTS-V3-m8\n")
    second = run_agent(
        agent,
        repo,
        "Second.",
        [ReadFile(target(agent, repo)), Text("two")],
        home=tmp_path / "home",
        hooks=config,
        extra_env=env,
        extra_args=resume,
    )
    assert second.exit_code == 0, second.describe()
    found = {m: count_in(second.main_requests[-1], m) for m in [*MARKERS, "PKG-AGENTS-V3-m8"]}
    print(f"{agent} resumed: {found}")
    once = ("USER-GLOBAL-m1", "ROOT-AGENTS-m2", "ROOT-CLAUDE-m3", "PKG-AGENTS-V3-m8")
    assert all(found[m] == 1 for m in once), found
    assert found["SIBLING-m6"] == 0
    # Gemini CLI 0.61 repeats the first session's tool result (with its hook text) on resume.
    assert found["PKG-AGENTS-m4"] == (1 if agent == "claude" else 2)
    no_hook_failures(tmp_path)


def test_after_claude_compacts_what_it_lost_arrives_again_once(tmp_path: Path) -> None:
    repo, dsh = tree(tmp_path)
    config = HookConfig.for_events(EVENTS["claude"], f"{HOOK} --agent claude", timeout_s=20)
    env = {"DSH_HOME": str(dsh), "DSH_TEST_STORE_NO_FSYNC": "1"}
    home = tmp_path / "home"
    read: list[Step] = [ReadFile(target("claude", repo)), Text("one")]
    assert (
        run_agent("claude", repo, "First.", read, home=home, hooks=config, extra_env=env).exit_code
        == 0
    )
    # Headless /compact: the summary replaces the history; SessionStart(source=compact) follows.
    compact = run_agent(
        "claude",
        repo,
        "/compact",
        [Text("Summary."), Text("ok")],
        home=home,
        hooks=config,
        extra_env=env,
        extra_args=["--continue"],
    )
    assert compact.exit_code == 0, compact.describe()
    third = run_agent(
        "claude",
        repo,
        "Third.",
        [ReadFile(target("claude", repo)), Text("three")],
        home=home,
        hooks=config,
        extra_env=env,
        extra_args=["--continue"],
    )
    assert third.exit_code == 0, third.describe()
    assert counts(third) == EVERY_FILE_ONCE, third.describe()
    no_hook_failures(tmp_path)


@pytest.mark.parametrize(
    ("pattern", "claude_loads"),
    # grep exits 0 (a match), then 1 (no match); a quoted pattern is one word, as a model writes
    [("x", True), ("absent", False), ("'x = 1'", True), ('"not in it"', False)],
)
def test_a_claude_grep_of_one_file_brings_its_nested_file_once(
    pattern: str, claude_loads: bool, tmp_path: Path
) -> None:
    # Claude Code takes `grep P FILE` as a read of FILE only when it exits 0, and then loads
    # pkg/CLAUDE.md itself; the hook sends it only when Claude Code did not.
    repo = tmp_path / "repo"
    script: list[Step] = [Shell(f"grep {pattern} pkg/sub/x.py"), Text("done")]
    result = run("claude", tmp_path, script=script)
    last = result.main_requests[-1]
    assert counts(result) == EVERY_FILE_ONCE, result.describe()
    own = count_in(last, f"Contents of {repo / 'pkg/CLAUDE.md'}:")
    assert own == (1 if claude_loads else 0), result.describe()
    no_hook_failures(tmp_path)

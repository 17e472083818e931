"""``dsh-sidecar hook`` installed into the real CLIs: what reaches the model's requests.

Each run installs the hooks pointing at this checkout's ``dsh-sidecar hook --agent X`` and drives
one read through the fake model, then counts the marker of every instruction file in the
request that follows the read.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.support.agent_cli import Agent, run_agent
from tests.support.hooks import HookConfig
from tests.support.recorded import count_in
from tests.support.steps import ReadFile, Text

pytestmark = pytest.mark.agent_clis

HOOK = shlex.join([str(Path(sys.executable).parent / "dsh-sidecar"), "hook"])
EVENTS: dict[Agent, tuple[str, ...]] = {
    "claude": ("SessionStart", "UserPromptSubmit", "PostToolUse"),
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


def tree(tmp_path: Path, big: bool = False) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    dsh = tmp_path / "dsh"
    dsh.mkdir()
    for marker, rel in MARKERS.items():
        path = dsh / "AGENTS.md" if rel.startswith("home/") else repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Rule {marker}\n")
    if big:
        (repo / "pkg/AGENTS.md").write_text(
            "PKG-AGENTS-m4\n" + "".join(f"rule {i} " + "q" * 70 + "\n" for i in range(520))
        )
    (repo / "pkg/sub").mkdir(parents=True)
    (repo / "pkg/sub/x.py").write_text("x = 1\n")
    return repo, dsh


def run(agent: Agent, tmp_path: Path, hooks: bool, big: bool = False) -> dict[str, int]:
    repo, dsh = tree(tmp_path, big)
    target = str(repo / "pkg/sub/x.py") if agent == "claude" else "pkg/sub/x.py"
    script = [ReadFile(target), Text("done")]
    config = (
        HookConfig.for_events(EVENTS[agent], f"{HOOK} --agent {agent}", timeout_s=20)
        if hooks else None
    )  # fmt: skip
    result = run_agent(
        agent, repo, "Read the file and stop.", script, home=tmp_path / "home", hooks=config,
        extra_env={"DSH_HOME": str(dsh), "DSH_TEST_STORE_NO_FSYNC": "1"}, timeout=150,
    )  # fmt: skip
    assert result.exit_code == 0, result.describe()
    last = result.main_requests[-1]
    log = dsh / "log" / "hooks.log"
    assert not log.exists() or not log.read_text(), log.read_text()
    return {m: count_in(last, m) for m in MARKERS}


def test_claude_with_hooks_sees_every_applicable_file_once(tmp_path: Path) -> None:
    counts = run("claude", tmp_path, hooks=True)
    assert counts == {
        "USER-GLOBAL-m1": 1, "ROOT-AGENTS-m2": 1, "ROOT-CLAUDE-m3": 1, "PKG-AGENTS-m4": 1,
        "PKG-CLAUDE-m5": 1, "SIBLING-m6": 0,
    }, counts  # fmt: skip


def test_claude_without_hooks_misses_agents_md(tmp_path: Path) -> None:
    counts = run("claude", tmp_path, hooks=False)
    print("claude without hooks:", counts)
    assert counts["USER-GLOBAL-m1"] == 0 and counts["ROOT-AGENTS-m2"] == 0


def test_gemini_with_hooks_sees_every_applicable_file_once(tmp_path: Path) -> None:
    counts = run("gemini", tmp_path, hooks=True)
    assert counts == {
        "USER-GLOBAL-m1": 1, "ROOT-AGENTS-m2": 1, "ROOT-CLAUDE-m3": 1, "PKG-AGENTS-m4": 1,
        "PKG-CLAUDE-m5": 1, "SIBLING-m6": 0,
    }, counts  # fmt: skip


def test_codex_with_hooks_gets_the_baseline_it_lacks(tmp_path: Path) -> None:
    counts = run("codex", tmp_path, hooks=True)
    print("codex with hooks:", counts)
    assert counts["USER-GLOBAL-m1"] == 1 and counts["ROOT-AGENTS-m2"] == 1
    assert counts["ROOT-CLAUDE-m3"] == 1 and counts["SIBLING-m6"] == 0

"""Every tool watched (issue 32, item 4), on the real CLIs: a shell command, a search, a glob
and a listing into a directory bring that directory's instruction files in the very next
request, once, with the hooks installed as ``dsh-sidecar hooks install`` writes them (its
matchers included).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from dsh_sidecar.hooks.install import HOOK_EVENTS
from tests.support.agent_cli import Agent, AgentRun, run_agent
from tests.support.hooks import Hook, HookConfig
from tests.support.recorded import count_in
from tests.support.steps import Shell, Step, Text, ToolCall

pytestmark = pytest.mark.agent_clis

HOOK = shlex.join([str(Path(sys.executable).parent / "dsh-sidecar"), "hook"])
# Directory -> the marker of its AGENTS.md (none of these directories is the session's).
MARKERS = {
    "pkg": "PKG-AGENTS-t1",
    "lib": "LIB-AGENTS-t2",
    "web": "WEB-AGENTS-t3",
    "docs": "DOCS-AGENTS-t4",
}
SIBLING = "SIBLING-AGENTS-t9"


def installed(agent: Agent) -> HookConfig:
    """The events and matchers ``hooks install`` writes, running this checkout's hook."""
    command = f"{HOOK} --agent {agent}"
    return HookConfig(tuple(Hook(e.event, command, e.matcher, 20) for e in HOOK_EVENTS[agent]))


def tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    # A root CLAUDE.md: Claude Code then loads no AGENTS.md itself, anywhere.
    (repo / "CLAUDE.md").write_text("Root rules.\n")
    for directory, marker in MARKERS.items():
        (repo / directory).mkdir()
        (repo / directory / "AGENTS.md").write_text(f"Rule {marker}\n")
    (repo / "other").mkdir()
    (repo / "other/AGENTS.md").write_text(f"Rule {SIBLING}\n")
    (repo / "pkg/x.py").write_text("x = 1\n")
    (repo / "lib/a.py").write_text("value = 2\n")
    (repo / "web/src").mkdir()
    (repo / "web/src/b.ts").write_text("export const b = 3;\n")
    (repo / "docs/guide.md").write_text("Guide.\n")
    return repo


def run(
    agent: Agent, tmp_path: Path, script: Sequence[Step], extra_args: Sequence[str] = ()
) -> AgentRun:
    repo = tree(tmp_path)
    result = run_agent(
        agent,
        repo,
        "Look around and stop.",
        list(script),
        home=tmp_path / "home",
        hooks=installed(agent),
        timeout=240,
        extra_args=extra_args,
        extra_env={"DSH_HOME": str(tmp_path / "dsh"), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    log = tmp_path / "dsh" / "log" / "hooks.log"
    assert not log.exists(), log.read_text()
    return result


def arrivals(result: AgentRun, order: Sequence[str]) -> None:
    """Step ``i`` of the script touched ``order[i]``: its marker is absent from the request
    before that tool's result and present once in the request carrying it, and in every later
    one (the history), never twice; the sibling never comes."""
    requests = result.main_requests
    assert len(requests) == len(order) + 1, result.describe()
    for i, directory in enumerate(order):
        marker = MARKERS[directory]
        counts = [count_in(r, marker) for r in requests]
        assert counts == [0] * (i + 1) + [1] * (len(order) - i), (directory, counts)
    assert all(count_in(r, SIBLING) == 0 for r in requests)


def test_claude_bash_grep_and_glob_bring_their_directories_files(tmp_path: Path) -> None:
    script: list[Step] = [
        Shell("cat pkg/x.py"),
        ToolCall("Grep", {"pattern": "value", "path": "lib"}),
        ToolCall("Glob", {"pattern": "web/**/*.ts"}),
        Text("done"),
    ]
    # Claude Code 2.1.332 declares Grep and Glob only when a tool list names them (else it
    # points the model at grep and find through Bash): docs/reference/agent-clis.md.
    result = run("claude", tmp_path, script, ["--allowedTools", "Grep,Glob"])
    arrivals(result, ["pkg", "lib", "web"])
    print(excerpt(result, 1, MARKERS["pkg"]))


def test_gemini_shell_grep_glob_and_listing_bring_their_directories_files(
    tmp_path: Path,
) -> None:
    script: list[Step] = [
        Shell("cat pkg/x.py"),
        ToolCall("grep_search", {"pattern": "value", "dir_path": "lib"}),
        ToolCall("glob", {"pattern": "web/**/*.ts"}),
        ToolCall("list_directory", {"dir_path": "docs"}),
        Text("done"),
    ]
    result = run("gemini", tmp_path, script)
    arrivals(result, ["pkg", "lib", "web", "docs"])
    print(excerpt(result, 1, MARKERS["pkg"]))


def excerpt(result: AgentRun, index: int, marker: str) -> str:
    """The text around ``marker`` in the raw body of main request ``index`` (for the report)."""
    import json

    body = json.dumps(result.main_requests[index].body, ensure_ascii=False)
    at = body.index(marker)
    return body[max(0, at - 700) : at + 200]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_searching_and_listing_through_the_shell(agent: Agent, tmp_path: Path) -> None:
    """What Claude Code tells the model to use when Grep and Glob are not declared (grep and
    find through Bash), and a listing, read through the shell reader."""
    script: list[Step] = [
        Shell("cat pkg/x.py"),
        Shell("grep -rn value lib"),
        Shell("find web -name '*.ts'"),
        Shell("ls docs"),
        Text("done"),
    ]
    arrivals(run(agent, tmp_path, script), ["pkg", "lib", "web", "docs"])

"""``dsh-sidecar hook --agent copilot-cli`` in the real GitHub Copilot CLI: what reaches the
model's requests.

The hooks are installed as ``dsh-sidecar hooks install --agent copilot-cli`` writes them (its
events and matcher, in ``~/.copilot/settings.json``) unless a test installs them itself. Copilot
loads the files of its working directory at start and a nested ``AGENTS.md`` or ``CLAUDE.md``
after it views a file below it; the hook adds the rest (complement mode): the user file, the
``.local`` overlays, what a shell command touched, changes and removals, each once.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_sidecar.hooks.install import HOOK_EVENTS
from tests.support.agent_cli import AgentRun, run_agent
from tests.support.fake_model import FakeModel
from tests.support.hooks import Hook, HookConfig
from tests.support.recorded import RecordedRequest, count_in, parts_of
from tests.support.steps import ReadFile, Shell, Step, Text, ToolCall

pytestmark = pytest.mark.agent_clis

HOOK = shlex.join([str(Path(sys.executable).parent / "dsh-sidecar"), "hook"])
CAP = 10_240
MARKERS = {
    "USER-GLOBAL-k1": "~/AGENTS.md",  # $DSH_HOME: only the hook sends it
    "ROOT-AGENTS-k2": "AGENTS.md",  # Copilot loads it at start
    "ROOT-LOCAL-k3": "AGENTS.local.md",  # only the hook
    "PKG-AGENTS-k4": "pkg/AGENTS.md",  # Copilot loads it after a view below pkg/
    "PKG-CLAUDE-k5": "pkg/CLAUDE.md",  # likewise
    "LIB-AGENTS-k6": "lib/AGENTS.md",  # touched by a shell command only: only the hook
    "SIBLING-k7": "other/AGENTS.md",  # never due
}
EVERY_FILE_ONCE = {m: 0 if m == "SIBLING-k7" else 1 for m in MARKERS}


def installed(command: str = f"{HOOK} --agent copilot-cli") -> HookConfig:
    return HookConfig(
        tuple(Hook(e.event, command, e.matcher, 20) for e in HOOK_EVENTS["copilot-cli"])
    )


def tree(tmp_path: Path) -> tuple[Path, Path]:
    repo, dsh = tmp_path / "repo", tmp_path / "dsh"
    (repo / ".git").mkdir(parents=True)
    dsh.mkdir()
    for marker, rel in MARKERS.items():
        path = dsh / rel[2:] if rel.startswith("~/") else repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Rule {marker}\n")
    (repo / "pkg" / "sub").mkdir()
    (repo / "pkg" / "sub" / "x.py").write_text("x = 1\n")
    (repo / "lib" / "y.py").write_text("y = 2\n")
    return repo, dsh


def run(
    tmp_path: Path,
    script: list[Step],
    *,
    hooks: HookConfig | None,
    prompt: str = "Do the task.",
    extra_args: tuple[str, ...] = (),
) -> AgentRun:
    repo = tmp_path / "repo"
    if not repo.exists():
        tree(tmp_path)
    result = run_agent(
        "copilot",
        repo,
        prompt,
        script,
        home=tmp_path / "home",
        hooks=hooks,
        extra_args=extra_args,
        timeout=150,
        extra_env={"DSH_HOME": str(tmp_path / "dsh"), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    assert result.outside_attempts == []
    return result


def counts(request: RecordedRequest) -> dict[str, int]:
    return {m: count_in(request, m) for m in MARKERS}


def hook_texts(request: RecordedRequest) -> list[str]:
    """What the hooks added to tool results (after Copilot's own heading), in order."""
    head = "Additional guidance from postToolUse hooks:\n"
    return [
        p.text.split(head, 1)[1]
        for p in parts_of(request)
        if p.kind == "tool_result" and head in p.text
    ]


def no_hook_failures(tmp_path: Path) -> None:
    log = tmp_path / "dsh" / "log" / "hooks.log"
    assert not log.exists(), log.read_text()


def session_ids(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "dsh" / "sessions.sqlite3") as db:
        return sorted(row[0] for row in db.execute("SELECT id FROM sessions"))


def read_then_shell(repo: Path) -> list[Step]:
    return [ReadFile(str(repo / "pkg/sub/x.py")), Shell("cat lib/y.py"), Text("done")]


def test_every_file_arrives_once_with_what_copilot_loads_itself_left_out(tmp_path: Path) -> None:
    repo, _ = tree(tmp_path)
    result = run(tmp_path, read_then_shell(repo), hooks=installed())
    first, last = result.main_requests[0], result.main_requests[-1]
    assert counts(last) == EVERY_FILE_ONCE, result.describe()
    # The baseline before the prompt: the user file and the overlay, not Copilot's own AGENTS.md.
    start = next(p.text for p in parts_of(first) if p.role == "user")
    assert "USER-GLOBAL-k1" in start and "ROOT-LOCAL-k3" in start
    assert "ROOT-AGENTS-k2" not in start
    # After the view Copilot adds pkg/'s files itself and the hook adds nothing; after the shell
    # read the hook adds lib/'s.
    view_result, _ = (p.text for p in parts_of(last) if p.kind == "tool_result")
    assert "Additional guidance" not in view_result
    (after_shell,) = hook_texts(last)
    assert "LIB-AGENTS-k6" in after_shell and len(after_shell) <= CAP
    # Copilot's sessions, under its own id.
    assert [s.split(":")[0] for s in session_ids(tmp_path)] == ["copilot-cli"]
    no_hook_failures(tmp_path)


def test_without_hooks_copilot_misses_files(tmp_path: Path) -> None:
    repo, _ = tree(tmp_path)
    found = counts(run(tmp_path, read_then_shell(repo), hooks=None).main_requests[-1])
    print(f"copilot without hooks: {found}")
    assert found["USER-GLOBAL-k1"] == found["ROOT-LOCAL-k3"] == found["LIB-AGENTS-k6"] == 0
    assert found["PKG-AGENTS-k4"] == found["ROOT-AGENTS-k2"] == 1


def test_a_change_and_a_removal_arrive_after_the_next_touch(tmp_path: Path) -> None:
    tree(tmp_path)
    script: list[Step] = [
        Shell("cat lib/y.py"),
        # Written by the shell, so only on disk: the model has not been shown the new marker.
        Shell("printf 'Rule LIB-AGENTS-V%s-k8\\n' 2 > lib/AGENTS.md; rm AGENTS.local.md"),
        Shell("cat lib/y.py"),
        Text("done"),
    ]
    last = run(tmp_path, script, hooks=installed()).main_requests[-1]
    assert count_in(last, "LIB-AGENTS-V2-k8") == 1
    assert count_in(last, "Updated instructions from: lib/AGENTS.md") == 1
    assert count_in(last, "Instructions removed: AGENTS.local.md") == 1
    assert count_in(last, "LIB-AGENTS-k6") == 1  # the old text, once, in the earlier result
    no_hook_failures(tmp_path)


def test_what_does_not_fit_under_the_cap_arrives_at_the_next_event(tmp_path: Path) -> None:
    repo, _ = tree(tmp_path)
    # Two files of about 6,000 characters, due at one event: together over the 10,240 cap.
    for name, marker in (("AGENTS.md", "BIG-ONE-k9"), ("CLAUDE.md", "BIG-TWO-k10")):
        rules = "".join(f"rule {i:03d} {'w' * 50}\n" for i in range(110))
        (repo / "lib" / name).write_text(f"Start {marker}\n{rules}End {marker}\n")
    script: list[Step] = [Shell("cat lib/y.py"), Shell("echo next"), Text("done")]
    last = run(tmp_path, script, hooks=installed()).main_requests[-1]
    texts = hook_texts(last)
    assert len(texts) == 2 and all(len(text) <= CAP for text in texts), [len(t) for t in texts]
    assert "wait for the next event" in texts[0]
    for marker in ("BIG-ONE-k9", "BIG-TWO-k10"):  # whole, once: nothing was cut
        assert count_in(last, f"Start {marker}") == count_in(last, f"End {marker}") == 1
    no_hook_failures(tmp_path)


def test_a_subagent_gets_its_own_baseline_and_its_shell_touches(tmp_path: Path) -> None:
    repo, _ = tree(tmp_path)
    prompt = "Ask a subagent to read the file."
    task = {
        "name": "reader",
        "description": "Read a file",
        "prompt": "Read lib/y.py and report.",
        "agent_type": "explore",
    }

    def step(request: RecordedRequest) -> Step:
        parts = parts_of(request)
        in_subagent = not any(prompt in p.text for p in parts)
        has_result = any(p.kind == "tool_result" for p in parts)
        if in_subagent:
            return Text("y is 2.") if has_result else Shell("cat lib/y.py")
        return Text("done") if has_result else ToolCall("task", task)

    result = run_agent(
        "copilot",
        repo,
        prompt,
        step,
        home=tmp_path / "home",
        hooks=installed(),
        timeout=150,
        extra_env={"DSH_HOME": str(tmp_path / "dsh"), "DSH_TEST_STORE_NO_FSYNC": "1"},
    )
    assert result.exit_code == 0, result.describe()
    sub = [r for r in result.main_requests if not any(prompt in p.text for p in parts_of(r))]
    assert sub, result.describe()
    found = counts(sub[-1])
    print("copilot subagent's last request:", found)
    # Its baseline came before its prompt (SubagentStart); lib/ after its shell read.
    assert found["USER-GLOBAL-k1"] == found["ROOT-LOCAL-k3"] == found["LIB-AGENTS-k6"] == 1
    assert found["SIBLING-k7"] == 0 and found["PKG-AGENTS-k4"] == 0
    first_sub = [p.text for p in parts_of(sub[0]) if p.role == "user"]
    assert any("USER-GLOBAL-k1" in t and "Read lib/y.py" in t for t in first_sub), first_sub
    sessions = session_ids(tmp_path)
    assert all(s.startswith("copilot-cli:") for s in sessions)
    assert any(s.count(":") == 2 for s in sessions), sessions  # the subagent's child session
    no_hook_failures(tmp_path)


def dsh(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DSH_HOME": str(tmp_path / "dsh"),
    }
    return subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def on_path(tmp_path: Path) -> dict[str, str]:
    """PATH with this checkout's ``dsh-sidecar`` on it: a project install writes the portable
    command, which finds the program there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "dsh-sidecar"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dsh_sidecar "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}


def test_project_hooks_run_after_the_printed_trust_step(tmp_path: Path) -> None:
    repo, _ = tree(tmp_path)
    done = dsh(tmp_path, "hooks", "install", "--agent", "copilot-cli", "--project", str(repo))
    assert done.returncode == 0, done.stderr
    assert f"hooks installed in {repo}/.github/copilot/settings.json" in done.stdout
    step = f'add "{repo}" to "trustedFolders" in ~/.copilot/config.json'
    assert step in done.stdout, done.stdout
    status = dsh(tmp_path, "hooks", "status", "--agent", "copilot-cli", "--project", str(repo))
    assert "does not run here" in status.stdout, status.stdout

    def one_run() -> AgentRun:
        result = run_agent(
            "copilot",
            repo,
            "Do the task.",
            read_then_shell(repo),
            home=tmp_path / "home",
            timeout=150,
            extra_env={
                "DSH_HOME": str(tmp_path / "dsh"),
                "DSH_TEST_STORE_NO_FSYNC": "1",
                **on_path(tmp_path),
            },
        )
        assert result.exit_code == 0, result.describe()
        return result

    untrusted = counts(one_run().main_requests[-1])
    assert untrusted["USER-GLOBAL-k1"] == untrusted["LIB-AGENTS-k6"] == 0, untrusted
    # The step, as a user would take it, in the file Copilot writes (with its comments).
    config = tmp_path / "home" / ".copilot" / "config.json"
    kept = re.sub(r"\}\s*$", "", config.read_text()).rstrip().rstrip(",")
    config.write_text(f'{kept},\n  "trustedFolders": ["{repo}"]\n}}\n')
    status = dsh(tmp_path, "hooks", "status", "--agent", "copilot-cli", "--project", str(repo))
    assert "runs here" in status.stdout and "does not run" not in status.stdout, status.stdout
    assert counts(one_run().main_requests[-1]) == EVERY_FILE_ONCE
    no_hook_failures(tmp_path)


@pytest.mark.parametrize("also_copilot_s_own", [False, True])
def test_a_hook_installed_for_claude_code_serves_copilot_as_copilot(
    also_copilot_s_own: bool, tmp_path: Path
) -> None:
    """Copilot CLI runs the project's .claude/settings.json in a trusted folder: the hook
    installed there for Claude Code answers it in Copilot's shape and keeps its session under
    Copilot's id; with the hooks installed for Copilot CLI too, both run and each file still
    arrives once."""
    repo, _ = tree(tmp_path)
    done = dsh(
        tmp_path, "hooks", "install", "--agent", "claude", "--shared", "--project", str(repo)
    )
    assert done.returncode == 0, done.stderr
    assert (repo / ".claude" / "settings.json").is_file()
    result = run_agent(
        "copilot",
        repo,
        "Do the task.",
        read_then_shell(repo),
        home=tmp_path / "home",
        hooks=installed() if also_copilot_s_own else None,
        extra_args=("--trust-folder",),
        timeout=150,
        extra_env={
            "DSH_HOME": str(tmp_path / "dsh"),
            "DSH_TEST_STORE_NO_FSYNC": "1",
            **on_path(tmp_path),
        },
    )
    assert result.exit_code == 0, result.describe()
    assert counts(result.main_requests[-1]) == EVERY_FILE_ONCE, result.describe()
    assert [s.split(":")[0] for s in session_ids(tmp_path)] == ["copilot-cli"]
    no_hook_failures(tmp_path)


def test_the_user_install_runs_in_any_folder(tmp_path: Path) -> None:
    """``hooks install --scope user`` writes ~/.copilot/settings.json with this machine's guarded
    command (a shell line) and its 5-second timeout; Copilot runs it without any trust step."""
    repo, _ = tree(tmp_path)
    done = dsh(tmp_path, "hooks", "install", "--agent", "copilot-cli", "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert "GitHub Copilot CLI runs user hooks in any folder: no trust step." in done.stdout
    result = run(tmp_path, read_then_shell(repo), hooks=None)
    assert counts(result.main_requests[-1]) == EVERY_FILE_ONCE, result.describe()
    no_hook_failures(tmp_path)


def test_a_resumed_session_gets_its_baseline_again_and_the_change_once(tmp_path: Path) -> None:
    """``copilot --continue`` keeps the tool results, with what the hook added to them, but not
    the SessionStart text before the first prompt: the baseline is given again, nothing else."""
    repo, dsh_home = tree(tmp_path)
    env = {"DSH_HOME": str(dsh_home), "DSH_TEST_STORE_NO_FSYNC": "1"}
    first = run_agent(
        "copilot",
        repo,
        "First.",
        [Shell("cat lib/y.py"), Text("one")],
        home=tmp_path / "home",
        hooks=installed(),
        extra_env=env,
    )
    assert first.exit_code == 0, first.describe()
    (repo / "lib" / "AGENTS.md").write_text("Rule LIB-AGENTS-V3-k9\n")
    second = run_agent(
        "copilot",
        repo,
        "Second.",
        [Shell("cat lib/y.py"), Text("two")],
        home=tmp_path / "home",
        hooks=installed(),
        extra_env=env,
        resume=True,
    )
    assert second.exit_code == 0, second.describe()
    last = second.main_requests[-1]
    assert count_in(last, "First.") == 1  # the same conversation
    found = counts(last)
    assert found["USER-GLOBAL-k1"] == found["ROOT-LOCAL-k3"] == 1, found
    assert found["LIB-AGENTS-k6"] == 1 and count_in(last, "LIB-AGENTS-V3-k9") == 1
    assert [s.split(":")[0] for s in session_ids(tmp_path)] == ["copilot-cli"]
    no_hook_failures(tmp_path)


# Copilot's summary request: the history so far and then this user message (tools declared).
SUMMARY_ASK = "Please create a detailed summary of the conversation so far"
# The first message of the history once a summary replaced what came before.
SUMMARIZED = "Some of the conversation history has been summarized"


def asks_for_summary(request: RecordedRequest) -> bool:
    users = [p for p in parts_of(request) if p.role == "user"]
    return bool(users) and SUMMARY_ASK in users[-1].text


def test_after_copilot_compacts_every_file_is_in_its_history_once(tmp_path: Path) -> None:
    # Copilot compacts on its own once a request's reported size nears its prompt limit: it
    # fires PreCompact, asks for a summary of the history so far, and goes on with the summary
    # in place of it, keeping what came after. Its own root AGENTS.md stays in the system
    # message; the start text, the nested files it added and the hook texts before are gone,
    # and it fires no SessionStart. The hook keeps the reset at PreCompact and gives all of it
    # again with the next tool result, once.
    repo, dsh = tree(tmp_path)
    steps: list[Step] = [
        ReadFile(str(repo / "pkg/sub/x.py")),
        Shell("cat lib/y.py"),
        ReadFile(str(repo / "pkg/sub/x.py")),
        Text("done"),
    ]
    summarized: list[bool] = []

    def step(request: RecordedRequest) -> Step:
        if asks_for_summary(request):
            summarized.append(True)
            return Text("<overview>The user asked for a task.</overview>")
        return steps.pop(0) if steps else Text("done")

    with FakeModel() as model:
        model.script(step)
        # Near the limit below until the summary is asked for, small after it.
        model.report_prompt_tokens(lambda request: 100 if summarized else 19_000)
        result = run_agent(
            "copilot",
            repo,
            "Do the task.",
            model=model,
            home=tmp_path / "home",
            hooks=installed(),
            timeout=150,
            extra_env={
                "DSH_HOME": str(dsh),
                "DSH_TEST_STORE_NO_FSYNC": "1",
                "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000",
            },
        )
    assert result.exit_code == 0, result.describe()
    assert summarized, "Copilot did not compact"
    last = result.main_requests[-1]
    assert SUMMARIZED in parts_of(last)[1].text, result.describe()
    assert counts(last) == EVERY_FILE_ONCE, result.describe()
    no_hook_failures(tmp_path)

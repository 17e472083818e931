"""``dsh-sidecar hooks install --scope project``, the printed trust step, then the real CLI runs
our hook: its SessionStart text and, after a read, the nested instructions reach the model.

Nothing here writes the agents' hook settings by hand: the installer does, as a user would run
it (a subprocess of this checkout's ``dsh-sidecar``); the test then applies the trust step the
installer printed for that agent and runs one headless turn that reads ``pkg/sub/x.py``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agent_cli import AGENTS, Agent, codex_config, run_agent
from tests.support.fake_model import FakeModel
from tests.support.recorded import count_in
from tests.support.steps import ReadFile, Text

pytestmark = pytest.mark.agent_clis

GLOBAL = "USER-GLOBAL-RULE-4c1e"  # $DSH_HOME/AGENTS.md: no agent loads it itself
NESTED = "NESTED-RULE-9a07"  # pkg/sub/AGENTS.md: Codex and Gemini never load it themselves
PROMPT = "Read pkg/sub/x.py and say what VALUE is."


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "sub" / "x.py").write_text("VALUE = 1\n")
    (repo / "pkg" / "sub" / "AGENTS.md").write_text(f"Nested rule {NESTED}.\n")
    # With a CLAUDE.md, Claude Code loads no AGENTS.md itself: the nested one can only come
    # from our after-tool hook, in all three agents.
    (repo / "CLAUDE.md").write_text("Root rule.\n")
    return repo


def on_path(tmp_path: Path) -> str:
    """A PATH with this checkout's ``dsh-sidecar`` on it, as a user's install leaves it: the
    command a shared (portable) install writes finds the program there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "dsh-sidecar"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dsh_sidecar "$@"\n')
    shim.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"


def dsh(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", *args],
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("agent", AGENTS)
def test_installed_project_hooks_run_in_the_real_cli(agent: Agent, tmp_path: Path) -> None:
    repo = project(tmp_path)
    home = tmp_path / "home"
    dsh_home = tmp_path / "dsh"
    dsh_home.mkdir()
    (dsh_home / "AGENTS.md").write_text(f"Global rule {GLOBAL}.\n")
    # Not home/.codex: the harness writes its own config.toml there on every run.
    codex_home = tmp_path / "codex-home"
    path = on_path(tmp_path)  # Codex's and Gemini's project files get the portable command
    env = {"PATH": path, "DSH_HOME": str(dsh_home), "CODEX_HOME": str(codex_home)}

    done = dsh(
        home,
        env,
        "hooks",
        "install",
        "--agent",
        agent,
        "--scope",
        "project",
        "--project",
        str(repo),
    )
    assert done.returncode == 0, done.stderr
    settings = {
        "claude": ".claude/settings.local.json",  # this machine's file: Claude Code reads it
        "codex": ".codex/hooks.json",
        "gemini": ".gemini/settings.json",
    }[agent]
    assert f"hooks installed in {repo}/{settings}" in done.stdout

    # The trust step the installer printed, applied as a user would.
    extra_env = {"DSH_HOME": str(dsh_home), "PATH": path}
    extra_args: list[str] = []
    model = FakeModel().start()
    try:
        model.script(
            [
                ReadFile(str(repo / "pkg/sub/x.py") if agent == "claude" else "pkg/sub/x.py"),
                Text("VALUE is 1."),
            ]
        )
        if agent == "codex":
            step = f'[projects."{repo}"]\ntrust_level = "trusted"\n'
            assert step.replace("\n", "\n  ").strip() in done.stdout.replace("\n  ", "\n  ")
            codex_home.mkdir(parents=True)
            (codex_home / "config.toml").write_text(codex_config(model.base_url) + step)
            extra_env["CODEX_HOME"] = str(codex_home)
            extra_args = CODEX_EXEC_TRUST
        elif agent == "gemini":
            assert "GEMINI_CLI_TRUST_WORKSPACE=true" in done.stdout
            extra_env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"

        status = dsh(
            home, {**env, **extra_env}, "hooks", "status", "--agent", agent, "--root", str(repo)
        )
        assert f"{repo}/{settings}  installed; runs here" in status.stdout, status.stdout

        run = run_agent(
            agent,
            repo,
            PROMPT,
            model=model,
            home=home,
            extra_env=extra_env,
            extra_args=extra_args,
            timeout=150,
        )
    finally:
        model.stop()
    assert run.exit_code == 0, run.describe()
    first, *_, last = run.main_requests
    assert count_in(first, GLOBAL) == 1, run.describe()  # SessionStart, before the first step
    assert count_in(first, NESTED) == 0
    assert count_in(last, GLOBAL) == 1
    assert count_in(last, NESTED) == 1, run.describe()  # after the read, exactly once
    log = dsh_home / "log" / "hooks.log"
    assert not log.exists() or log.read_text() == "", log.read_text()


# Codex's `exec` runs project hooks only with this flag, even for a trusted project (the
# installer says so).
CODEX_EXEC_TRUST = ["--dangerously-bypass-hook-trust"]


def test_uninstall_leaves_the_cli_without_our_hooks(tmp_path: Path) -> None:
    repo = project(tmp_path)
    home = tmp_path / "home"
    dsh_home = tmp_path / "dsh"
    dsh_home.mkdir()
    (dsh_home / "AGENTS.md").write_text(f"Global rule {GLOBAL}.\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DSH_HOME": str(dsh_home)}
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    assert (
        dsh(home, env, "hooks", "install", "--agent", "claude", "--root", str(repo)).returncode == 0
    )
    assert (
        dsh(home, env, "hooks", "uninstall", "--agent", "claude", "--root", str(repo)).returncode
        == 0
    )
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Read"]}}
    run = run_agent(
        "claude",
        repo,
        PROMPT,
        [Text("VALUE is 1.")],
        home=home,
        extra_env={"DSH_HOME": str(dsh_home)},
        timeout=150,
    )
    assert run.exit_code == 0, run.describe()
    assert count_in(run.main_requests[0], GLOBAL) == 0


@pytest.mark.parametrize("comment", [False, True])
def test_claude_code_ignores_a_settings_file_with_comments(tmp_path: Path, comment: bool) -> None:
    """Why `hooks install` refuses a settings file with comments rather than rewriting it: Claude
    Code 2.1.332 skips such a file's hooks without a word (Gemini CLI strips comments)."""
    repo = project(tmp_path)
    marker = "COMMENTED-SETTINGS-5d2f"
    answer = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": marker}}
    )
    command = f"{sys.executable} -c {shlex.quote(f'print({answer!r})')}"
    hooks = json.dumps({"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]})
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{\n" + ("  // mine\n" if comment else "") + f'  "hooks": {hooks}\n}}\n')
    run = run_agent(
        "claude", repo, "Say hello.", [Text("Hello.")], home=tmp_path / "home", timeout=150
    )
    assert run.exit_code == 0, run.describe()
    assert count_in(run.main_requests[0], marker) == (0 if comment else 1), run.describe()


def without_dsh_sidecar(path: str) -> str:
    """``path`` without the directories that hold a ``dsh-sidecar``: a teammate's machine."""
    kept = [d for d in path.split(os.pathsep) if d and not os.path.exists(f"{d}/dsh-sidecar")]
    return os.pathsep.join(kept)


def hook_responses(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e.get("type") == "system" and e.get("subtype") == "hook_response"]


def test_a_shared_claude_install_runs_from_path_and_is_quiet_without_it(tmp_path: Path) -> None:
    """``--shared`` writes the portable command into the committed ``.claude/settings.json``: on
    a machine with dsh-sidecar on PATH it delivers the baseline; on a teammate's without it,
    Claude Code runs the guard, which ends each hook with status 0 and nothing printed, where
    the bare missing program failed every event (``/bin/sh: 1: …: not found``)."""
    repo = project(tmp_path)
    home = tmp_path / "home"
    dsh_home = tmp_path / "dsh"
    dsh_home.mkdir()
    (dsh_home / "AGENTS.md").write_text(f"Global rule {GLOBAL}.\n")
    path = on_path(tmp_path)
    env = {"PATH": path, "DSH_HOME": str(dsh_home)}
    done = dsh(
        home, env, "hooks", "install", "--agent", "claude", "--shared", "--project", str(repo)
    )
    assert done.returncode == 0, done.stderr
    settings = repo / ".claude" / "settings.json"
    assert f"hooks installed in {settings}" in done.stdout
    assert str(tmp_path) not in settings.read_text()  # no path of this machine in it
    assert not (repo / ".claude" / "settings.local.json").exists()

    with_it = run_agent(
        "claude",
        repo,
        "Say hello.",
        [Text("Hello.")],
        home=home,
        extra_env={"DSH_HOME": str(dsh_home), "PATH": path},
        timeout=150,
    )
    assert with_it.exit_code == 0, with_it.describe()
    assert count_in(with_it.main_requests[0], GLOBAL) == 1, with_it.describe()

    teammate = without_dsh_sidecar(path)
    assert shutil.which("dsh-sidecar", path=teammate) is None
    without = run_agent(
        "claude",
        repo,
        "Say hello.",
        [Text("Hello.")],
        home=tmp_path / "teammate-home",
        extra_env={"DSH_HOME": str(tmp_path / "teammate-dsh"), "PATH": teammate},
        timeout=150,
    )
    assert without.exit_code == 0, without.describe()
    assert count_in(without.main_requests[0], GLOBAL) == 0
    responses = hook_responses(without.events())
    assert responses, without.describe()  # the hooks ran …
    for response in responses:  # … and said nothing, failed nothing
        assert (response["exit_code"], response["outcome"]) == (0, "success"), response
        assert (response["stdout"], response["stderr"]) == ("", ""), response

"""``hooks install`` for a team (issue 32, deliver 2), on real git repositories, through real
``dsh-sidecar`` processes: which file it chooses, what command goes in, what git is told, the
refusal outside a repository, ``--project`` and ``--shared``, uninstall of every form, and
``doctor``'s finding of entries whose program is gone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_sidecar.hooks.command_form import (
    guarded,
    is_portable,
    missing_program,
    portable_command,
    unguarded,
)
from dsh_sidecar.hooks.install import is_ours

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")  # the README's edit loop has it
CLAUDE_EVENTS = "SessionStart, SubagentStart, UserPromptSubmit, PostToolUse, InstructionsLoaded"
TEAM_NOTE = (
    "  for the team: commit it; each teammate needs dsh-sidecar on PATH (pipx install of a"
    " dsh-sidecar checkout, or a virtualenv's dsh-sidecar linked into ~/.local/bin); without it"
    " the hooks end at once and print nothing"
)
PORTABLE = "command -v dsh-sidecar >/dev/null 2>&1 || exit 0; exec dsh-sidecar hook --agent {}"


def git(repo: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout


class Machine:
    """A HOME, a DSH_HOME and a PATH of their own; ``dsh`` runs this checkout's CLI there."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.dsh_home = tmp_path / "dsh"
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        # dsh-sidecar on PATH (the portable command's program), and git.
        shim = self.bin / "dsh-sidecar"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dsh_sidecar "$@"\n')
        shim.chmod(0o755)
        assert GIT is not None
        self.path = f"{self.bin}{os.pathsep}{os.path.dirname(GIT)}"

    def dsh(
        self, cwd: Path, *args: str, path: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {
            "HOME": str(self.home),
            "DSH_HOME": str(self.dsh_home),
            "PATH": self.path if path is None else path,
            "LC_ALL": "C.UTF-8",
        }
        return subprocess.run(
            [sys.executable, "-m", "dsh_sidecar", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / "pkg").mkdir(parents=True)
    git(top, "init", "-q")
    (top / "README").write_text("x\n")
    git(top, "add", "README")
    git(top, "commit", "-q", "-m", "start")
    return top.resolve()


def handlers(path: Path) -> list[str]:
    document = json.loads(path.read_text())
    return [
        h["command"] for groups in document["hooks"].values() for g in groups for h in g["hooks"]
    ]


def executable() -> str:
    """What install writes for this checkout: the dsh-sidecar beside the test's Python."""
    return os.path.join(os.path.dirname(sys.executable), "dsh-sidecar")


# --- the command forms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "/x/bin/dsh-sidecar hook --agent claude",  # what earlier versions wrote
        "'/a b/dsh-sidecar' hook --agent claude",
        "dsh-sidecar hook --agent claude",
        "/usr/bin/python3 -m dsh_sidecar hook --agent claude",
        guarded("/x/bin/dsh-sidecar hook --agent claude"),
        guarded("'/a b/dsh-sidecar' hook --agent claude"),
        guarded("/usr/bin/python3 -m dsh_sidecar hook --agent claude"),
        PORTABLE.format("claude"),
    ],
)
def test_every_form_ever_written_is_ours(command: str) -> None:
    handler = {"type": "command", "command": command}
    assert is_ours(handler, "claude")
    assert not is_ours(handler, "gemini")


def test_the_guards() -> None:
    assert guarded("'/a b/dsh-sidecar' hook --agent codex") == (
        "[ -x '/a b/dsh-sidecar' ] || exit 0; exec '/a b/dsh-sidecar' hook --agent codex"
    )
    assert portable_command("gemini") == PORTABLE.format("gemini")
    assert unguarded(PORTABLE.format("gemini")) == "dsh-sidecar hook --agent gemini"
    # A guard around another program than the one it runs is not ours to unwrap.
    assert unguarded("[ -x /bin/true ] || exit 0; exec /x/dsh-sidecar hook --agent claude") == (
        "[ -x /bin/true ] || exit 0; exec /x/dsh-sidecar hook --agent claude"
    )
    assert not is_ours(
        {"command": "[ -x /bin/true ] || exit 0; exec /x/dsh-sidecar hook --agent claude"},
        "claude",
    )
    assert is_portable(PORTABLE.format("codex"))
    assert not is_portable(guarded("/x/dsh-sidecar hook --agent codex"))


def test_the_guard_runs_the_program_or_ends_quietly(tmp_path: Path) -> None:
    program = tmp_path / "bin" / "dsh-sidecar"
    program.parent.mkdir()
    program.write_text('#!/bin/sh\necho "ran with $*"; exit 3\n')
    program.chmod(0o755)
    present = guarded(f"{program} hook --agent claude")
    gone = guarded(f"{tmp_path}/gone/dsh-sidecar hook --agent claude")
    for command, path, expected in [
        (present, "/usr/bin:/bin", (3, "ran with hook --agent claude\n", "")),
        (gone, "/usr/bin:/bin", (0, "", "")),
        (
            PORTABLE.format("claude"),
            f"{program.parent}:/usr/bin:/bin",
            (3, "ran with hook --agent claude\n", ""),
        ),
        (PORTABLE.format("claude"), "/usr/bin:/bin", (0, "", "")),
    ]:
        # As Claude Code runs a hook: /bin/sh -c COMMAND.
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            env={"PATH": path},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == expected, command


def test_missing_program(tmp_path: Path) -> None:
    assert missing_program(guarded("/gone/dsh-sidecar hook --agent x"), "/usr/bin", "/") == (
        "/gone/dsh-sidecar"
    )
    assert missing_program(PORTABLE.format("x"), str(tmp_path), "/") == "dsh-sidecar"
    (tmp_path / "dsh-sidecar").write_text("#!/bin/sh\n")
    (tmp_path / "dsh-sidecar").chmod(0o755)
    assert missing_program(PORTABLE.format("x"), str(tmp_path), "/") is None
    assert missing_program(f"{tmp_path}/dsh-sidecar hook --agent x", "", "/") is None
    (tmp_path / "dsh-sidecar").chmod(0o644)  # not executable: the guard would not run it
    assert missing_program(f"{tmp_path}/dsh-sidecar hook --agent x", "", "/") is not None


# --- which project, which file ----------------------------------------------------------------


def test_claude_gets_the_local_file_which_git_ignores(machine: Machine, repo: Path) -> None:
    done = machine.dsh(repo / "pkg", "hooks", "install", "--agent", "claude")
    local = repo / ".claude" / "settings.local.json"
    exclude = repo / ".git" / "info" / "exclude"
    command = f"[ -x {executable()} ] || exit 0; exec {executable()} hook --agent claude"
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        f"installing into the project at {repo} (the git repository you are in)",
        f"Claude Code: hooks installed in {local} ({CLAUDE_EVENTS})",
        f"  command: {command}",
        f"  added **/.claude/settings.local.json to {exclude}: git leaves this machine's file out",
        "Claude Code runs them in every session started after this: no trust step.",
        f"files changed: {local}, {exclude}",
    ]
    assert set(handlers(local)) == {command}
    assert not (repo / ".claude" / "settings.json").exists()
    assert exclude.read_text().endswith(
        "# dsh-sidecar hooks install: Claude Code's local settings stay out of git\n"
        "**/.claude/settings.local.json\n"
    )
    assert git(repo, "status", "--porcelain") == ""  # nothing for a `git add -A` to pick up
    # Again: nothing changes, the rule is not added twice.
    again = machine.dsh(repo, "hooks", "install", "--agent", "claude")
    assert "hooks already installed" in again.stdout and "files changed" not in again.stdout
    assert exclude.read_text().count("**/.claude/settings.local.json") == 1


def test_a_rule_git_already_has_is_not_added(machine: Machine, repo: Path) -> None:
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    before = (repo / ".git" / "info" / "exclude").read_bytes()
    done = machine.dsh(repo, "hooks", "install", "--agent", "claude")
    assert done.returncode == 0
    assert "added" not in done.stdout
    assert (repo / ".git" / "info" / "exclude").read_bytes() == before


def test_outside_a_repository_install_refuses(machine: Machine, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for action in ("install", "uninstall"):
        done = machine.dsh(elsewhere, "hooks", action, "--agent", "claude")
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"dsh-sidecar: {elsewhere} is not inside a git repository: name the project with"
            " --project DIR (or use --scope user for every project of this user)\n"
        )
    assert os.listdir(elsewhere) == []
    assert not machine.dsh_home.exists()
    # The user's own files need no project.
    done = machine.dsh(elsewhere, "hooks", "install", "--agent", "claude", "--scope", "user")
    assert done.returncode == 0 and "installing into" not in done.stdout
    assert (machine.home / ".claude" / "settings.json").is_file()
    done = machine.dsh(elsewhere, "hooks", "status", "--agent", "claude")
    assert done.stdout.splitlines()[0] == (
        "not in a git repository: the user's files only (--project DIR names one)"
    )


def test_project_names_the_project(machine: Machine, tmp_path: Path, repo: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = machine.dsh(elsewhere, "hooks", "install", "--agent", "claude", "--project", str(repo))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"installing into the project at {repo} (given with --project)"
    )
    assert (repo / ".claude" / "settings.local.json").is_file()
    assert os.listdir(elsewhere) == []
    # The repository the shell stands in is not the one --project names: it stays untouched.
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    done = machine.dsh(other, "hooks", "install", "--agent", "gemini", "--project", str(repo))
    assert done.returncode == 0
    assert (repo / ".gemini" / "settings.json").is_file()
    assert sorted(os.listdir(other)) == [".git"]


# --- shared files -----------------------------------------------------------------------------


def test_shared_writes_the_portable_command_and_warns_about_a_tracked_file(
    machine: Machine, repo: Path
) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"allow": ["Read"]}}\n')
    git(repo, "add", ".claude/settings.json")
    git(repo, "commit", "-q", "-m", "settings")
    done = machine.dsh(repo, "hooks", "install", "--agent", "claude", "--shared")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[1:4] == [
        f"Claude Code: hooks installed in {settings} ({CLAUDE_EVENTS})",
        f"  command: {PORTABLE.format('claude')}",
        TEAM_NOTE,
    ]
    assert lines[-1] == f"files changed: {settings}"
    assert done.stderr == (
        f"dsh-sidecar: warning: {settings} is tracked by git: once committed, this change"
        " reaches everyone who pulls\n"
    )
    assert set(handlers(settings)) == {PORTABLE.format("claude")}
    assert str(machine.bin.parent) not in settings.read_text()  # no path of this machine
    assert not (repo / ".claude" / "settings.local.json").exists()
    # With the team's entries there, a local install would run every hook twice: none is made.
    done = machine.dsh(repo, "hooks", "install", "--agent", "claude")
    assert done.stdout.splitlines()[1] == (
        f"Claude Code: the hooks are already in {settings}, for the team (dsh-sidecar from"
        " PATH); nothing written"
    )
    assert not (repo / ".claude" / "settings.local.json").exists()
    # A plain uninstall takes this machine's entries only; the team's stay until --shared.
    done = machine.dsh(repo, "hooks", "uninstall", "--agent", "claude")
    assert done.stdout.splitlines()[1:] == [
        f"Claude Code: nothing to remove: no dsh-sidecar hooks in {repo}/.claude/settings.local.json",
        f"  the team's entries in {settings} stay (dsh-sidecar from PATH);"
        " `dsh-sidecar hooks uninstall --agent claude --shared` removes them",
    ]
    assert set(handlers(settings)) == {PORTABLE.format("claude")}
    done = machine.dsh(repo, "hooks", "uninstall", "--agent", "claude", "--shared")
    assert done.returncode == 0
    assert settings.read_text() == '{"permissions": {"allow": ["Read"]}}\n'  # byte for byte


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_codex_and_gemini_projects_get_the_portable_command(
    machine: Machine, repo: Path, agent: str
) -> None:
    done = machine.dsh(repo, "hooks", "install", "--agent", agent)
    path = repo / (".codex/hooks.json" if agent == "codex" else ".gemini/settings.json")
    assert (done.returncode, done.stderr) == (0, "")  # untracked, and dsh-sidecar is on PATH
    assert f"  command: {PORTABLE.format(agent)}" in done.stdout.splitlines()
    assert TEAM_NOTE in done.stdout.splitlines()
    assert set(handlers(path)) == {PORTABLE.format(agent)}
    # Without dsh-sidecar on PATH, the hooks would do nothing here: install says so and how.
    assert GIT is not None
    done = machine.dsh(repo, "hooks", "install", "--agent", agent, path=os.path.dirname(GIT))
    assert done.returncode == 0
    assert done.stderr == (
        "dsh-sidecar: warning: dsh-sidecar is not on PATH here, so these hooks do nothing on this"
        f" machine until it is: ln -s {executable()} ~/.local/bin/ (with ~/.local/bin on PATH), or"
        " pipx install a dsh-sidecar checkout\n"
    )


def test_shared_is_for_project_files(machine: Machine, repo: Path) -> None:
    done = machine.dsh(repo, "hooks", "install", "--agent", "claude", "--scope", "user", "--shared")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "dsh-sidecar: --shared is for a project's files (--scope project)\n"


def test_no_git_no_failure(machine: Machine, repo: Path) -> None:
    """Without git on PATH: no tracked-file warning, no failure; the rule still goes into the
    repository's .git/info/exclude."""
    done = machine.dsh(repo, "hooks", "install", "--agent", "claude", path=str(machine.bin))
    assert (done.returncode, done.stderr) == (0, "")
    assert (
        (repo / ".git" / "info" / "exclude")
        .read_text()
        .endswith("**/.claude/settings.local.json\n")
    )


# --- what earlier versions wrote --------------------------------------------------------------


def test_an_earlier_absolute_entry_in_the_shared_file_goes(machine: Machine, repo: Path) -> None:
    """Earlier versions wrote this machine's path into the committed settings.json: installing
    into settings.local.json takes it out of there (naming the file), and keeps the rest."""
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {"type": "command", "command": "/old/venv/bin/dsh-sidecar hook --agent claude"}
    mine = {"type": "command", "command": "~/bin/lint.sh"}
    settings.write_text(
        json.dumps(
            {"hooks": {"SessionStart": [{"hooks": [old]}], "Stop": [{"hooks": [mine]}]}}, indent=2
        )
        + "\n"
    )
    git(repo, "add", ".claude/settings.json")
    git(repo, "commit", "-q", "-m", "old install")
    done = machine.dsh(repo, "hooks", "install", "--agent", "claude")
    assert done.returncode == 0
    local = repo / ".claude" / "settings.local.json"
    exclude = repo / ".git" / "info" / "exclude"
    assert (
        f"  removed this machine's entries of an earlier install from {settings}"
        in done.stdout.splitlines()
    )
    assert done.stdout.splitlines()[-1] == f"files changed: {local}, {settings}, {exclude}"
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": [{"hooks": [mine]}]}}
    assert done.stderr == (
        f"dsh-sidecar: warning: {settings} is tracked by git: once committed, this change"
        " reaches everyone who pulls\n"
    )


# --- doctor -----------------------------------------------------------------------------------


def test_doctor_finds_hooks_whose_program_is_gone(machine: Machine, repo: Path) -> None:
    assert machine.dsh(repo, "hooks", "install", "--agent", "claude").returncode == 0
    assert machine.dsh(repo, "hooks", "install", "--agent", "gemini").returncode == 0
    healthy = machine.dsh(repo, "doctor")
    assert healthy.returncode == 0, healthy.stdout
    assert "is gone" not in healthy.stdout

    # The virtualenv install wrote is deleted (here: the entries name one that never was).
    local = repo / ".claude" / "settings.local.json"
    local.write_text(local.read_text().replace(executable(), "/gone/venv/bin/dsh-sidecar"))
    # And this machine has no dsh-sidecar on PATH for the team's Gemini entries.
    user = machine.home / ".codex" / "hooks.json"
    user.parent.mkdir()
    user.write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "/old/dsh-sidecar hook --agent codex",
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    assert GIT is not None
    sick = machine.dsh(repo, "doctor", path=os.path.dirname(GIT))
    assert sick.returncode == 1
    rows = [line for line in sick.stdout.splitlines() if "which" in line]
    # In the registry's order (dsh_sidecar/agents/registry.py).
    assert rows == [
        "hooks        codex: the hooks in ~/.codex/hooks.json run /old/dsh-sidecar, which no longer"
        " exists; remove them with `dsh-sidecar hooks uninstall --agent codex --scope user`",
        f"hooks        claude: the hooks in {local} run /gone/venv/bin/dsh-sidecar, which no"
        " longer exists; remove them with `dsh-sidecar hooks uninstall --agent claude`",
        f"hooks        gemini: the hooks in {repo}/.gemini/settings.json run dsh-sidecar, which is"
        " not on PATH; remove them with `dsh-sidecar hooks uninstall --agent gemini`",
    ]
    assert sick.stdout.splitlines()[-1] == "status       a hook runs a dsh-sidecar that is gone"

    # Each named command takes its entries out, whatever form they have; doctor is healthy again.
    for args in (
        ["--agent", "claude"],
        ["--agent", "codex", "--scope", "user"],
        ["--agent", "gemini"],
    ):
        assert machine.dsh(repo, "hooks", "uninstall", *args).returncode == 0
    assert not local.exists()
    cured = machine.dsh(repo, "doctor", path=os.path.dirname(GIT))
    assert cured.returncode == 0, cured.stdout

"""``dsh-sidecar hooks install|uninstall|status`` on real files (hooks/install.py and friends)."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.cli import main
from dsh_sidecar.hooks.install import (
    HOOK_EVENTS,
    InstallError,
    hook_command,
    install,
    is_ours,
    settings_path,
    status,
    uninstall,
)
from dsh_sidecar.hooks.trust import trust_here

Capture = pytest.CaptureFixture[bytes]
EXE = "/opt/dsh venv/bin/dsh-sidecar"  # a space, so the command must be quoted


def cmd(agent: str, exe: str = EXE) -> str:
    return hook_command(agent, exe)


def load(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "os-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    # A dsh-sidecar on PATH, as the portable (team) command needs; git for the tracked check.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dsh-sidecar").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "dsh-sidecar").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/local/bin:/usr/bin:/bin")
    (tmp_path / "p" / ".git").mkdir(parents=True)
    return tmp_path


# --- the entries ------------------------------------------------------------------------------


def test_claude_entries(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    assert install("claude", str(path), cmd("claude")).changed
    hooks = load(path)["hooks"]
    assert list(hooks) == [
        "SessionStart",
        "SubagentStart",
        "UserPromptSubmit",
        "PostToolUse",
        "InstructionsLoaded",
    ]
    handler = {"type": "command", "command": f"'{EXE}' hook --agent claude", "timeout": 5}
    assert hooks["SessionStart"] == [{"hooks": [handler]}]
    assert hooks["PostToolUse"] == [
        {"matcher": "Bash|Edit|Glob|Grep|MultiEdit|NotebookEdit|Read|Write", "hooks": [handler]}
    ]
    assert "PreToolUse" not in hooks  # its text would not reach the model before the tool


def test_codex_entries_have_no_matcher(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    install("codex", str(path), cmd("codex"))
    hooks = load(path)["hooks"]
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "PostToolUse"]
    assert all(list(groups[0]) == ["hooks"] for groups in hooks.values())
    assert hooks["PostToolUse"][0]["hooks"][0]["timeout"] == 5


def test_gemini_entries_count_milliseconds_and_anchor_matchers(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install("gemini", str(path), cmd("gemini"))
    hooks = load(path)["hooks"]
    assert list(hooks) == ["SessionStart", "BeforeAgent", "AfterTool"]
    assert hooks["AfterTool"][0]["matcher"] == (
        "^(glob|grep_search|list_directory|read_file|read_many_files|replace|run_shell_command"
        "|write_file)$"
    )
    assert hooks["BeforeAgent"][0]["hooks"][0]["timeout"] == 5000


def test_the_table_uses_the_records_tool_names() -> None:
    from dsh_sidecar.agents.claude_code import HOOKS as CLAUDE
    from dsh_sidecar.agents.gemini_cli import HOOKS as GEMINI

    post = next(e for e in HOOK_EVENTS["claude"] if e.event == "PostToolUse")
    claude_tools = {t.name for t in CLAUDE.tools}
    assert post.matcher is not None and set(post.matcher.split("|")) == claude_tools
    files = {t.name for t in CLAUDE.tools if t.reader == "file"}
    assert files == {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit"}
    assert {*files, "Bash", "Grep", "Glob"} == claude_tools
    after = next(e for e in HOOK_EVENTS["gemini"] if e.event == "AfterTool")
    gemini_tools = {t.name for t in GEMINI.tools}
    assert after.matcher is not None and set(after.matcher[2:-2].split("|")) == gemini_tools


@pytest.mark.parametrize(
    ("command", "agent", "ours"),
    [
        ("/x/bin/dsh-sidecar hook --agent claude", "claude", True),
        ("'/a b/dsh-sidecar' hook --agent claude", "claude", True),
        ("dsh-sidecar hook --agent claude --mode all", "claude", True),
        ("/usr/bin/python3 -m dsh_sidecar hook --agent codex", "codex", True),
        ("/x/bin/dsh-sidecar hook --agent codex", "claude", False),
        ("/x/bin/dsh-sidecar-wrapper hook --agent claude", "claude", False),
        ("/x/bin/dsh-sidecar serve", "claude", False),
        ("echo dsh-sidecar hook --agent claude", "claude", False),
        ("my-hook.sh", "claude", False),
        ("DSH_HOME=/x /b/dsh-sidecar hook --agent gemini", "gemini", True),
        ("'unbalanced", "claude", False),
    ],
)
def test_which_handlers_are_ours(command: str, agent: str, ours: bool) -> None:
    assert is_ours({"type": "command", "command": command}, agent) is ours


def test_is_ours_ignores_what_is_not_a_handler() -> None:
    assert not is_ours("dsh-sidecar hook --agent claude", "claude")
    assert not is_ours({"command": 3}, "claude")


# --- merging into an existing file ------------------------------------------------------------

THEIRS = {"type": "command", "command": "~/bin/lint.sh", "timeout": 30}
EXISTING = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}],
        "Stop": [{"hooks": [THEIRS]}],
    },
    "zzz": [1, 2, {"nested": None}],
}


def test_other_keys_and_hooks_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(EXISTING))
    install("claude", str(path), cmd("claude"))
    after = load(path)
    assert list(after) == ["model", "permissions", "hooks", "zzz"]
    assert {k: after[k] for k in ("model", "permissions", "zzz")} == {
        k: EXISTING[k] for k in ("model", "permissions", "zzz")
    }
    assert after["hooks"]["Stop"] == [{"hooks": [THEIRS]}]
    assert after["hooks"]["PostToolUse"][0] == {"matcher": "Bash", "hooks": [THEIRS]}
    assert len(after["hooks"]["PostToolUse"]) == 2
    uninstall("claude", str(path))
    assert load(path) == EXISTING


def test_a_second_install_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(EXISTING, indent=4))  # not our formatting
    install("claude", str(path), cmd("claude"))
    before = path.read_bytes()
    inode, mtime = path.stat().st_ino, path.stat().st_mtime_ns
    assert not install("claude", str(path), cmd("claude")).changed
    assert path.read_bytes() == before
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (inode, mtime)


def test_an_untouched_file_is_not_reformatted(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = b'{"hooks":{},   "a":1}'
    path.write_bytes(original)
    assert not uninstall("claude", str(path)).changed
    assert path.read_bytes() == original


def test_a_new_path_replaces_our_old_entry(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install("claude", str(path), cmd("claude", "/old/bin/dsh-sidecar"))
    install("claude", str(path), cmd("claude", "/new/bin/dsh-sidecar"))
    text = path.read_text()
    assert "/old/" not in text
    assert text.count("/new/bin/dsh-sidecar hook --agent claude") == 5


def test_our_group_keeps_its_place(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install("claude", str(path), cmd("claude"))
    document = load(path)
    document["hooks"]["SessionStart"].append({"hooks": [THEIRS]})
    path.write_text(json.dumps(document))
    assert not install("claude", str(path), cmd("claude")).changed
    assert load(path)["hooks"]["SessionStart"][1] == {"hooks": [THEIRS]}


def test_a_group_shared_with_another_handler(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    old = {"type": "command", "command": "/old/dsh-sidecar hook --agent claude", "timeout": 60}
    shared = {"matcher": "Read", "hooks": [THEIRS, old]}
    path.write_text(json.dumps({"hooks": {"PostToolUse": [shared]}}))
    install("claude", str(path), cmd("claude"))
    groups = load(path)["hooks"]["PostToolUse"]
    assert groups[0] == {"matcher": "Read", "hooks": [THEIRS]}
    assert len(groups) == 2 and is_ours(groups[1]["hooks"][0], "claude")
    uninstall("claude", str(path))
    assert load(path) == {"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [THEIRS]}]}}


def test_uninstall_keeps_another_agents_entries(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install("claude", str(path), cmd("claude"))
    install("codex", str(path), cmd("codex"))  # nonsense, but not ours to remove
    uninstall("claude", str(path))
    assert status("codex", str(path)).installed
    assert status("claude", str(path)).state == "not installed"


def test_uninstall_of_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    assert not uninstall("claude", str(path)).changed
    assert not path.parent.exists()


def test_uninstall_drops_what_it_emptied_only(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {"Stop": []}}))
    install("claude", str(path), cmd("claude"))
    uninstall("claude", str(path))
    assert load(path) == {"hooks": {"Stop": []}}
    path.write_text("{}")
    install("claude", str(path), cmd("claude"))
    uninstall("claude", str(path))
    assert load(path) == {}


# --- files that are refused -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{\n  "a": 1,\n  "b": \n}\n', ":4:1: not valid JSON"),
        (b'{"a": 1}\n{"b": 2}', ":2:1: not valid JSON (Extra data)"),
        (b'{\n  // mine\n  "a": 1\n}', ":2: has comments"),
        (b'{\n  "u": "http://x",\n  /* c */ "a": 1\n}', ":3: has comments"),
        (b"[1, 2]", ": not a JSON object"),
        (b'{"hooks": []}', ': "hooks" is not an object'),
        (b'{"hooks": {"PostToolUse": {}}}', ': "hooks"."PostToolUse" is not a list'),
        (b'{\n"a": "\xff"}', ":2: not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
    ],
)
def test_a_file_that_does_not_parse_is_refused_unchanged(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    operations: tuple[Callable[[], object], ...] = (
        lambda: install("claude", str(path), cmd("claude")),
        lambda: uninstall("claude", str(path)),
    )
    for operation in operations:
        with pytest.raises(InstallError) as raised:
            operation()
        assert str(raised.value).startswith(str(path))
        assert expected in str(raised.value) and str(raised.value).endswith("; left unchanged")
        assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["settings.json"]  # no temporary left behind


def test_a_url_in_a_string_is_not_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"u": "http://x/*y*/", "v": "a\\"//b"}')
    install("gemini", str(path), cmd("gemini"))
    assert load(path)["u"] == "http://x/*y*/"


def test_an_empty_file_or_a_bom(tmp_path: Path) -> None:
    empty, bom = tmp_path / "a.json", tmp_path / "b.json"
    empty.write_bytes(b"  \n")
    bom.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    install("claude", str(empty), cmd("claude"))
    install("claude", str(bom), cmd("claude"))
    assert status("claude", str(empty)).installed
    assert bom.read_bytes().startswith(b'\xef\xbb\xbf{"a": 1, "hooks": {')  # the mark is kept
    assert json.loads(bom.read_text(encoding="utf-8-sig"))["a"] == 1


def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    path.chmod(0o444)
    with pytest.raises(InstallError, match="read-only; left unchanged"):
        install("claude", str(path), cmd("claude"))
    assert path.read_text() == "{}"


def test_the_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    path.chmod(0o600)
    install("claude", str(path), cmd("claude"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlinked_file_stays_a_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}')
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    install("claude", str(link), cmd("claude"))
    assert link.is_symlink() and os.readlink(link) == str(dotfiles)
    assert load(dotfiles)["model"] == "opus" and status("claude", str(link)).installed


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    os.mkfifo(path)
    result: list[BaseException] = []

    def attempt() -> None:
        try:
            install("claude", str(path), cmd("claude"))
        except BaseException as exc:
            result.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(30)  # a guard against a hang, not a speed check
    assert not worker.is_alive()
    assert isinstance(result[0], InstallError) and "not a regular file" in str(result[0])
    assert stat.S_ISFIFO(path.lstat().st_mode)


def test_a_directory_in_the_way(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.mkdir()
    with pytest.raises(InstallError, match="not a regular file"):
        install("claude", str(path), cmd("claude"))


# --- status -----------------------------------------------------------------------------------


def test_status_states(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert status("claude", str(path)).state == "not installed"
    install("claude", str(path), cmd("claude"))
    assert status("claude", str(path)).state == "installed"
    document = load(path)
    del document["hooks"]["InstructionsLoaded"]
    path.write_text(json.dumps(document))
    assert status("claude", str(path)).state == "partly installed"
    assert status("claude", str(path)).detail == "missing InstructionsLoaded"
    install("claude", str(path), cmd("claude"))
    document = load(path)
    document["hooks"]["PostToolUse"][0]["matcher"] = "Read"
    path.write_text(json.dumps(document))
    assert status("claude", str(path)).state == "outdated"
    path.write_text("{")
    assert status("claude", str(path)).state == "unreadable"


# --- where ------------------------------------------------------------------------------------


def test_settings_paths() -> None:
    env = {"CODEX_HOME": "/ch", "GEMINI_CLI_HOME": "/gh"}
    assert settings_path("claude", "project", "/p", {}, "/h") == "/p/.claude/settings.json"
    assert settings_path("codex", "project", "/p", {}, "/h") == "/p/.codex/hooks.json"
    assert settings_path("gemini", "project", "/p", {}, "/h") == "/p/.gemini/settings.json"
    assert settings_path("claude", "user", "/p", env, "/h") == "/h/.claude/settings.json"
    assert settings_path("codex", "user", "/p", {}, "/h") == "/h/.codex/hooks.json"
    assert settings_path("codex", "user", "/p", env, "/h") == "/ch/hooks.json"
    assert settings_path("gemini", "user", "/p", {}, "/h") == "/h/.gemini/settings.json"
    assert settings_path("gemini", "user", "/p", env, "/h") == "/gh/.gemini/settings.json"


# --- trust ------------------------------------------------------------------------------------


def test_codex_trust(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".codex").mkdir(parents=True)
    assert not trust_here("codex", "project", "/p", {}, str(home)).runs
    config = home / ".codex" / "config.toml"
    config.write_text('[projects."/p"]\ntrust_level = "trusted"\n')
    assert trust_here("codex", "project", "/p", {}, str(home)).runs
    assert not trust_here("codex", "project", "/q", {}, str(home)).runs
    config.write_text('[projects."/p"]\ntrust_level = "untrusted"\n')
    assert "untrusted" in trust_here("codex", "user", "/p", {}, str(home)).detail
    config.write_text("[projects\n")
    assert "does not parse" in trust_here("codex", "user", "/p", {}, str(home)).detail


def test_gemini_trust(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".gemini").mkdir(parents=True)
    project = tmp_path / "work" / "p"
    project.mkdir(parents=True)
    root = str(project)
    folders = home / ".gemini" / "trustedFolders.json"

    def runs(env: dict[str, str] | None = None, scope: str = "project") -> bool:
        return trust_here("gemini", scope, root, env or {}, str(home)).runs

    assert not runs()
    assert runs(scope="user")
    assert runs({"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert not runs({"GEMINI_CLI_TRUST_WORKSPACE": "false"}, scope="user")
    folders.write_text(json.dumps({root: "TRUST_FOLDER"}))
    assert runs()
    folders.write_text(json.dumps({str(tmp_path / "work" / "x"): "TRUST_PARENT"}))
    assert runs()
    folders.write_text(json.dumps({str(tmp_path): "TRUST_FOLDER", root: "DO_NOT_TRUST"}))
    assert not runs()
    folders.write_text(json.dumps({str(tmp_path): "DO_NOT_TRUST", root: "TRUST_FOLDER"}))
    assert runs()
    folders.write_text("{}")
    (home / ".gemini" / "settings.json").write_text(
        '{"security": {"folderTrust": {"enabled": false}}}'
    )
    assert runs()


# --- the command line -------------------------------------------------------------------------


def run(capsysbinary: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


def test_cli_install_status_uninstall(
    env: Path, capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = env / "p"
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")  # the default root is the repository's top
    code, out, err = run(capsysbinary, "hooks", "install", "--agent", "codex")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"installing into the project at {project} (the git repository you are in)",
        f"Codex CLI: hooks installed in {project}/.codex/hooks.json"
        " (SessionStart, UserPromptSubmit, PostToolUse)",
        # Codex has no project file that git leaves out: the portable command, never a path.
        "  command: command -v dsh-sidecar >/dev/null 2>&1 || exit 0;"
        " exec dsh-sidecar hook --agent codex",
        "  for the team: commit it; each teammate needs dsh-sidecar on PATH (pipx install of a"
        " dsh-sidecar checkout, or a virtualenv's dsh-sidecar linked into ~/.local/bin);"
        " without it the hooks end at once and print nothing",
        "Codex CLI runs a project's hooks only in a trusted project. Add to ~/.codex/config.toml:",
        f'  [projects."{project}"]',
        '  trust_level = "trusted"',
        "(or run `codex exec --trust` there once). Then `codex exec` needs"
        " --dangerously-bypass-hook-trust, and interactive Codex asks you to review the new hooks.",
        f"files changed: {project}/.codex/hooks.json",
    ]
    code, out, _ = run(capsysbinary, "hooks", "install", "--agent", "codex")
    assert code == 0 and "already installed" in out
    code, out, _ = run(capsysbinary, "hooks", "status", "--agent", "codex")
    assert code == 0
    assert out.splitlines()[0].startswith(
        f"codex   project  {project}/.codex/hooks.json  installed; does not run here"
    )
    assert out.splitlines()[1] == "codex   user     ~/.codex/hooks.json  not installed"
    code, out, _ = run(capsysbinary, "hooks", "uninstall", "--agent", "codex")
    assert out == (
        f"removing from the project at {project} (the git repository you are in)\n"
        f"Codex CLI: dsh-sidecar hooks removed; deleted {project}/.codex/hooks.json and"
        f" {project}/.codex, created by install\n"
    )


def test_cli_user_scope_and_root(env: Path, capsysbinary: Capture) -> None:
    code, out, _ = run(capsysbinary, "hooks", "install", "--agent", "gemini", "--scope", "user")
    assert code == 0 and out.startswith("Gemini CLI: hooks installed in ~/.gemini/settings.json")
    assert "no trust step" in out
    code, out, _ = run(
        capsysbinary, "hooks", "install", "--agent", "claude", "--root", str(env / "p")
    )
    # --root: the option's earlier name, for --project.
    assert (env / "p" / ".claude" / "settings.local.json").is_file()
    assert not (env / "p" / ".claude" / "settings.json").exists()


def test_cli_refuses_a_broken_file(env: Path, capsysbinary: Capture) -> None:
    path = env / "p" / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_bytes(b'{\n  "a": 1,\n}\n')
    code, out, err = run(
        capsysbinary, "hooks", "install", "--agent", "claude", "--project", str(env / "p")
    )
    assert (code, out) == (2, "")
    assert (
        err
        == f"dsh-sidecar: {path}:3:1: not valid JSON (Expecting property name enclosed in double quotes); left unchanged\n"
    )
    assert path.read_bytes() == b'{\n  "a": 1,\n}\n'
    code, out, err = run(capsysbinary, "hooks", "status", "--root", str(env / "p"))
    assert code == 2 and f"claude  local    {path}  unreadable" in out


def test_cli_usage(env: Path, capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary, "hooks")
    assert (code, out) == (2, "") and err.startswith("usage: dsh-sidecar hooks [-h] ACTION ...")
    code, _, err = run(capsysbinary, "hooks", "install")
    assert code == 2 and "the following arguments are required: --agent" in err
    code, _, err = run(capsysbinary, "hooks", "install", "--agent", "cursor")
    assert code == 2 and "invalid choice: 'cursor'" in err
    code, _, err = run(capsysbinary, "hooks", "status", "--root", str(env / "nowhere"))
    assert code == 2 and "no such directory" in err


def test_doctor_shows_the_hooks(
    env: Path, capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(env / "p")
    run(capsysbinary, "hooks", "install", "--agent", "claude")
    _, out, _ = run(capsysbinary, "doctor")
    rows = [line for line in out.splitlines() if line.startswith("hooks ")]
    # In the registry's order (dsh_sidecar/agents/registry.py).
    assert rows == [
        f"hooks        codex: not installed (project {env}/p/.codex/hooks.json, user ~/.codex/hooks.json)",
        f"hooks        claude: installed in local {env}/p/.claude/settings.local.json, runs here: no trust step",
        f"hooks        copilot-cli: not installed (project {env}/p/.github/copilot/settings.json, user ~/.copilot/settings.json)",
        f"hooks        gemini: not installed (project {env}/p/.gemini/settings.json, user ~/.gemini/settings.json)",
        f"hooks        qwen-code: not installed (project {env}/p/.qwen/settings.json, user ~/.qwen/settings.json)",
    ]

"""A hostile repository commits its agent settings as links out of itself: ``hooks install`` and
``hooks uninstall`` at project scope refuse them, and write nothing anywhere (hooks/confine.py).

Each test runs this checkout's ``dsh-sidecar`` as a user would, in a real temporary tree: the
repository sits in ``work/``, next to the victim files a link points at.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "dsh_sidecar", "hooks"]
VICTIM = b'{\n  "model": "opus"\n}\n'


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "work" / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return tmp_path


def dsh(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tree / "home"),
        "DSH_HOME": str(tree / "dsh"),
    }
    return subprocess.run(
        [*CLI, *args, "--root", str(tree / "work" / "repo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def snapshot(top: Path) -> dict[str, bytes | str]:
    """Every path under ``top`` with its content (a link: its target), ``.git`` aside."""
    seen: dict[str, bytes | str] = {}
    for directory, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                seen[path] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                seen[path] = Path(path).read_bytes()
            else:
                seen[path] = "dir"
    return seen


def refused(tree: Path, agent: str, link: Path, target: Path, action: str = "install") -> None:
    before = snapshot(tree)
    done = dsh(tree, action, "--agent", agent)
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith(f"dsh-sidecar: {link}"), done.stderr
    assert f"a link that leads out of the project, to {target};" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(tree) == before  # nothing written, in the project, outside it, or in DSH_HOME


def test_a_settings_file_linked_out_of_the_project(tree: Path) -> None:
    outside = tree / "work" / "outside.json"
    outside.write_bytes(VICTIM)
    link = tree / "work" / "repo" / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to("../../outside.json")
    refused(tree, "claude", link, outside)


def test_a_local_settings_file_linked_out_of_the_project(tree: Path) -> None:
    """Claude Code's ``settings.local.json``, where install writes by default, is checked the
    same way: a repository may commit one as a link too."""
    outside = tree / "work" / "outside.json"
    outside.write_bytes(VICTIM)
    link = tree / "work" / "repo" / ".claude" / "settings.local.json"
    link.parent.mkdir()
    link.symlink_to("../../outside.json")
    refused(tree, "claude", link, outside)
    refused(tree, "claude", link, outside, action="uninstall")
    assert outside.read_bytes() == VICTIM


def test_a_dangling_link_out_of_the_project(tree: Path) -> None:
    link = tree / "work" / "repo" / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to("../../outside.json")
    refused(tree, "claude", link, tree / "work" / "outside.json")
    assert not (tree / "work" / "outside.json").exists()


@pytest.mark.parametrize("exists", [False, True])
def test_a_settings_directory_linked_out_of_the_project(tree: Path, exists: bool) -> None:
    elsewhere = tree / "x"
    if exists:
        elsewhere.mkdir()
        (elsewhere / "settings.json").write_bytes(VICTIM)
    link = tree / "work" / "repo" / ".gemini"
    link.symlink_to(elsewhere)  # absolute, as ``.gemini -> /tmp/x``
    refused(tree, "gemini", link, elsewhere)
    assert elsewhere.exists() == exists


def test_codex_files_and_a_chain_of_links(tree: Path) -> None:
    repo = tree / "work" / "repo"
    (tree / "work" / "codex").mkdir()
    (repo / "inner").symlink_to("../codex")
    (repo / ".codex").symlink_to("inner")  # inside, but through a link that is not
    refused(tree, "codex", repo / ".codex", tree / "work" / "codex")
    (repo / ".codex").unlink()
    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").symlink_to(tree / "home" / "hooks.json")
    refused(tree, "codex", repo / ".codex" / "hooks.json", tree / "home" / "hooks.json")


def test_uninstall_refuses_too(tree: Path) -> None:
    repo = tree / "work" / "repo"
    assert dsh(tree, "install", "--agent", "claude").returncode == 0
    real = tree / "work" / "claude"
    (repo / ".claude").rename(real)
    (repo / ".claude").symlink_to(real)
    refused(tree, "claude", repo / ".claude", real, action="uninstall")


def test_links_inside_the_project_are_followed(tree: Path) -> None:
    repo = tree / "work" / "repo"
    (repo / "config" / "codex").mkdir(parents=True)
    (repo / ".codex").symlink_to("config/codex")
    done = dsh(tree, "install", "--agent", "codex")
    assert done.returncode == 0, done.stderr
    assert (repo / "config" / "codex" / "hooks.json").is_file()
    assert (repo / ".codex").is_symlink()


def test_a_root_given_through_a_link_is_the_project(tree: Path) -> None:
    (tree / "alias").symlink_to(tree / "work" / "repo")
    done = subprocess.run(
        [*CLI, "install", "--agent", "claude", "--root", str(tree / "alias")],
        env={**os.environ, "HOME": str(tree / "home"), "DSH_HOME": str(tree / "dsh")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tree / "work" / "repo" / ".claude" / "settings.local.json").is_file()


def test_user_scope_follows_the_users_own_links(tree: Path) -> None:
    dotfiles = tree / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_bytes(VICTIM)
    (tree / "home" / ".claude").mkdir()
    (tree / "home" / ".claude" / "settings.json").symlink_to(dotfiles)
    done = dsh(tree, "install", "--agent", "claude", "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert b"hook --agent claude" in dotfiles.read_bytes()
    assert dsh(tree, "uninstall", "--agent", "claude", "--scope", "user").returncode == 0
    assert dotfiles.read_bytes() == VICTIM

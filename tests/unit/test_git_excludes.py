"""git's other ignore files: the repository's ``info/exclude`` (a worktree's shared one too) and
the user's global excludes file, honoured like ``.gitignore`` when respectGitignore is on, found
without running git and parsed once per file version."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.instrkit import instructions, states, write_tree
from tests.support.sessionkit import Kit, all_changes, opened, start

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem, Probe, ReadResult
from dsh_sidecar.sources.agent_instructions.baseline import load_document_chain
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser, excludes_file_setting
from dsh_sidecar.sources.agent_instructions.gitignore import IgnoreHit, IgnoreMatcher


class CountingFS(LocalFileSystem):
    def __init__(self) -> None:
        self.reads: list[str] = []

    def read_text(self, probe: Probe, max_source_bytes: int, **kwargs: object) -> ReadResult:
        self.reads.append(probe.path)
        return super().read_text(probe, max_source_bytes, **kwargs)  # type: ignore[arg-type]


def user(tmp_path: Path, xdg: Path | None = None) -> GitUser:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return GitUser(str(home), str(xdg) if xdg is not None else None)


def matcher(
    root: Path,
    git_user: GitUser,
    settings: InstructionSettings | None = None,
    fs: LocalFileSystem | None = None,
) -> IgnoreMatcher:
    return IgnoreMatcher(
        str(root), settings or InstructionSettings(), fs or LocalFileSystem(), git_user=git_user
    )


def test_info_exclude_ignores_like_a_root_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_tree(root, {".git/info/exclude": "# local\nscratch/\n", "scratch/AGENTS.md": "x\n"})
    m = matcher(root, user(tmp_path))
    hit = m.check_directory(str(root / "scratch"))
    assert hit == IgnoreHit("scratch/", ".git/info/exclude", "scratch/")
    assert hit.describe() == "scratch/ ignored by 'scratch/' (.git/info/exclude)"
    assert m.check_directory(str(root / "src")) is None


def test_a_gitignore_overrides_info_exclude_which_overrides_the_global_file(
    tmp_path: Path,
) -> None:
    git_user = user(tmp_path)
    write_tree(Path(git_user.home), {".config/git/ignore": "build/\nlogs/\n!keep/\n"})
    root = tmp_path / "p"
    write_tree(
        root,
        {
            ".git/info/exclude": "!build/\nkeep/\n",
            ".gitignore": "!keep/\n",
            "build/": "",
            "logs/": "",
            "keep/": "",
        },
    )
    m = matcher(root, git_user)
    assert m.check_directory(str(root / "build")) is None  # info/exclude re-includes it
    assert m.check_directory(str(root / "logs")) == IgnoreHit(
        "logs/", "~/.config/git/ignore", "logs/"
    )
    assert m.check_directory(str(root / "keep")) is None  # the .gitignore re-includes it


def test_xdg_config_home_moves_the_global_file(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    write_tree(xdg, {"git/ignore": "cache/\n"})
    root = tmp_path / "p"
    write_tree(root, {".git/": "", "cache/": ""})
    hit = matcher(root, user(tmp_path, xdg)).check_directory(str(root / "cache"))
    assert hit is not None and hit.source == str(xdg / "git" / "ignore")
    # The default location under the home directory is then not read.
    write_tree(tmp_path / "home", {".config/git/ignore": "other/\n"})
    write_tree(root, {"other/": ""})
    assert matcher(root, user(tmp_path, xdg)).check_directory(str(root / "other")) is None


def test_core_excludes_file_of_the_users_config_wins_over_the_default(tmp_path: Path) -> None:
    git_user = user(tmp_path)
    home = Path(git_user.home)
    write_tree(
        home,
        {
            ".config/git/config": "[core]\n\texcludesFile = ~/from-xdg-config\n",
            ".gitconfig": '[user]\n  name = x\n[Core]\n  ExcludesFile = "~/my ignore" ; note\n',
            "my ignore": "tmp/\n",
            "from-xdg-config": "xdg/\n",
            ".config/git/ignore": "default/\n",
        },
    )
    root = tmp_path / "p"
    write_tree(root, {".git/": "", "tmp/": "", "xdg/": "", "default/": ""})
    m = matcher(root, git_user)
    assert m.check_directory(str(root / "tmp")) == IgnoreHit("tmp/", "~/my ignore", "tmp/")
    assert m.check_directory(str(root / "xdg")) is None  # ~/.gitconfig is read last and wins
    assert m.check_directory(str(root / "default")) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[core]\nexcludesfile = /a/b\n", "/a/b"),
        ("[core]\n  excludesFile=/a # comment\n", "/a"),
        ('[core]\nexcludesFile = "/a;b#c"\n', "/a;b#c"),
        ('[core]\nexcludesFile = "C:\\\\x\\"y"\n', 'C:\\x"y'),
        ("[core]\nexcludesFile = /first\nexcludesFile = /second\n", "/second"),
        ('[core "sub"]\nexcludesFile = /no\n', None),
        ("[user]\nexcludesFile = /no\n", None),
        ("[core]\nexcludesFile\n", None),
        ("", None),
    ],
)
def test_excludes_file_setting_reads_gits_format(text: str, expected: str | None) -> None:
    assert excludes_file_setting(text) == expected


def test_off_with_respect_gitignore_false(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_tree(root, {".git/info/exclude": "scratch/\n", "scratch/": ""})
    m = matcher(root, user(tmp_path), instructions(respectGitignore=False))
    assert m.check_directory(str(root / "scratch")) is None


def test_a_linked_worktree_uses_the_shared_info_exclude(tmp_path: Path) -> None:
    """A real ``git worktree``: its ``.git`` is a file naming a per-worktree git directory,
    whose ``commondir`` leads to the main repository's, which holds ``info/exclude``."""
    main = tmp_path / "main"
    main.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=m"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    (main / "README").write_text("x\n")
    subprocess.run([*git, "-C", str(main), "add", "README"], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-qm", "init"], check=True)
    wt = tmp_path / "wt"
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(wt), "-b", "w"], check=True)
    assert (wt / ".git").is_file()
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("local-only/\n")
    (wt / "local-only").mkdir()
    hit = matcher(wt, user(tmp_path)).check_directory(str(wt / "local-only"))
    assert hit is not None and hit.pattern == "local-only/"
    assert hit.source == str(main / ".git" / "info" / "exclude")


def test_each_file_is_parsed_once_per_version(tmp_path: Path) -> None:
    git_user = user(tmp_path)
    write_tree(Path(git_user.home), {".gitconfig": "[core]\nexcludesFile = ~/ign\n", "ign": "a/\n"})
    root = tmp_path / "p"
    write_tree(root, {".git/info/exclude": "b/\n", "a/": "", "b/": "", "c/": ""})
    fs = CountingFS()
    m = matcher(root, git_user, fs=fs)
    for _ in range(3):
        with m.one_pass():
            assert m.check_directory(str(root / "a")) is not None
            assert m.check_directory(str(root / "b")) is not None
            assert m.check_directory(str(root / "c")) is None
    read_once = sorted(os.path.basename(p) for p in fs.reads)
    assert read_once == [".gitconfig", "exclude", "ign"]
    # A new version is read again, and its patterns apply from then on.
    (root / ".git" / "info" / "exclude").write_text("c/\n")
    os.utime(root / ".git" / "info" / "exclude", ns=(1, 1))
    with m.one_pass():
        assert m.check_directory(str(root / "c")) is not None
        assert m.check_directory(str(root / "b")) is None
    assert [os.path.basename(p) for p in fs.reads].count("exclude") == 2


def test_document_chains_report_the_exclude_file(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_tree(root, {".git/info/exclude": "gen/\n", "AGENTS.md": "r\n", "gen/AGENTS.md": "g\n"})
    load = load_document_chain(
        str(root / "gen"),
        InstructionSettings(),
        LocalFileSystem(),
        dsh_home=str(tmp_path / "dsh"),
        git_user=user(tmp_path),
    )
    assert states(load) == [("AGENTS.md", "included"), ("gen/AGENTS.md", "ignored")]
    assert load.entries[1].reason == "gen/ ignored by 'gen/' (.git/info/exclude)"


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root\n")
    k.write("scratch/AGENTS.md", "scratch\n")
    k.write("src/AGENTS.md", "src\n")
    yield k
    await k.close()


async def test_a_session_never_discovers_files_below_an_excluded_directory(kit: Kit) -> None:
    write_tree(kit.root, {".git/info/exclude": "scratch/\n"})
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "scratch/x.py"}, False)
    svc.tool_result(sid, "t2", None, "read", {"file_path": "src/x.py"}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "src/AGENTS.md")]


async def test_an_exclude_changed_mid_session_applies_to_the_next_touch(kit: Kit) -> None:
    """A warm touch reuses its plan only while every ignore file it consulted is unchanged."""
    write_tree(kit.root, {".git/info/exclude": "scratch/\n"})
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "scratch/x.py"}, False)
    assert await svc.pending(sid) == []
    (kit.root / ".git" / "info" / "exclude").write_text("# nothing\n")
    svc.tool_result(sid, "t2", None, "read", {"file_path": "scratch/x.py"}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "scratch/AGENTS.md")]

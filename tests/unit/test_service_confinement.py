"""Sessions and symlinks that leave the project: the first step, touches, links re-pointed between
touches, a changed allowedSymlinkTargets, and links swapped between a file's check and its read.

Everything runs through the real session service on a real tree and a real SQLite store; the
races come from ``LocalFileSystem`` subclasses that change the tree at the exact moment between
probe and open, which no timing could hit reliably.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.sessionkit import (
    Kit,
    all_changes,
    check_store_consistent,
    instructions,
    opened,
    remove_text,
    set_text,
    start,
    step,
)

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sessions.service import SessionService

SECRET = "SECRET: the key a repository must not hand to a model\n"


def relink(link: Path, target: str | Path) -> None:
    """Re-point ``link`` atomically, as ``ln -sfn`` does."""
    tmp = link.with_name(link.name + ".new")
    tmp.symlink_to(target)
    os.replace(tmp, link)


def no_secret_anywhere(kit: Kit, svc: SessionService, sid: str) -> None:
    """Neither the log nor the store file holds any byte of the secret."""
    log = check_store_consistent(svc, sid)
    assert all(SECRET.strip() not in str(e.data) for e in log)
    for path in kit.tmp.glob("s.sqlite3*"):
        assert SECRET.strip().encode() not in path.read_bytes()


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/x.py", "x = 1\n")
    k.write("shared/pkg.md", "pkg rules, kept in shared/\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text(SECRET)
    (outside / "rules.md").write_text("rules from outside\n")
    yield k
    await k.close()


async def test_the_first_step_leaves_out_a_file_that_links_outside(kit: Kit) -> None:
    (kit.root / "CLAUDE.md").symlink_to("../outside/secret")
    svc = kit.service()
    sid = await opened(kit, svc)
    messages = await start(svc, sid)
    assert all_changes(messages) == [("set", "AGENTS.md")]
    no_secret_anywhere(kit, svc, sid)


async def test_a_touch_never_discovers_a_file_that_links_outside(kit: Kit) -> None:
    (kit.root / "pkg/AGENTS.md").symlink_to(kit.tmp / "outside/secret")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/x.py"}, False)
    assert await svc.pending(sid) == []
    await svc.editor_touch([str(kit.root / "pkg/x.py")])
    assert await svc.pending(sid) == []
    assert await step(svc, sid, 1, 2) == []
    no_secret_anywhere(kit, svc, sid)


async def test_a_loaded_link_re_pointed_outside_is_removed_and_back_inside_set_again(
    kit: Kit,
) -> None:
    link = kit.root / "pkg/AGENTS.md"
    link.symlink_to("../shared/pkg.md")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)

    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/x.py"}, False)
    (loaded,) = instructions(await svc.pending(sid))
    assert loaded.text == set_text("pkg/AGENTS.md", "pkg", "pkg rules, kept in shared/\n")
    await step(svc, sid, 1, 2)

    relink(link, kit.tmp / "outside/secret")  # between two touches
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/x.py"}, False)
    (removal,) = instructions(await svc.pending(sid))
    assert removal.text == remove_text("pkg/AGENTS.md")
    assert removal.source["changes"] == [
        {"action": "remove", "scope": "pkg\u0000AGENTS.md", "path": "pkg/AGENTS.md"}
    ]
    await step(svc, sid, 1, 3)

    relink(link, "../outside/rules.md")  # another outside target: still nothing to say
    svc.tool_result(sid, "t3", None, "read", {"file_path": "pkg/x.py"}, False)
    assert await svc.pending(sid) == []

    # Back inside: a new file again. (Its content differs from the first one: a message whose
    # payload equals one the model already saw is not queued again, as upstream does.)
    kit.write("shared/pkg-v2.md", "pkg rules, second edition\n")
    relink(link, "../shared/pkg-v2.md")
    svc.tool_result(sid, "t4", None, "read", {"file_path": "pkg/x.py"}, False)
    (again,) = instructions(await svc.pending(sid))
    assert again.text == set_text("pkg/AGENTS.md", "pkg", "pkg rules, second edition\n")
    no_secret_anywhere(kit, svc, sid)


async def test_a_baseline_file_re_pointed_outside_leaves_at_the_next_step(kit: Kit) -> None:
    link = kit.root / "CLAUDE.md"
    link.symlink_to("shared/pkg.md")
    svc = kit.service()
    sid = await opened(kit, svc)
    assert all_changes(await start(svc, sid)) == [("set", "AGENTS.md"), ("set", "CLAUDE.md")]
    relink(link, kit.tmp / "outside/secret")
    # No touch at all: the next step reconciles the baseline scopes and finds it gone.
    (removal,) = instructions(await step(svc, sid, 1, 2))
    assert removal.text == remove_text("CLAUDE.md")
    no_secret_anywhere(kit, svc, sid)


async def test_changing_allowed_symlink_targets_adds_and_removes_at_the_next_step(
    kit: Kit,
) -> None:
    (kit.root / "CLAUDE.md").symlink_to(kit.tmp / "outside/rules.md")
    svc = kit.service()
    sid = await opened(kit, svc)
    assert all_changes(await start(svc, sid)) == [("set", "AGENTS.md")]

    svc.update_settings(kit.settings(allowedSymlinkTargets=[str(kit.tmp / "outside")]))
    added = instructions(await step(svc, sid, 1, 2))
    assert all_changes(added) == [("set", "CLAUDE.md")]
    assert "rules from outside" in added[0].text

    svc.update_settings(kit.settings())
    assert all_changes(await step(svc, sid, 1, 3)) == [("remove", "CLAUDE.md")]


# --- links swapped between the check and the read ------------------------------------------------


class RepointsBeforeOpen(LocalFileSystem):
    """Just before the read opens the checked file ``real``, re-point ``link`` to the secret."""

    def __init__(self, link: Path, real: Path, secret: Path) -> None:
        self.link, self.real, self.secret = link, real, secret
        self.fired = 0

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        if path == str(self.real) and self.fired == 0:
            relink(self.link, self.secret)
            self.fired += 1
        return super().open_for_read(path, follow_final_link=follow_final_link)


class TargetBecomesALink(LocalFileSystem):
    """Just before the read opens the checked real file, put a link to the secret there."""

    def __init__(self, real: Path, secret: Path) -> None:
        self.real, self.secret = real, secret
        self.fired = 0

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        if path == str(self.real) and self.fired == 0:
            relink(self.real, self.secret)
            self.fired += 1
        return super().open_for_read(path, follow_final_link=follow_final_link)


class DirectoryBecomesALink(LocalFileSystem):
    """Just before the read, swap the checked file's directory for a link to one outside that
    holds a hard link to the very same file: same device and inode, other path."""

    def __init__(self, directory: Path, elsewhere: Path) -> None:
        self.directory, self.elsewhere = directory, elsewhere
        self.fired = 0

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        if path.startswith(str(self.directory) + os.sep) and self.fired == 0:
            self.elsewhere.mkdir()
            name = os.path.basename(path)
            os.link(path, self.elsewhere / name)
            os.rename(self.directory, self.directory.with_name("moved-away"))
            self.directory.symlink_to(self.elsewhere)
            self.fired += 1
        return super().open_for_read(path, follow_final_link=follow_final_link)


async def test_a_link_re_pointed_after_the_check_reads_the_checked_file(kit: Kit) -> None:
    link = kit.root / "CLAUDE.md"
    link.symlink_to("shared/pkg.md")
    real = Path(os.path.realpath(kit.root / "shared/pkg.md"))
    fs = RepointsBeforeOpen(link, real, kit.tmp / "outside/secret")
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    messages = await start(svc, sid)
    assert fs.fired == 1
    assert os.readlink(link) == str(kit.tmp / "outside/secret")
    # The bytes are those of the file that was checked (shared/pkg.md), not of the new target.
    assert "pkg rules, kept in shared/" in "".join(m.text for m in messages)
    no_secret_anywhere(kit, svc, sid)


async def test_a_checked_file_replaced_by_a_link_is_not_read(kit: Kit) -> None:
    (kit.root / "CLAUDE.md").symlink_to("shared/pkg.md")
    real = Path(os.path.realpath(kit.root / "shared/pkg.md"))
    fs = TargetBecomesALink(real, kit.tmp / "outside/secret")
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    messages = await start(svc, sid)
    assert fs.fired == 1
    assert all_changes(messages) == [("set", "AGENTS.md")]
    no_secret_anywhere(kit, svc, sid)


async def test_a_directory_swapped_for_a_link_is_caught_by_the_opened_path(kit: Kit) -> None:
    # The hard link keeps device and inode equal, so only the kernel's path of the opened file
    # tells the two apart.
    (kit.root / "CLAUDE.md").symlink_to("shared/pkg.md")
    shared = Path(os.path.realpath(kit.root / "shared"))
    fs = DirectoryBecomesALink(shared, kit.tmp / "outside/elsewhere")
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    messages = await start(svc, sid)
    assert fs.fired == 1
    assert all_changes(messages) == [("set", "AGENTS.md")]
    check_store_consistent(svc, sid)


async def test_a_touch_whose_link_is_re_pointed_before_the_read_reads_nothing_outside(
    kit: Kit,
) -> None:
    # The stat said "an inside file"; by the time the read opens the path, it leads outside.
    # The read asks where the file it opened really lives, so nothing of it is read.
    link = kit.root / "pkg/AGENTS.md"
    link.symlink_to("../shared/pkg.md")
    fs = RepointsWhenOpening(link, kit.tmp / "outside/secret")
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    await start(svc, sid)
    fs.armed = True
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/x.py"}, False)
    assert await svc.pending(sid) == []
    assert fs.fired == 1
    no_secret_anywhere(kit, svc, sid)


class RepointsWhenOpening(LocalFileSystem):
    """Once armed, re-point ``link`` to the secret just before the read opens it."""

    def __init__(self, link: Path, secret: Path) -> None:
        self.link, self.secret = link, secret
        self.armed = False
        self.fired = 0

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        if self.armed and path == str(self.link):
            self.armed = False
            relink(self.link, self.secret)
            self.fired += 1
        return super().open_for_read(path, follow_final_link=follow_final_link)

"""A projection that changed nothing is kept and a warm touch only re-checks it
(``sessions/touches/projection.py``, ``ProjectionMemo``); anything it rested on changing makes the next
touch project afresh, with the answer a session without kept projections gives.

The racy-timestamp window is closed (these files are written a moment before they are looked
at; tests/unit/test_observed.py checks the window itself).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sessionkit import Kit, all_changes, check_store_consistent, opened, start

from dsh_sidecar.model import Message
from dsh_sidecar.sessions.service import SessionService
from dsh_sidecar.sources import observed


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(observed, "RACY_WINDOW_NS", 0)
    yield


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    k.write("pkg/lib/CLAUDE.md", "lib rules\n")
    k.write("pkg/lib/x.py", "x = 1\n")
    yield k
    await k.close()


async def warm(kit: Kit, **instructions: Any) -> tuple[SessionService, str]:
    """A session at the root whose pending context holds pkg/ and pkg/lib/, kept."""
    svc = kit.service(**instructions)
    sid = await opened(kit, svc)
    await start(svc, sid)
    for _ in range(3):
        await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert reused(svc, sid) >= 1, "the warm touch should have been the kept projection"
    return svc, sid


async def touch(svc: SessionService, sid: str, path: Path) -> list[Message]:
    await svc.editor_touch([str(path)])
    return await svc.pending(sid)


def reused(svc: SessionService, sid: str) -> int:
    return svc.live[sid].projection_memo.reused


async def fresh(svc: SessionService, sid: str, path: Path) -> list[dict[str, Any]]:
    """The pending context after the same touch with every accelerator dropped."""
    svc.live[sid].forget_caches()
    return [m.source for m in await touch(svc, sid, path)]


async def test_an_edit_of_a_pending_file_is_seen(kit: Kit) -> None:
    svc, sid = await warm(kit)
    before = reused(svc, sid)
    kit.write("pkg/lib/CLAUDE.md", "lib rules, edited\n")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert reused(svc, sid) == before
    assert "lib rules, edited" in "".join(m.text for m in after)
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))
    check_store_consistent(svc, sid)


async def test_a_delete_is_seen(kit: Kit) -> None:
    svc, sid = await warm(kit)
    kit.remove("pkg/lib/CLAUDE.md")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert all_changes(after) == [("set", "pkg/AGENTS.md")]
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))


async def test_a_new_file_is_seen(kit: Kit) -> None:
    svc, sid = await warm(kit)
    kit.write("pkg/lib/AGENTS.md", "more lib rules\n")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert ("set", "pkg/lib/AGENTS.md") in all_changes(after)


async def test_a_gitignore_change_is_seen(kit: Kit) -> None:
    kit.write("pkg/.gitignore", "lib/\n")
    svc, sid = await warm(kit)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]  # lib/ ignored
    kit.write("pkg/.gitignore", "build/\n")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert ("set", "pkg/lib/CLAUDE.md") in all_changes(after)
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))


async def test_a_change_of_git_info_exclude_is_seen(kit: Kit) -> None:
    kit.write(".git/info/exclude", "pkg/lib/\n")
    svc, sid = await warm(kit)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]  # lib/ excluded
    kit.write(".git/info/exclude", "build/\n")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert ("set", "pkg/lib/CLAUDE.md") in all_changes(after)
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))


async def test_rule_file_edits_are_seen(kit: Kit) -> None:
    # The session keeps its rule index between projections: what it looks at must be seen.
    kit.write(".cursor/rules/py.mdc", "---\nglobs: **/*.ts\n---\npython rules\n")
    svc, sid = await warm(kit, ruleSets=["cursor"])
    assert ("set", ".cursor/rules/py.mdc") not in all_changes(await svc.pending(sid))
    # Edited in place: its directory does not change, only the file does.
    kit.write(".cursor/rules/py.mdc", "---\nglobs: **/*.py\n---\npython rules\n")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert ("set", ".cursor/rules/py.mdc") in all_changes(after)
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))
    for _ in range(2):
        await touch(svc, sid, kit.path("pkg/lib/x.py"))  # kept again
    kit.write(".cursor/rules/py.mdc", "---\nglobs: **/*.py\n---\npython rules, edited\n")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert "python rules, edited" in "".join(m.text for m in after)
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))


async def test_a_compaction_in_between_is_seen(kit: Kit) -> None:
    svc, sid = await warm(kit)
    # Shadow everything the model has seen, the baseline included: the session's next pending
    # context starts with a new baseline, which a kept projection would not know.
    size = len((await svc.surface(sid)).events)
    await svc.compact(sid, 0, size - 1, "summary")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert after[0].source.get("baseline") is True
    assert [m.source for m in after] == await fresh(svc, sid, kit.path("pkg/lib/x.py"))


async def test_a_link_re_pointed_outside_is_never_kept(kit: Kit) -> None:
    outside = kit.tmp / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    kit.write("shared/rules.md", "shared rules\n")
    link = kit.path("pkg/lib/AGENTS.md")
    link.symlink_to("../../shared/rules.md")
    svc, sid = await warm(kit)
    assert ("set", "pkg/lib/AGENTS.md") in all_changes(await svc.pending(sid))
    link.unlink()
    link.symlink_to(outside / "secret.md")
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert ("set", "pkg/lib/AGENTS.md") not in all_changes(after)
    assert "secret" not in "".join(m.text for m in after)


async def test_a_step_in_between_is_seen(kit: Kit) -> None:
    svc, sid = await warm(kit)
    prepared = await svc.prepare_step(sid, 2, 1, None)
    await svc.end_step(sid, 2, 1)
    assert ("set", "pkg/lib/CLAUDE.md") in all_changes(prepared.messages)
    # Now in effect, not pending: the same touch changes nothing and leaves nothing pending.
    assert await touch(svc, sid, kit.path("pkg/lib/x.py")) == []


async def test_a_dropped_change_is_seen(kit: Kit) -> None:
    svc, sid = await warm(kit)
    message = (await svc.pending(sid))[0]
    lib = next(c["scope"] for c in message.source["changes"] if c["path"] == "pkg/lib/CLAUDE.md")
    await svc.discard(sid, message.id, [lib])
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert all_changes(after) == [("set", "pkg/AGENTS.md")]


async def test_settings_changes_drop_what_was_kept(kit: Kit) -> None:
    svc, sid = await warm(kit)
    kit.write("pkg/lib/NOTES.md", "notes\n")
    svc.update_settings(
        kit.settings(instructionFileCandidates=["AGENTS.md", "CLAUDE.md", "NOTES.md"])
    )
    after = await touch(svc, sid, kit.path("pkg/lib/x.py"))
    assert ("set", "pkg/lib/NOTES.md") in all_changes(after)


async def test_an_editor_path_spelled_inside_but_leading_outside_is_not_a_touch(
    kit: Kit,
) -> None:
    elsewhere = kit.tmp / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    (elsewhere / "deep" / "AGENTS.md").write_text("elsewhere rules\n")
    os.symlink(elsewhere, kit.path("pkg/away"))
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    # pkg/away/deep/x.py is spelled inside the project and really lives outside it.
    assert await touch(svc, sid, kit.path("pkg/away/deep/x.py")) == []
    # An agent's read of the same spelling is a touch (agent paths are not filtered).
    svc.tool_result(sid, "t", None, "read", {"file_path": str(kit.path("pkg/lib/x.py"))}, False)
    assert ("set", "pkg/lib/CLAUDE.md") in all_changes(await svc.pending(sid))

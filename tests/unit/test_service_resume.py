"""Resume: a new service over the same store reconciles offline changes.

Upstream behaviour: docs/reference/agent-instructions.md, Resume, compaction and tombstones.
"""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.sessionkit import (
    FaultyFS,
    Kit,
    all_changes,
    check_store_consistent,
    frame,
    opened,
    start,
    step,
)


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("CLAUDE.md", "claude rules\n")
    for rel in ("pkg", "other", "lib"):
        k.write(f"{rel}/AGENTS.md", f"{rel} rules\n")
    yield k
    await k.close()


async def session_with_nested_scopes(kit: Kit) -> str:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    for n, rel in enumerate(("pkg", "other", "lib")):
        svc.tool_result(sid, f"t{n}", None, "read", {"file_path": f"{rel}/x.ts"}, False)
    assert len(await step(svc, sid, 1, 2)) == 1
    await svc.shutdown()
    return sid


async def test_offline_edits_deletions_and_new_files_become_transitions(kit: Kit) -> None:
    sid = await session_with_nested_scopes(kit)
    kit.write("AGENTS.md", "root rules v2\n")  # baseline file edited
    kit.remove("CLAUDE.md")  # baseline file deleted
    kit.write("AGENTS.local.md", "my overlay\n")  # new baseline-chain file
    kit.write("pkg/AGENTS.md", "pkg rules v2\n")  # nested file edited
    kit.write("pkg/CLAUDE.md", "pkg claude\n")  # new sibling of a loaded one
    kit.remove("other/AGENTS.md")  # nested file deleted
    # lib/AGENTS.md unchanged: nothing may be said about it.

    svc = kit.service()
    header, resumed = await svc.open_session(str(kit.root), sid)
    assert resumed and header.id == sid
    (update,) = await step(svc, sid, 1, 3)
    assert "baseline" not in update.source  # the visible baseline is compatible and kept
    assert all_changes([update]) == [
        ("replace", "AGENTS.md"),
        ("remove", "CLAUDE.md"),
        ("set", "AGENTS.local.md"),
        ("replace", "pkg/AGENTS.md"),
        ("set", "pkg/CLAUDE.md"),
        ("remove", "other/AGENTS.md"),
    ]
    assert update.text == frame(
        "Updated instructions from: AGENTS.md\n\nThis file changed after it was loaded. Use the "
        "following content instead of the previously loaded instructions from this file.\n\n"
        "root rules v2\n\n\n"
        "Instructions removed: CLAUDE.md\n\nThe previously loaded instructions from this file no "
        "longer apply.\n\n"
        "Additional instructions from: AGENTS.local.md\n\nThese instructions apply to work under "
        "`.`. Use them as guidance when relevant; more specific instructions take precedence. "
        "They do not override system, developer, or direct user instructions.\n\nmy overlay\n\n\n"
        "Updated instructions from: pkg/AGENTS.md\n\nThis file changed after it was loaded. Use "
        "the following content instead of the previously loaded instructions from this file.\n\n"
        "pkg rules v2\n\n\n"
        "Additional instructions from: pkg/CLAUDE.md\n\nThese instructions apply to work under "
        "`pkg`. Use them as guidance when relevant; more specific instructions take precedence. "
        "They do not override system, developer, or direct user instructions.\n\npkg claude\n\n\n"
        "Instructions removed: other/AGENTS.md\n\nThe previously loaded instructions from this "
        "file no longer apply."
    )
    assert await step(svc, sid, 1, 4) == []
    check_store_consistent(svc, sid)


async def test_nothing_changed_offline_means_nothing_to_say(kit: Kit) -> None:
    sid = await session_with_nested_scopes(kit)
    svc = kit.service()
    await svc.open_session(str(kit.root), sid)
    before = len(svc.store.events(sid))
    assert await step(svc, sid, 1, 3) == []
    assert [e.type for e in svc.store.events(sid)[before:]] == ["step/start", "step/end"]


async def test_a_file_touched_after_resume_is_read_once_then_confirmed(kit: Kit) -> None:
    sid = await session_with_nested_scopes(kit)
    svc = kit.service()
    await svc.open_session(str(kit.root), sid)
    # The resumed cache is cold: the first touch re-reads lib/AGENTS.md, finds the digest the
    # model saw and stays silent; only an actual change speaks.
    svc.tool_result(sid, "t", None, "read", {"file_path": "lib/x.ts"}, False)
    assert await svc.pending(sid) == []
    kit.write("lib/AGENTS.md", "lib rules v2\n")
    svc.tool_result(sid, "u", None, "read", {"file_path": "lib/x.ts"}, False)
    assert all_changes(await svc.pending(sid)) == [("replace", "lib/AGENTS.md")]


async def test_an_unavailable_sibling_also_holds_back_an_excluded_scope_removal(
    kit: Kit,
) -> None:
    kit.write("AGENTS.local.md", "my overlay\n")
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    await first.shutdown()

    kit.write("CLAUDE.md", "root rules")  # offline it became a duplicate of AGENTS.md
    fs = FaultyFS()
    fs.fail(kit.path("AGENTS.local.md"), errno.EIO)
    svc = kit.service(fs=fs)
    await svc.open_session(str(kit.root), sid)
    # The recomputed preparation excludes CLAUDE.md (collapsed), and CLAUDE.md is active, so its
    # removal is due; but an active sibling of the same directory cannot be observed, so nothing
    # changes for any candidate of that directory (docs/reference/agent-instructions.md,
    # Reconcile). Upstream's code would still emit the excluded scope's removal, which it records
    # before the rollback point.
    assert await step(svc, sid, 1, 2) == []
    fs.heal()
    (update,) = await step(svc, sid, 1, 3)
    assert all_changes([update]) == [("remove", "CLAUDE.md")]

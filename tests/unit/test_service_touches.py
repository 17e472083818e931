"""The touch seam through the service: gating, parent tokens, open steps, editors.

Upstream behaviour: docs/reference/agent-instructions.md, Touches.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.sessionkit import (
    Kit,
    Prompt,
    all_changes,
    check_store_consistent,
    opened,
    ready,
    start,
    step,
)

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LocalFileSystem


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    k.write("other/AGENTS.md", "other rules\n")
    yield k
    await k.close()


@pytest.mark.parametrize(
    ("name", "arguments", "is_error", "aborted"),
    [
        ("read", {"file_path": "pkg/a.ts"}, True, False),
        ("read", {"file_path": "pkg/a.ts"}, False, True),
        ("grep", {"file_path": "pkg/a.ts"}, False, False),
        ("READ", {"file_path": "pkg/a.ts"}, False, False),
        ("edit", {"file_path": "   "}, False, False),
        ("edit", {"file_path": ""}, False, False),
        ("write", {"file_path": 42}, False, False),
        ("write", {"path": "pkg/a.ts"}, False, False),
        ("write", "pkg/a.ts", False, False),
    ],
)
async def test_results_that_do_not_count_touch_nothing(
    kit: Kit, name: str, arguments: Any, is_error: bool, aborted: bool
) -> None:
    svc, sid = await ready(kit)
    svc.tool_result(sid, "t", None, name, arguments, is_error, aborted)
    assert await svc.pending(sid) == []
    assert kit.notes == []
    svc.tool_result(sid, "u", None, "read", {"file_path": "  pkg/a.ts  "}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_children_survive_a_failed_parent_whose_own_touch_is_gated(kit: Kit) -> None:
    svc, sid = await ready(kit)
    svc.tool_result(sid, "child-1", "parent", "read", {"file_path": "pkg/a.ts"}, False)
    svc.tool_result(sid, "child-2", "parent", "edit", {"file_path": "pkg/b.ts"}, True)
    assert await svc.pending(sid) == []  # staged under the parent until its result arrives
    svc.tool_result(sid, "parent", None, "read", {"file_path": "other/c.ts"}, True)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_a_successful_parent_adds_its_own_touch_after_its_children(kit: Kit) -> None:
    svc, sid = await ready(kit)
    svc.tool_result(sid, "grandchild", "child", "read", {"file_path": "pkg/a.ts"}, False)
    svc.tool_result(sid, "child", "parent", "bash", {}, False)
    assert await svc.pending(sid) == []
    svc.tool_result(sid, "parent", None, "edit", {"file_path": "other/c.ts"}, False)
    assert all_changes(await svc.pending(sid)) == [
        ("set", "pkg/AGENTS.md"),
        ("set", "other/AGENTS.md"),
    ]
    assert svc.live[sid].executions.staged == {}


async def test_tokens_belong_to_their_session(kit: Kit) -> None:
    svc = kit.service()
    a = await opened(kit, svc)
    b = await opened(kit, svc)
    for sid in (a, b):
        await start(svc, sid)
    # Two panels numbering their tool calls the same way must not trade staged touches.
    svc.tool_result(a, "call-2", "call-1", "read", {"file_path": "pkg/a.ts"}, False)
    svc.tool_result(b, "call-1", None, "bash", {}, False)
    assert await svc.pending(b) == []
    svc.tool_result(a, "call-1", None, "bash", {}, False)
    assert all_changes(await svc.pending(a)) == [("set", "pkg/AGENTS.md")]
    assert await svc.pending(b) == []


async def test_touches_during_an_open_step_wait_for_its_end(kit: Kit) -> None:
    svc, sid = await ready(kit)
    await svc.prepare_step(sid, 1, 2, None)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert await svc.pending(sid) == []
    assert kit.notes == []
    await svc.end_step(sid, 1, 2)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]
    assert kit.notes == [(sid, 1)]


async def test_turn_end_closes_the_step_but_keeps_staged_touches_until_a_step_end(
    kit: Kit,
) -> None:
    svc, sid = await ready(kit)
    await svc.prepare_step(sid, 1, 2, None)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.ts"}, False)
    await svc.end_turn(sid, 1, "aborted")
    assert await svc.pending(sid) == []  # upstream quirk: turn/end does not release them

    svc.tool_result(sid, "t2", None, "read", {"file_path": "other/a.ts"}, False)
    (pending,) = await svc.pending(sid)  # no step is open now, so this one projects at once
    assert all_changes([pending]) == [("set", "other/AGENTS.md")]

    prepared = await svc.prepare_step(sid, 2, 1, Prompt("again"))
    assert prepared.messages[0] == pending
    await svc.end_step(sid, 2, 1)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]
    check_store_consistent(svc, sid)


async def test_a_resumed_session_knows_its_step_is_still_open(kit: Kit) -> None:
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    await first.prepare_step(sid, 1, 2, None)
    await first.shutdown()

    second = kit.service()
    await second.open_session(str(kit.root), sid)
    second.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert await second.pending(sid) == []
    await second.end_step(sid, 1, 2)
    assert all_changes(await second.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_a_resumed_session_after_turn_end_has_no_open_step(kit: Kit) -> None:
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    await first.prepare_step(sid, 1, 2, None)
    await first.end_turn(sid, 1, "completed")
    await first.shutdown()

    second = kit.service()
    await second.open_session(str(kit.root), sid)
    second.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert all_changes(await second.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_paths_are_relative_to_the_session_cwd_and_outside_it_find_nothing(
    kit: Kit,
) -> None:
    kit.write("pkg/src/AGENTS.md", "src rules\n")
    svc = kit.service()
    sid = await opened(kit, svc, kit.root / "pkg")
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "../other/a.ts"}, False)
    svc.tool_result(sid, "t2", None, "read", {"file_path": str(kit.path("other/b.ts"))}, False)
    assert await svc.pending(sid) == []
    svc.tool_result(sid, "t3", None, "read", {"file_path": "src/deep/a.ts"}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/src/AGENTS.md")]


async def test_editor_events_touch_every_live_session_of_the_project(
    kit: Kit, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    (elsewhere / "pkg").mkdir()
    (elsewhere / "pkg" / "AGENTS.md").write_text("far away\n")
    svc = kit.service()
    a = await opened(kit, svc)
    b = await opened(kit, svc, kit.root / "pkg")
    c = (await svc.open_session(str(elsewhere)))[0].id
    for sid in (a, b, c):
        await start(svc, sid)
    await svc.editor_touch([str(kit.path("pkg/a.ts")), str(elsewhere / "x.ts")])
    assert all_changes(await svc.pending(a)) == [("set", "pkg/AGENTS.md")]
    # b's cwd is pkg, whose AGENTS.md is already in its baseline; c is another project.
    assert await svc.pending(b) == []
    assert await svc.pending(c) == []


async def test_a_request_after_an_editor_touch_sees_it(kit: Kit) -> None:
    # The editor's notification comes first, the request right after: the touch is registered
    # when it arrives, so pending and the next step wait for it (never a race with the worker
    # that resolves its path).
    svc, sid = await ready(kit)
    touched = svc.editor_touch([str(kit.path("pkg/a.ts"))])
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]
    await touched
    kit.write("other/AGENTS.md", "other rules, edited\n")
    touched = svc.editor_touch([str(kit.path("other/b.ts"))])
    prepared = await svc.prepare_step(sid, 2, 1, Prompt("next"))
    assert all_changes(prepared.messages) == [("set", "pkg/AGENTS.md"), ("set", "other/AGENTS.md")]
    await touched


async def test_a_burst_of_editor_touches_reaches_every_session_once_resolved(kit: Kit) -> None:
    svc, sid = await ready(kit)
    other = await opened(kit, svc, kit.root / "other")
    await start(svc, other)
    paths = [str(kit.path(f"pkg/m{i}.ts")) for i in range(300)]
    paths += [str(kit.path(f"other/n{i}.ts")) for i in range(300)]
    waits = [svc.editor_touch([p]) for p in paths]
    assert all_changes(await svc.pending(sid)) == [
        ("set", "pkg/AGENTS.md"),
        ("set", "other/AGENTS.md"),
    ]
    assert await svc.pending(other) == []  # its own directory: already in its baseline
    for wait in waits:
        await wait
    check_store_consistent(svc, sid)


async def test_a_touch_below_a_missing_directory_finds_it_once_it_exists(kit: Kit) -> None:
    # Discovery stops at the first directory that is not there (nothing can be below it); the
    # plan kept for the next same touch rests on that directory still missing.
    svc, sid = await ready(kit)
    deep = "new/a/b/c/x.py"
    for token in ("t1", "t2"):
        svc.tool_result(sid, token, None, "read", {"file_path": deep}, False)
        assert await svc.pending(sid) == []
    kit.write("new/a/AGENTS.md", "new rules\n")
    svc.tool_result(sid, "t3", None, "read", {"file_path": deep}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "new/a/AGENTS.md")]
    kit.write("new/a/b/c/CLAUDE.md", "deeper rules\n")
    svc.tool_result(sid, "t4", None, "read", {"file_path": deep}, False)
    assert all_changes(await svc.pending(sid)) == [
        ("set", "new/a/AGENTS.md"),
        ("set", "new/a/b/c/CLAUDE.md"),
    ]


async def test_a_touch_through_a_file_used_as_a_directory_finds_nothing(kit: Kit) -> None:
    svc, sid = await ready(kit)
    kit.write("pkg/notes.txt", "not a directory\n")
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/notes.txt/x/y.py"}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_unknown_sessions_are_refused(kit: Kit) -> None:
    # A token of the wrong type never gets here: the wire refuses it (test_param_ranges.py).
    svc, _ = await ready(kit)
    with pytest.raises(DshError) as unknown:
        svc.tool_result("nope", "t", None, "read", {"file_path": "a"}, False)
    assert unknown.value.code == errors.UNKNOWN_SESSION


class ExplodingFS(LocalFileSystem):
    """A provider bug (not an OSError): the projection must fail alone and be reported."""

    armed = False

    def stat(self, path: str) -> os.stat_result:
        if self.armed and path.endswith(os.path.join("pkg", "AGENTS.md")):
            raise RuntimeError("provider exploded")
        return super().stat(path)


async def test_a_failing_projection_warns_and_leaves_the_inbox_alone(kit: Kit) -> None:
    fs = ExplodingFS()
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "other/a.ts"}, False)
    (before,) = await svc.pending(sid)
    fs.armed = True
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert await svc.pending(sid) == [before]
    assert kit.warnings == ["workspace instruction refresh failed: provider exploded"]
    fs.armed = False
    svc.tool_result(sid, "t3", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert all_changes(await svc.pending(sid)) == [
        ("set", "other/AGENTS.md"),
        ("set", "pkg/AGENTS.md"),
    ]
    assert await step(svc, sid, 1, 2) != []
    check_store_consistent(svc, sid)

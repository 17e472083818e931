"""Touched paths are matched against real paths, and re-opening a live session resumes it."""

from __future__ import annotations

from pathlib import Path

from tests.support.sessionkit import Kit, all_changes, instructions, opened, set_text, start


async def test_a_touch_through_a_symlinked_spelling_of_the_project_reaches_its_scopes(
    tmp_path: Path,
) -> None:
    kit = Kit(tmp_path)
    kit.write("AGENTS.md", "root\n")
    kit.write("pkg/AGENTS.md", "pkg rules\n")
    kit.write("pkg/src/x.py", "x\n")
    link = tmp_path / "link"
    link.symlink_to(kit.root)
    svc = kit.service()
    try:
        sid = await opened(kit, svc, cwd=link)  # the editor opened the project through the link
        await start(svc, sid)
        svc.tool_result(sid, "t1", None, "read", {"file_path": str(link / "pkg/src/x.py")}, False)
        pending = await svc.pending(sid)
        assert [m.text for m in instructions(pending)] == [
            set_text("pkg/AGENTS.md", "pkg", "pkg rules\n")
        ]
    finally:
        await kit.close()


async def test_an_editor_touch_through_a_symlink_reaches_the_session(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.write("AGENTS.md", "root\n")
    kit.write("lib/AGENTS.md", "lib rules\n")
    kit.write("lib/y.py", "y\n")
    link = tmp_path / "link"
    link.symlink_to(kit.root)
    svc = kit.service()
    try:
        sid = await opened(kit, svc)  # the session uses the real path
        await start(svc, sid)
        await svc.editor_touch([str(link / "lib/y.py")])
        assert all_changes(await svc.pending(sid)) == [("set", "lib/AGENTS.md")]
    finally:
        await kit.close()


async def test_reopening_a_live_session_starts_with_empty_caches(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.write("AGENTS.md", "root\n")
    svc = kit.service()
    try:
        sid = await opened(kit, svc)
        await start(svc, sid)
        live = svc.live[sid]
        assert live.instructions.cache  # the baseline primed the version cache
        header, resumed = await svc.open_session(str(kit.root), sid)
        assert resumed is True and header.id == sid
        assert svc.live[sid].instructions.cache == {}
        assert svc.live[sid].instructions.preparation is None
    finally:
        await kit.close()

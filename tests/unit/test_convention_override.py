"""instructions.overrideFiles: Codex's AGENTS.override.md replaces its directory's AGENTS.md, in
a baseline, on a touch, when it appears or goes away, and when the setting changes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.instrkit import INTRO, instructions, load, states, write_tree
from tests.support.sessionkit import (
    Kit,
    all_changes,
    frame,
    opened,
    replace_text,
    set_text,
    start,
    step,
)

from dsh_sidecar.sources.agent_instructions.baseline import OVERRIDDEN

OVERRIDE = instructions(overrideFiles=True)


def tree(root: Path) -> Path:
    return write_tree(
        root,
        {
            "p/.git/": "",
            "p/AGENTS.md": "root rules\n",
            "p/CLAUDE.md": "claude rules\n",
            "p/AGENTS.override.md": "root override\n",
            "p/AGENTS.local.md": "local\n",
            "p/pkg/AGENTS.md": "pkg rules\n",
        },
    )


def test_the_override_takes_the_place_of_agents_md(tmp_path: Path) -> None:
    tree(tmp_path)
    result = load(tmp_path / "p", tmp_path / "home", OVERRIDE)
    assert states(result) == [
        ("AGENTS.override.md", "included"),
        ("AGENTS.md", OVERRIDDEN),
        ("CLAUDE.md", "included"),
        ("AGENTS.local.md", "included"),
    ]
    entry = result.entries[1]
    assert entry.reason == (
        "replaced by AGENTS.override.md in this directory (instructions.overrideFiles)"
    )
    assert entry.bytes == len("root rules\n") and entry.digest is None
    assert result.text == frame(
        f"{INTRO}\n\nInstructions from: AGENTS.override.md\n\nroot override\n\n\n"
        "Instructions from: CLAUDE.md\n\nclaude rules\n\n\n"
        "Instructions from: AGENTS.local.md\n\nlocal\n"
    )
    assert [f.candidate.scope for f in result.retained] == [
        ".\0AGENTS.override.md",
        ".\0CLAUDE.md",
        ".\0AGENTS.local.md",
    ]


def test_off_the_override_file_is_not_even_a_candidate(tmp_path: Path) -> None:
    tree(tmp_path)
    with_override = load(tmp_path / "p", tmp_path / "home")
    (tmp_path / "p" / "AGENTS.override.md").unlink()
    without = load(tmp_path / "p", tmp_path / "home")
    assert with_override.text == without.text
    assert with_override.entries == without.entries
    assert with_override.identity == without.identity
    assert '"overrideFiles"' not in without.identity
    assert '"overrideFiles":true' in load(tmp_path / "p", tmp_path / "home", OVERRIDE).identity


def test_an_override_leading_out_of_the_project_replaces_nothing(tmp_path: Path) -> None:
    tree(tmp_path)
    (tmp_path / "p" / "AGENTS.override.md").unlink()
    (tmp_path / "secret").write_text("secret\n")
    (tmp_path / "p" / "AGENTS.override.md").symlink_to(tmp_path / "secret")
    result = load(tmp_path / "p", tmp_path / "home", OVERRIDE)
    assert states(result)[:2] == [
        ("AGENTS.override.md", "outside-project"),
        ("AGENTS.md", "included"),
    ]
    assert "secret" not in result.text


def test_an_unreadable_override_still_replaces_agents_md(tmp_path: Path) -> None:
    """As in Codex, the file's presence decides; its diagnostic says why it did not load."""
    tree(tmp_path)
    (tmp_path / "p" / "AGENTS.override.md").write_bytes(b"\xff\xfe broken")
    result = load(tmp_path / "p", tmp_path / "home", OVERRIDE)
    assert states(result)[:2] == [("AGENTS.override.md", "unreadable"), ("AGENTS.md", OVERRIDDEN)]


def test_without_agents_md_among_the_candidates_there_is_nothing_to_override(
    tmp_path: Path,
) -> None:
    tree(tmp_path)
    settings = instructions(overrideFiles=True, instructionFileCandidates=["CLAUDE.md"])
    result = load(tmp_path / "p", tmp_path / "home", settings)
    assert [p for p, _ in states(result)] == ["CLAUDE.md", "AGENTS.local.md"]


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path, overrideFiles=True)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    k.write("pkg/AGENTS.override.md", "pkg override\n")
    yield k
    await k.close()


async def test_a_touch_sets_the_override_alone(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/a.py"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == set_text("pkg/AGENTS.override.md", "pkg", "pkg override\n")
    assert pending.source["changes"][0]["scope"] == "pkg\0AGENTS.override.md"


async def test_removing_the_override_brings_agents_md_back(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.py"}, False)
    await step(svc, sid, 1, 2)
    kit.remove("pkg/AGENTS.override.md")
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/a.py"}, False)
    assert all_changes(await svc.pending(sid)) == [
        ("remove", "pkg/AGENTS.override.md"),
        ("set", "pkg/AGENTS.md"),
    ]


async def test_an_override_that_appears_replaces_the_loaded_agents_md(kit: Kit) -> None:
    kit.remove("pkg/AGENTS.override.md")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.py"}, False)
    assert all_changes(await step(svc, sid, 1, 2)) == [("set", "pkg/AGENTS.md")]
    kit.write("pkg/AGENTS.override.md", "pkg override\n")
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/a.py"}, False)
    assert all_changes(await svc.pending(sid)) == [
        ("set", "pkg/AGENTS.override.md"),
        ("remove", "pkg/AGENTS.md"),
    ]
    # An edit of the override is a replace; AGENTS.md stays out meanwhile.
    await step(svc, sid, 1, 3)
    kit.write("pkg/AGENTS.override.md", "pkg override v2\n")
    kit.write("pkg/AGENTS.md", "pkg rules v2\n")
    svc.tool_result(sid, "t3", None, "read", {"file_path": "pkg/a.py"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == replace_text("pkg/AGENTS.override.md", "pkg override v2\n")


async def test_turning_the_setting_off_removes_a_touched_override(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.py"}, False)
    await step(svc, sid, 1, 2)
    svc.update_settings(kit.settings(overrideFiles=False))
    entered = await step(svc, sid, 1, 3)
    # A new baseline (the identity changed), and the override a touch had set is retired.
    changes = all_changes(entered)
    assert ("remove", "pkg/AGENTS.override.md") in changes
    assert svc.live[sid].effective["pkg\0AGENTS.override.md"].action == "remove"
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/a.py"}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]

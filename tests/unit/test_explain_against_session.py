"""explain's account of this sidecar against a real session: the files it says arrive in the
baseline and on the first touch are the ones a session over a real store sends, and a touch
message cut by the budget keeps the bytes explain reports."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.explainkit import PROJECT, settings
from tests.support.instrkit import write_tree
from tests.support.sessionkit import Kit, all_changes, instructions, opened, start

from dsh_sidecar.explain import explain_file
from dsh_sidecar.fs import LOCAL_FS


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    write_tree(k.root, {rel: c for rel, c in PROJECT.items() if rel != ".git/"})
    write_tree(k.home, {"AGENTS.md": "Answer in English.\n"})
    yield k
    await k.close()


def explained(kit: Kit, rel: str, **instructions_: object) -> list[tuple[str | None, str]]:
    e = explain_file(
        str(kit.root / rel),
        settings(**instructions_),
        LOCAL_FS,
        dsh_home=str(kit.home),
        home=str(kit.tmp / "os-home"),
        env={},
    )
    return [(f.via, f.display_path) for f in e.sidecar if f.loaded]


async def test_baseline_and_touch_match_a_real_session(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    baseline = all_changes(instructions(await start(svc, sid)))
    svc.tool_result(sid, "t1", None, "read", {"file_path": "src/api/handler.py"}, False)
    touched = all_changes(await svc.pending(sid))
    claimed = explained(kit, "src/api/handler.py")
    assert [("set", p) for via, p in claimed if via == "baseline"] == baseline
    assert [("set", p) for via, p in claimed if via == "touch"] == touched
    assert touched == [
        ("set", "src/AGENTS.md"),
        ("set", "src/CLAUDE.md"),
        ("set", "src/api/AGENTS.md"),
    ]


async def test_a_cut_touch_message_keeps_the_bytes_explain_reports(kit: Kit) -> None:
    kit.write("src/api/AGENTS.md", "x" * 3000)
    svc = kit.service(maxBytes=1200)
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "src/api/handler.py"}, False)
    (pending,) = await svc.pending(sid)
    text = pending.content[0]["text"]
    e = explain_file(
        str(kit.root / "src/api/handler.py"),
        settings(maxBytes=1200),
        LOCAL_FS,
        dsh_home=str(kit.home),
        home=str(kit.tmp / "os-home"),
        env={},
    )
    touch = {f.display_path: f for f in e.sidecar if f.via == "touch"}
    cut = touch["src/api/AGENTS.md"]
    assert cut.state == "truncated"
    marker = re.search(r"truncated src/api/AGENTS\.md from 3000 to (\d+) bytes", text)
    assert marker is not None, text
    assert int(marker.group(1)) == cut.included_bytes
    omitted = [p for p, f in touch.items() if f.state == "omitted"]
    assert omitted and all(p in text.split("\n", 2)[1] for p in omitted)

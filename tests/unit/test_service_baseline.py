"""The workspace-instruction baseline through the session service.

Upstream behaviour: docs/reference/agent-instructions.md, Compose; and the same page's Pre-step
and "Resume, compaction and tombstones".
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.sessionkit import (
    INTRO,
    REPLACES,
    T3,
    Kit,
    Prompt,
    baseline_text,
    changes,
    check_store_consistent,
    frame,
    identity,
    instructions,
    opened,
    replace_text,
    start,
    step,
)

from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    yield k
    await k.close()


async def test_baseline_enters_once_right_after_the_prompt(kit: Kit) -> None:
    kit.home.mkdir()
    (kit.home / "AGENTS.md").write_text("global\n")
    kit.write("AGENTS.md", "root rules\n")
    kit.write("CLAUDE.local.md", "mine\n")
    kit.write("pkg/AGENTS.md", "not in the chain of the root cwd\n")
    svc = kit.service()
    sid = await opened(kit, svc)

    prepared = await svc.prepare_step(sid, 1, 1, Prompt("hello", rpc_id="r1"))
    prompt, baseline = prepared.messages
    assert prompt.source == {"kind": "user", "rpcId": "r1"}
    assert prompt.text == "hello"
    assert [b["text"] for b in baseline.content] == [
        baseline_text(
            [
                ("$DSH_HOME/AGENTS.md", "global\n"),
                ("AGENTS.md", "root rules\n"),
                ("CLAUDE.local.md", "mine\n"),
            ]
        )
    ]
    assert baseline.source == {
        "kind": SOURCE_KIND,
        "form": "instructions",
        "baseline": True,
        "baselineIdentity": identity(),
        "changes": [
            {
                "action": "set",
                "scope": "user-global\u0000AGENTS.md",
                "path": "$DSH_HOME/AGENTS.md",
                "digest": sha1("global\n"),
            },
            {
                "action": "set",
                "scope": ".\u0000AGENTS.md",
                "path": "AGENTS.md",
                "digest": sha1("root rules\n"),
            },
            {
                "action": "set",
                "scope": ".\u0000CLAUDE.local.md",
                "path": "CLAUDE.local.md",
                "digest": sha1("mine\n"),
            },
        ],
    }
    assert prepared.seqs == (2, 3)
    log = check_store_consistent(svc, sid)
    assert [(e.seq, e.type) for e in log] == [
        (0, "turn/start"),
        (1, "step/start"),
        (2, "user/message"),
        (3, "user/message"),
    ]
    assert log[3].data == baseline.to_json()
    assert svc.store.surface_seqs(sid) == [2, 3]
    await svc.end_step(sid, 1, 1)

    again = await svc.prepare_step(sid, 1, 2, None)
    assert again.messages == () and again.seqs == ()
    await svc.end_step(sid, 1, 2)
    later = await svc.prepare_step(sid, 2, 1, Prompt("next"))
    assert [m.source["kind"] for m in later.messages] == ["user"]
    log = check_store_consistent(svc, sid)
    assert [e.type for e in log[4:]] == [
        "step/end",
        "step/start",
        "step/end",
        "turn/start",
        "step/start",
        "user/message",
    ]
    assert await svc.pending(sid) == []


async def test_resumed_session_prepares_nothing_new(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    kit.write("pkg/AGENTS.md", "pkg rules\n")
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    first.tool_result(sid, "t", None, "read", {"file_path": "pkg/x.ts"}, False)
    assert len(await first.pending(sid)) == 1
    await step(first, sid, 1, 2)
    await first.shutdown()

    second = kit.service()
    header, resumed = await second.open_session(str(kit.root), sid)
    assert resumed and header.id == sid
    before = len(second.store.events(sid))
    assert await step(second, sid, 1, 3) == []
    # The resumed cache is cold: the nested scope is re-read, found unchanged, and stays quiet.
    second.tool_result(sid, "t2", None, "read", {"file_path": "pkg/x.ts"}, False)
    assert await second.pending(sid) == []
    assert [e.type for e in second.store.events(sid)[before:]] == ["step/start", "step/end"]


async def test_step_one_with_nothing_to_enter_keeps_the_baseline_queued(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    svc = kit.service()
    sid = await opened(kit, svc)
    prepared = await svc.prepare_step(sid, 1, 1, None)
    assert prepared.messages == ()
    (queued,) = await svc.pending(sid)
    assert queued.text == baseline_text([("AGENTS.md", "root rules\n")])
    assert queued.source["baseline"] is True
    log = check_store_consistent(svc, sid)
    assert [e.type for e in log] == ["turn/start", "step/start", "agent/inbox/spliced"]
    assert svc.store.surface_seqs(sid) == []
    assert kit.notes == [(sid, 1)]
    await svc.end_step(sid, 1, 1)

    # The next wake-up claims it from the inbox and enters it unchanged (same message id).
    entered = await svc.prepare_step(sid, 1, 2, None)
    assert entered.messages == (queued,)
    assert await svc.pending(sid) == []
    assert kit.notes == [(sid, 1), (sid, 0)]
    check_store_consistent(svc, sid)


async def test_queued_baseline_survives_a_restart_and_folds_an_offline_edit(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    first = kit.service()
    sid = await opened(kit, first)
    await first.prepare_step(sid, 1, 1, None)
    (queued,) = await first.pending(sid)
    await first.end_step(sid, 1, 1)
    await first.shutdown()

    kit.write("AGENTS.md", "root rules v2\n")
    second = kit.service()
    await second.open_session(str(kit.root), sid)
    assert await second.pending(sid) == [queued]
    prepared = await second.prepare_step(sid, 2, 1, Prompt("go"))
    claimed, prompt, update = prepared.messages
    assert claimed == queued
    assert prompt.text == "go"
    assert changes(update) == [("replace", "AGENTS.md")]
    assert update.text == replace_text("AGENTS.md", "root rules v2\n")
    assert "baseline" not in update.source
    check_store_consistent(second, sid)


async def test_cwd_below_the_root_loads_the_chain_root_first(kit: Kit) -> None:
    kit.write("AGENTS.md", "root\n")
    kit.write("pkg/CLAUDE.md", "pkg\n")
    kit.write("pkg/AGENTS.local.md", "local\n")
    kit.write("other/AGENTS.md", "never\n")
    svc = kit.service()
    sid = await opened(kit, svc, kit.root / "pkg")
    (baseline,) = instructions(await start(svc, sid))
    assert baseline.text == baseline_text(
        [("AGENTS.md", "root\n"), ("pkg/CLAUDE.md", "pkg\n"), ("pkg/AGENTS.local.md", "local\n")]
    )
    assert baseline.source["baselineIdentity"] == identity("..")
    assert [c["scope"] for c in baseline.source["changes"]] == [
        ".\u0000AGENTS.md",
        "pkg\u0000CLAUDE.md",
        "pkg\u0000AGENTS.local.md",
    ]


async def test_compacting_the_baseline_away_rearms_a_fresh_one(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    await svc.compact(sid, 0, 1, "we talked")
    prepared = await svc.prepare_step(sid, 1, 2, None)
    (fresh,) = prepared.messages
    # No visible baseline means a fresh one with the normal intro, not a replacement.
    assert fresh.text == baseline_text([("AGENTS.md", "root rules\n")])
    assert fresh.source["baseline"] is True
    assert changes(fresh) == [("set", "AGENTS.md")]
    snapshot = await svc.surface(sid)
    assert [e.seq for e in snapshot.events] == [
        5,
        7,
    ]  # checkpoint (after step/end 4), fresh baseline
    assert prepared.seqs == (7,)
    check_store_consistent(svc, sid)


async def test_identity_change_appends_a_replacement_baseline_with_removals(kit: Kit) -> None:
    kit.write("AGENTS.md", "a" * 2000)
    kit.write("CLAUDE.md", "claude rules\n")
    first = kit.service()
    sid = await opened(kit, first)
    (original,) = instructions(await start(first, sid))
    assert changes(original) == [("set", "AGENTS.md"), ("set", "CLAUDE.md")]
    await first.shutdown()

    second = kit.service(maxBytes=1000)
    await second.open_session(str(kit.root), sid)
    (replacement,) = await step(second, sid, 1, 2)
    marker = "Workspace instruction budget 1000 bytes: omitted AGENTS.md"
    body = f"{marker}\n\n{REPLACES} {INTRO}\n\nInstructions from: CLAUDE.md\n\nclaude rules\n"
    assert replacement.text == frame(body)
    assert replacement.source == {
        "kind": SOURCE_KIND,
        "form": "instructions",
        "baseline": True,
        "baselineIdentity": identity(max_bytes=1000),
        "changes": [
            {"action": "remove", "scope": ".\u0000AGENTS.md", "path": "AGENTS.md"},
            {
                "action": "set",
                "scope": ".\u0000CLAUDE.md",
                "path": "CLAUDE.md",
                "digest": sha1("claude rules\n"),
            },
        ],
    }
    assert await step(second, sid, 1, 3) == []
    # Upstream quirk kept: a baseline file dropped by the budget stays frozen out, even once it
    # would fit, until the preparation is recomputed (restart or a new baseline).
    kit.write("AGENTS.md", "short now\n")
    assert await step(second, sid, 1, 4) == []
    check_store_consistent(second, sid)


async def test_identity_change_with_every_file_gone_is_the_empty_replacement(kit: Kit) -> None:
    kit.write("AGENTS.md", "root rules\n")
    first = kit.service()
    sid = await opened(kit, first)
    await start(first, sid)
    await first.shutdown()

    kit.remove("AGENTS.md")
    second = kit.service(maxBytes=60000)
    await second.open_session(str(kit.root), sid)
    (empty,) = await step(second, sid, 1, 2)
    assert [b["text"] for b in empty.content] == [T3]
    assert empty.source == {
        "kind": SOURCE_KIND,
        "form": "instructions",
        "baseline": True,
        "baselineIdentity": identity(max_bytes=60000),
        "changes": [{"action": "remove", "scope": ".\u0000AGENTS.md", "path": "AGENTS.md"}],
    }
    assert await step(second, sid, 1, 3) == []


async def test_no_files_and_no_previous_baseline_emits_nothing(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    assert instructions(await start(svc, sid)) == []
    assert await svc.pending(sid) == []


@pytest.mark.parametrize("max_bytes", [0, -5])
async def test_a_non_positive_budget_disables_the_source(kit: Kit, max_bytes: int) -> None:
    kit.write("AGENTS.md", "root rules\n")
    kit.write("pkg/AGENTS.md", "pkg rules\n")
    svc = kit.service(maxBytes=max_bytes)
    sid = await opened(kit, svc)
    assert instructions(await start(svc, sid)) == []
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkg/x"}, False)
    assert await svc.pending(sid) == []


async def test_a_home_that_is_the_project_root_loads_its_file_once(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.home = kit.root  # DSH_HOME/AGENTS.md and the root AGENTS.md are one file
    kit.write("AGENTS.md", "shared rules\n")
    try:
        svc = kit.service()
        sid = await opened(kit, svc)
        (baseline,) = instructions(await start(svc, sid))
        assert baseline.text == baseline_text([("$DSH_HOME/AGENTS.md", "shared rules\n")])
        assert [c["scope"] for c in baseline.source["changes"]] == ["user-global\u0000AGENTS.md"]
        kit.write("AGENTS.md", "shared rules v2\n")
        (update,) = await step(svc, sid, 1, 2)
        # The root scope names the same path, which this pass has already seen: one change.
        assert changes(update) == [("replace", "$DSH_HOME/AGENTS.md")]
    finally:
        await kit.close()


async def test_a_collapsed_sibling_stays_frozen_out_until_the_preparation_is_recomputed(
    kit: Kit,
) -> None:
    kit.write("AGENTS.md", "same rules\n")
    kit.write("CLAUDE.md", "  same rules  \n")
    first = kit.service()
    sid = await opened(kit, first)
    (baseline,) = instructions(await start(first, sid))
    assert changes(baseline) == [("set", "AGENTS.md")]
    kit.write("CLAUDE.md", "different now\n")
    # Upstream quirk kept: a baseline scope read but not retained is never probed again while
    # this preparation lives, even once it diverges.
    assert await step(first, sid, 1, 2) == []
    await first.shutdown()

    second = kit.service()  # resume recomputes the preparation, which now retains CLAUDE.md
    await second.open_session(str(kit.root), sid)
    (update,) = await step(second, sid, 1, 3)
    assert changes(update) == [("set", "CLAUDE.md")]

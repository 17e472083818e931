"""dsh/context/discard through the service: the user drops pending context before the next step.

A dropped transition stays dropped for the session while it would be the same transition (same
content, or the file still absent), across later touches, steps and a restart; the file's new
content comes back as usual. Bad requests write nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from tests.support.sessionkit import (
    Kit,
    all_changes,
    check_store_consistent,
    instructions,
    opened,
    ready,
    remove_text,
    set_text,
    start,
    step,
)

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import INBOX_DISCARDED, INBOX_SPLICED

TOKENS = count()


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    k.write("pkg/sub/AGENTS.md", "sub rules\n")
    yield k
    await k.close()


def read(svc: Any, sid: str, rel: str) -> None:
    svc.tool_result(sid, f"t{next(TOKENS)}", None, "read", {"file_path": rel}, False)


async def test_a_dropped_message_stays_dropped_until_the_file_changes(kit: Kit) -> None:
    svc, sid = await ready(kit)
    read(svc, sid, "pkg/a.ts")
    [pending] = await svc.pending(sid)
    assert all_changes([pending]) == [("set", "pkg/AGENTS.md")]
    kit.notes.clear()

    assert await svc.discard(sid, pending.id) == []
    assert kit.notes == [(sid, 0)]
    log = check_store_consistent(svc, sid)
    dropped, splice = log[-2:]
    assert dropped.type == INBOX_DISCARDED and splice.type == INBOX_SPLICED
    assert dropped.data == {
        "messageId": pending.id,
        "changes": [
            {
                "action": "set",
                "scope": "pkg\u0000AGENTS.md",
                "path": "pkg/AGENTS.md",
                "digest": pending.source["changes"][0]["digest"],
            }
        ],
    }
    # Touching the same directory again, or the next steps, do not bring it back.
    read(svc, sid, "pkg/b.ts")
    assert await svc.pending(sid) == []
    assert instructions(await step(svc, sid, 1, 2)) == []
    # New content is a new transition.
    kit.write("pkg/AGENTS.md", "pkg rules, revised\n")
    read(svc, sid, "pkg/a.ts")
    [again] = await svc.pending(sid)
    assert again.text == set_text("pkg/AGENTS.md", "pkg", "pkg rules, revised\n")


async def test_dropping_one_change_renders_the_rest_anew(kit: Kit) -> None:
    svc, sid = await ready(kit)
    read(svc, sid, "pkg/sub/a.ts")
    [pending] = await svc.pending(sid)
    assert all_changes([pending]) == [("set", "pkg/AGENTS.md"), ("set", "pkg/sub/AGENTS.md")]

    [rest] = await svc.discard(sid, pending.id, ["pkg\u0000AGENTS.md"])
    assert rest.id != pending.id
    assert all_changes([rest]) == [("set", "pkg/sub/AGENTS.md")]
    assert rest.text == set_text("pkg/sub/AGENTS.md", "pkg/sub", "sub rules\n")
    assert [m.to_json() for m in await svc.pending(sid)] == [rest.to_json()]
    check_store_consistent(svc, sid)
    # The next step carries only what is left.
    entered = instructions(await step(svc, sid, 1, 2))
    assert all_changes(entered) == [("set", "pkg/sub/AGENTS.md")]


async def test_a_dropped_replacement_and_removal_are_not_offered_again(kit: Kit) -> None:
    svc, sid = await ready(kit)
    kit.write("AGENTS.md", "root rules, changed\n")
    kit.path("pkg/AGENTS.md").unlink()
    read(svc, sid, "pkg/a.ts")
    [pending] = await svc.pending(sid)
    assert all_changes([pending]) == [("replace", "AGENTS.md")]
    await svc.discard(sid, pending.id)
    # The step reconciles the baseline files again: the dropped replacement stays away.
    assert instructions(await step(svc, sid, 1, 2)) == []

    read(svc, sid, "pkg/sub/a.ts")  # reaches pkg/sub, whose AGENTS.md the model has not seen
    [sub] = await svc.pending(sid)
    assert all_changes([sub]) == [("set", "pkg/sub/AGENTS.md")]
    assert await svc.discard(sid, sub.id) == []
    kit.path("pkg/sub/AGENTS.md").unlink()
    read(svc, sid, "pkg/sub/a.ts")
    assert await svc.pending(sid) == []  # nothing was loaded there, nothing to remove

    kit.write("AGENTS.md", "root rules, changed twice\n")
    read(svc, sid, "pkg/a.ts")
    assert all_changes(await svc.pending(sid)) == [("replace", "AGENTS.md")]


async def test_a_removal_can_be_dropped(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc, kit.root / "pkg")
    await start(svc, sid)
    kit.path("pkg/AGENTS.md").unlink()
    read(svc, sid, "a.ts")
    [pending] = await svc.pending(sid)
    assert pending.text == remove_text("pkg/AGENTS.md")
    assert await svc.discard(sid, pending.id) == []
    assert instructions(await step(svc, sid, 1, 2)) == []


async def test_a_drop_survives_a_restart(kit: Kit) -> None:
    svc, sid = await ready(kit)
    read(svc, sid, "pkg/a.ts")
    [pending] = await svc.pending(sid)
    await svc.discard(sid, pending.id)
    await svc.shutdown()

    restarted = kit.service()
    await restarted.open_session(str(kit.root), sid)
    read(restarted, sid, "pkg/a.ts")
    assert await restarted.pending(sid) == []
    assert instructions(await step(restarted, sid, 2, 1)) == []


async def test_bad_discards_write_nothing(kit: Kit) -> None:
    svc, sid = await ready(kit)
    read(svc, sid, "pkg/a.ts")
    [pending] = await svc.pending(sid)
    before = svc.store.events(sid)
    cases: list[tuple[str, list[str] | None, str]] = [
        ("no-such-message", None, errors.UNKNOWN_MESSAGE),
        (pending.id, ["nowhere\u0000AGENTS.md"], errors.INVALID_PARAMS),
    ]
    for message_id, scopes, code in cases:
        with pytest.raises(DshError) as failure:
            await svc.discard(sid, message_id, scopes)
        assert failure.value.code == code
    with pytest.raises(DshError) as unknown:
        await svc.discard("nope", pending.id)
    assert unknown.value.code == errors.UNKNOWN_SESSION
    assert svc.store.events(sid) == before
    assert [m.id for m in await svc.pending(sid)] == [pending.id]


async def test_the_baseline_cannot_be_dropped(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    read(svc, sid, "pkg/a.ts")  # before the first step: the baseline is what is pending
    [pending] = await svc.pending(sid)
    assert pending.source.get("baseline") is True
    before = svc.store.events(sid)
    with pytest.raises(DshError) as failure:
        await svc.discard(sid, pending.id)
    assert failure.value.code == errors.INVALID_PARAMS
    assert "baseline cannot be dropped" in failure.value.message
    assert svc.store.events(sid) == before

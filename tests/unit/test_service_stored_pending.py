"""``dsh/context/pending`` of a stored session that is not live in this process: an agent's
hook session, or another sidecar's, answered from the store's inbox (docs/protocol.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.sessionkit import Kit, opened, start

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import Message, SessionHeader
from dsh_sidecar.protocol import mapping
from dsh_sidecar.sessions.inbox import splice_draft
from dsh_sidecar.sessions.store import Store


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    yield k
    await k.close()


def agent_session_with_pending(kit: Kit) -> Message:
    """What an agent's hook process leaves in the shared store: a session with an inbox."""
    store = Store(str(kit.store_path), durable=False)
    try:
        store.create_session(
            SessionHeader(
                "codex:s1",
                1_700_000_000_000,
                str(kit.root),
                agent="codex",
                agent_session="s1",
            )
        )
        message = Message.user(
            ["<system-reminder>\npkg\n</system-reminder>"],
            {
                "kind": "agent-instructions",
                "form": "instructions",
                "changes": [
                    {
                        "action": "set",
                        "scope": "pkg\u0000AGENTS.md",
                        "path": "pkg/AGENTS.md",
                        "digest": "1" * 40,
                    }
                ],
            },
        )
        draft = splice_draft([], [message])
        assert draft is not None
        store.append("codex:s1", [draft], inbox=[message])
    finally:
        store.close()
    return message


async def test_an_agents_session_is_answered_from_the_store(kit: Kit) -> None:
    message = agent_session_with_pending(kit)
    svc = kit.service()
    assert await svc.pending("codex:s1") == [message]
    # It stays not live: pending opened nothing, and live-only methods still refuse it.
    assert "codex:s1" not in svc.live
    with pytest.raises(DshError) as raised:
        await svc.discard("codex:s1", message.id)
    assert raised.value.code == errors.UNKNOWN_SESSION


async def test_the_listing_carries_the_agent(kit: Kit) -> None:
    agent_session_with_pending(kit)
    svc = kit.service()
    own = await opened(kit, svc)
    await start(svc, own)
    headers = await svc.list_sessions(None, None)
    wire = {h.id: mapping.header(h) for h in headers}
    assert (wire["codex:s1"].agent, wire["codex:s1"].agent_session) == ("codex", "s1")
    assert wire[own].agent is None
    assert await svc.pending(own) == []


async def test_an_unknown_session_is_still_refused(kit: Kit) -> None:
    svc = kit.service()
    with pytest.raises(DshError) as raised:
        await svc.pending("no-such-session")
    assert raised.value.code == errors.UNKNOWN_SESSION
    assert "unknown session 'no-such-session'" in raised.value.message

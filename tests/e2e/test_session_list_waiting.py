"""``dsh/session/list``'s ``waitingTouches`` over a real server process: the touches an agent's
hooks kept in the spool while the store was busy (sessions/spool.py), counted by file, without
those an event has already taken (issue 34, item 8)."""

from __future__ import annotations

from pytest_lsp import LanguageClient

from dsh_sidecar.sessions.spool import Spool
from dsh_sidecar.sessions.store import Store

from .conftest import Workspace, as_dict, call, start


async def test_session_list_counts_the_spooled_touches_of_each_session(
    client: LanguageClient, ws: Workspace
) -> None:
    await start(client, ws)
    # Ids that are identifiers: pygls hands the result back as namedtuples, which rename others.
    kept, quiet = "kept_session", "quiet_session"
    for sid in (kept, quiet):
        await call(client, "dsh/session/open", {"cwd": str(ws.project), "sessionId": sid})

    listed = as_dict(await call(client, "dsh/session/list", {}))
    assert listed["waitingTouches"] == {}

    # Two busy events of one session: three distinct files (b.py twice).
    spool = Spool.of_home(str(ws.home))
    spool.keep(kept, (ws.path("a.py"), ws.path("b.py")))
    spool.keep(kept, (ws.path("b.py"), ws.path("c.py")))
    listed = as_dict(await call(client, "dsh/session/list", {}))
    assert listed["waitingTouches"] == {kept: 3}
    assert {s["id"] for s in listed["sessions"]} == {kept, quiet}

    # An event took the first entry (its id recorded as consumed): c.py and b.py are left.
    first = spool.read(kept)[0]
    store = Store(str(ws.store), durable=False)
    try:
        assert store.record_hook_event(kept, first.consumed_key, None)
    finally:
        store.close()
    listed = as_dict(await call(client, "dsh/session/list", {}))
    assert listed["waitingTouches"] == {kept: 2}

    # A limit that leaves the session out leaves its count out too.
    newest = as_dict(await call(client, "dsh/session/list", {"limit": 1}))
    shown = [s["id"] for s in newest["sessions"]]
    assert newest["waitingTouches"] == ({kept: 2} if shown == [kept] else {})

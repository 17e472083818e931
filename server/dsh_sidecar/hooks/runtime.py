"""One hook event, start to end: map the session, project touches, compose a step, print, commit.

Ordering: every write of the event happens inside one ``BEGIN IMMEDIATE`` transaction that stays
open while the answer is printed and flushed; it commits only after the print succeeded, and a
failed print rolls everything back. So only what was printed is recorded as delivered, and two
hook processes of one session never interleave. (The answer is written whole to the agent's
pipe, at most a few ten kilobytes; the reverse order, commit then print, would lose the answer of
a hook killed between the two and need an undo in an append-only log.)

Spooled touches are consumed by id in the event's own transaction and removed from the spool
only after its commit (``sessions/spool.py``), so a kill anywhere loses none and delivers none
twice.

Where each part of an event runs, against the write lock (every other hook of the store waits
while it is held):

- before ``BEGIN IMMEDIATE``, without it: the answered-already check (repeated inside, where it is
  authoritative), the read of the spool, the tmux query (``prefetch``);
- inside, by design: the store's reads and writes, and the print (above): one write of an
  answer bounded by the byte budget to the agent's pipe;
- inside, still: the engine's filesystem work (the session directory resolved, the project root
  found, the baseline's and the projection's probes and reads of instruction files, the model of
  what the agent loads itself). It decides from what the log says was sent, so running it before
  the lock needs a snapshot of the session to run it against; until then the wait it can cause
  is bounded by the other hook's budget, past which that hook spools (``budget``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dsh_sidecar.sessions.store import Store

from . import testpoint
from .config import HookConfig
from .event import HookEvent
from .mapping import session_id_of
from .prefetch import tmux_before_lock

if TYPE_CHECKING:
    from dsh_sidecar.sessions.spool import Kept


def handle(
    store: Store,
    event: HookEvent,
    config: HookConfig,
    emit: Callable[[bytes], None],
    *,
    before_commit: Callable[[], None] | None = None,
) -> bool:
    """Answer ``event``; True when something was printed. Raises ``StoreBusy`` having written
    nothing when another process holds the store's write lock past its busy timeout.

    ``before_commit`` runs last inside the transaction, whether or not anything was printed: the
    resident engine waits there for its client to say it printed the answer, and raises (rolling
    everything back) when it does not."""
    key = event.answer_key
    sid = session_id_of(event.agent, event.session_id, event.agent_id)
    # Checked before the engine loads: a retried event costs a lookup, not the imports. Its key
    # is only ever recorded after its session exists, so nothing else is skipped.
    if key is not None and store.hook_event_seen(sid, key):
        return False
    spool = config.spool()
    # An event that answers nothing leaves kept touches for one that does.
    kept = spool.read(sid) if event.kind != "other" else []
    tmux = tmux_before_lock(store, event, config, sid)
    testpoint.stage(config.env, "begin")
    with store.transaction():
        if key is not None and store.hook_event_seen(sid, key):
            return False  # answered by another process since the check above
        from .answer import EventRun
        from .output import envelope

        run = EventRun(store, event, config, tmux)
        fresh = [k for k in kept if not store.hook_event_seen(run.sid, k.consumed_key)]
        shaped = run.answer(
            list(dict.fromkeys(p for k in fresh for p in k.paths)),
            spooled_scanned=only_scanned(fresh),
        )
        for entry in fresh:
            store.record_hook_event(run.sid, entry.consumed_key, None)
        if shaped is not None and shaped.text:
            emit(envelope(event.name, shaped.text))
        testpoint.stage(config.env, "printed")
        if before_commit is not None:
            before_commit()
    testpoint.stage(config.env, "committed")
    spool.settle(sid, {k.id for k in kept})
    return shaped is not None and bool(shaped.text)


def only_scanned(entries: Sequence[Kept]) -> frozenset[str]:
    """The kept paths that no entry touched but by a search, a listing or a shell command."""
    scanned = {p for k in entries for p in k.scanned}
    read = {p for k in entries for p in k.paths if p not in k.scanned}
    return frozenset(scanned - read)

"""One hook event, start to end: work it out on a copy of its session, reserve, print, record.

No write lock is held across a read of the filesystem or a print (docs/architecture.md, "The
agent hook path"):

1. Without the lock: the answered-already check, the spool read, the tmux query (``prefetch``),
   then the whole engine (``answer.EventRun``: the session resolved, the project root found, the
   baseline's and the projection's probes and reads of instruction files, the model of what the
   agent loads itself, the step composed) against a private copy of the session
   (``sessions/scratch.py``), which takes no lock to make.
2. Under the lock, briefly: the session must still be at the version the copy was taken from
   and reserved by no live offer of another process (else the work is redone on a new copy);
   then, when something is to be printed, the offer is recorded (``offer.py``) and committed.
3. Without the lock: the print (the resident engine: the answer sent to its client and the
   client's ``D`` awaited).
4. Under the lock, briefly: the copy's writes recorded and the offer withdrawn, in one
   transaction. An event that prints nothing records its writes in step 2 instead.

So only what was printed is ever recorded as delivered: a hook killed before its print leaves an
offer whose owner is gone, which the next writer of the session deletes, and nothing of the
event was recorded, so the next event delivers it. A hook killed between its print and step 4
loses the record, not the answer, which a later event sends again (as before, when the print ran
inside the transaction). Two hooks of one session never interleave: a writer waits while
another's offer stands, and the version check sends it back to a new copy after.

Spooled touches are consumed by id with the event's writes and removed from the spool only after
they are recorded (``sessions/spool.py``), so a kill anywhere loses none and delivers none twice.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence

from dsh_sidecar.errors import StoreBusy
from dsh_sidecar.sessions.scratch import ScratchStore
from dsh_sidecar.sessions.spool import CONSUMED_PREFIX, Kept
from dsh_sidecar.sessions.store import Store

from . import testpoint
from .config import HookConfig
from .event import HookEvent
from .failopen import log_line
from .mapping import session_id_of
from .offer import Offer, another_stands, offers_directory
from .prefetch import TmuxQuery, tmux_before_lock

# How long a writer sleeps before looking again at another process's offer (which stands for
# the time of one print).
OFFER_POLL_S = 0.01


class _Again(Exception):
    """The session moved (or is reserved) since the copy was taken: work it out again."""

    def __init__(self, waiting: bool) -> None:
        super().__init__()
        self.waiting = waiting


def handle(
    store: Store,
    event: HookEvent,
    config: HookConfig,
    emit: Callable[[bytes], None],
    *,
    before_commit: Callable[[], None] | None = None,
) -> bool:
    """Answer ``event``; True when something was printed. Raises ``StoreBusy`` having written
    nothing when the store's write lock, or the session, stayed taken past the store's busy
    timeout (counted once for the whole event).

    ``before_commit`` runs after the print and before the event's writes are recorded, whether
    or not anything was printed: the resident engine waits there for its client to say it
    printed the answer, and raises when it does not (then nothing printed is recorded)."""
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
    deadline = time.monotonic() + store.busy_timeout_ms / 1000
    testpoint.stage(config.env, "begin")
    # Wait, without keeping it, until the lock is free: a store held past the budget spools the
    # event's touches (``main.run``) without loading the engine or working anything out.
    with store.transaction():
        pass
    offers = offers_directory(store.path)
    own: str | None = None  # the spool entry of this event's own touches, once kept
    while True:
        worked = _work_out(store, event, config, tmux, kept, sid)
        if worked is None:
            # Answered by another process since the check above (with this event's touches).
            if own is not None:
                spool.settle(sid, {own})
            return False
        scratch, answer = worked
        try:
            if answer and own is None:
                # Kept before the offer, consumed with the event's record: should this process
                # die before that, the next event of the session delivers these touches and
                # carries out the reset of the agent's context this one reports.
                own = spool.keep(
                    sid, tuple(event.touched), event.scanned, reset=event.context_reset
                )
            if own is not None:
                with scratch.transaction():
                    scratch.record_hook_event(sid, CONSUMED_PREFIX + own, None)
            recorded = True
            if answer:
                recorded = _offer_print_record(
                    store, scratch, offers, emit, answer, config, event.agent, before_commit
                )
            else:
                _record(store, scratch, offers)
                if before_commit is not None:
                    before_commit()  # nothing to print: the client writes nothing and says so
        except _Again as again:
            scratch.close()
            if time.monotonic() >= deadline:
                raise StoreBusy(store.path) from None
            if again.waiting:
                time.sleep(OFFER_POLL_S)
            continue
        except BaseException:
            scratch.close()
            raise
        if recorded:
            _COPIES.keep(store, scratch)
        else:
            scratch.close()  # its writes are not the store's: never to be served again
        break
    testpoint.stage(config.env, "committed")
    spool.settle(sid, {k.id for k in kept} | ({own} if own is not None else set()))
    return bool(answer)


def _work_out(
    store: Store,
    event: HookEvent,
    config: HookConfig,
    tmux: TmuxQuery | None,
    kept: Sequence[Kept],
    sid: str,
) -> tuple[ScratchStore, bytes] | None:
    """The engine's whole work on a copy of the session, without the write lock: the copy and
    the bytes to print (empty: none); None when the copy says the event was answered."""
    parent = session_id_of(event.agent, event.session_id) if event.agent_id is not None else None
    scratch = _COPIES.take(store, sid) or ScratchStore.copy_of(store, sid, parent, store.clock)
    key = event.answer_key
    try:
        if key is not None and scratch.hook_event_seen(sid, key):
            scratch.close()
            return None
        from .answer import EventRun
        from .output import envelope, output_of

        with scratch.transaction():  # the engine's writes nest in it, as on the real store
            run = EventRun(scratch, event, config, tmux, references=store)
            fresh = [k for k in kept if not scratch.hook_event_seen(run.sid, k.consumed_key)]
            shaped = run.answer(
                list(dict.fromkeys(p for k in fresh for p in k.paths)),
                spooled_scanned=only_scanned(fresh),
                spooled_resets=[k.reset for k in fresh if k.reset is not None],
            )
            for entry in fresh:
                scratch.record_hook_event(run.sid, entry.consumed_key, None)
    except BaseException:
        scratch.close()
        raise
    text = shaped.text if shaped is not None else ""
    return scratch, (envelope(event.name, text, output_of(event.agent).shape) if text else b"")


class _Copies:
    """The copies of the last few sessions this process answered, as their events left them:
    the resident answers a session's events one after another, and a copy the store's version
    shows to be still current serves the next event without being made again (a copy costs
    about 4 us per event of the session's log). A copy is handed out once and comes back only
    after its event was recorded."""

    LIMIT = 8

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], ScratchStore] = {}
        self._lock = threading.Lock()

    def take(self, store: Store, sid: str) -> ScratchStore | None:
        with self._lock:
            copy = self._kept.pop((store.path, sid), None)
        if copy is None:
            return None
        if copy.still_current(store):
            return copy
        copy.close()
        return None

    def keep(self, store: Store, copy: ScratchStore) -> None:
        copy.rebase()
        with self._lock:
            old = self._kept.pop((store.path, copy.session_id), None)
            self._kept[(store.path, copy.session_id)] = copy
            # The oldest first (a dict keeps its order of insertion), of whatever store.
            dropped = [self._kept.pop(key) for key in list(self._kept)[: -self.LIMIT]]
        for gone in [old, *dropped]:
            if gone is not None:
                gone.close()


_COPIES = _Copies()


def _claim(db: sqlite3.Connection, scratch: ScratchStore, offers: str, mine: str = "") -> None:
    """Inside the write transaction ``db``: the session as the copy left it and reserved by
    nobody else, or ``_Again``."""
    if another_stands(db, offers, scratch.session_id, mine):
        raise _Again(waiting=True)
    if not scratch.unchanged(db):
        raise _Again(waiting=False)


def _record(store: Store, scratch: ScratchStore, offers: str) -> None:
    """An event that prints nothing: its writes (if any) recorded in one short transaction."""
    if not scratch.changed():
        return
    with store.transaction() as db:
        _claim(db, scratch, offers)
        scratch.apply(db)


def _offer_print_record(
    store: Store,
    scratch: ScratchStore,
    offers: str,
    emit: Callable[[bytes], None],
    answer: bytes,
    config: HookConfig,
    agent: str,
    before_commit: Callable[[], None] | None,
) -> bool:
    """Offer, print, record; False when the answer was printed but could not be recorded."""
    offer = Offer(offers, scratch.session_id)
    try:
        with store.transaction() as db:
            _claim(db, scratch, offers, offer.key)
            offer.insert(db)
        try:
            testpoint.stage(config.env, "offered")
            emit(answer)
            testpoint.stage(config.env, "printed")
            if before_commit is not None:
                before_commit()
        except BaseException:
            # Not delivered: nothing of it recorded. Should even the withdrawal fail, the lock
            # released below marks the offer as nobody's, and the next writer deletes it.
            with contextlib.suppress(Exception), store.transaction() as db:
                offer.withdraw(db)
            raise
        with store.transaction() as db:
            # Nobody writes a reserved session; a writer that ignores offers (another program
            # on the same file) is noticed here, and then the printed answer is not recorded.
            standing = offer.withdraw(db) and scratch.unchanged(db)
            if standing:
                scratch.apply(db)
        if not standing:
            log_line(
                config.dsh_home,
                agent,
                "the session changed while its answer was printed: printed, not recorded",
            )
        return standing
    finally:
        offer.release()


def only_scanned(entries: Sequence[Kept]) -> frozenset[str]:
    """The kept paths that no entry touched but by a search, a listing or a shell command."""
    scanned = {p for k in entries for p in k.scanned}
    read = {p for k in entries for p in k.paths if p not in k.scanned}
    return frozenset(scanned - read)

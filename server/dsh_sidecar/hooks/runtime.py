"""One hook event, start to end: map the session, project touches, compose a step, print, commit.

Ordering: every write of the event happens inside one ``BEGIN IMMEDIATE`` transaction that stays
open while the answer is printed and flushed; it commits only after the print succeeded, and a
failed print rolls everything back. So only what was printed is recorded as delivered, and two
hook processes of one session never interleave. (Holding the write lock for one short write to a
pipe is cheap; the reverse order, commit then print, would need an undo in an append-only log.)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh_sidecar.sessions.store import Store

from .config import HookConfig
from .event import HookEvent
from .mapping import session_id_of

if TYPE_CHECKING:
    from .output import Shaped


def handle(
    store: Store, event: HookEvent, config: HookConfig, emit: Callable[[bytes], None]
) -> bool:
    """Answer ``event``; True when something was printed. Raises ``StoreBusy`` having written
    nothing when another process holds the store's write lock past its busy timeout."""
    spool = config.spool()
    with store.transaction():
        # Checked before the engine loads: a retried event costs a lookup, not the imports.
        # Its key is only ever recorded after its session exists, so nothing else is skipped.
        key = event.answer_key
        sid = session_id_of(event.agent, event.session_id, event.agent_id)
        if key is not None and store.hook_event_seen(sid, key):
            return False
        from .answer import EventRun
        from .output import envelope

        run = EventRun(store, event, config)
        # An event that answers nothing leaves kept touches for one that does.
        spooled_file, spooled = spool.taken(run.sid) if event.kind != "other" else ("", ())
        shaped: Shaped | None
        try:
            shaped = run.answer(spooled)
            if shaped is not None and shaped.text:
                emit(envelope(event.name, shaped.text))
        except BaseException:
            spool.keep(run.sid, spooled)  # not delivered: the next event tries again
            raise
    if spooled:
        _remove(spooled_file)
    return shaped is not None and bool(shaped.text)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)

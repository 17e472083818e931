"""The per-session projection queue (event loop side of ``projection.py``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol, TypeVar

from .projection import Touched

S = TypeVar("S", contravariant=True)


class Projector(Protocol[S]):
    """Projects one gathered batch of a session's touches (``projector.py``)."""

    async def project(self, session: S, batch: list[Touched]) -> None: ...


# A projection starts once no touch has joined it for QUIET_SECONDS, or once it has gathered
# touches for GATHER_SECONDS, or at once when someone waits for the queue (pending, a step).
QUIET_SECONDS = 0.02
GATHER_SECONDS = 0.25


class ProjectionQueue:
    """Projections of one session, run one after another in the order their touches came.

    A touch that arrives while the last queued projection has not started yet joins it: that
    projection reconciles all its touched paths at once (upstream's reconcile takes a list of
    them). A lone touch is projected as upstream does; a burst (an editor opening 10,000 files,
    a step releasing its staged touches) costs a few reconciliations instead of one each, and
    ends in the same pending message unless a loaded scope changes or the budget drops files in
    the middle of the burst, where item order and the budget marker may differ.

    So that a burst gathers into few projections, a projection waits until touches have stopped
    joining it for a moment (``QUIET_SECONDS``, at most ``GATHER_SECONDS`` in all) before it
    starts, unless something waits for the queue: ``dsh/context/pending`` right after a save
    gets its answer without that pause. Each projection re-reads and re-renders the pending
    files, so thousands of small ones would cost the square of a burst.
    """

    def __init__(self) -> None:
        self.tail: asyncio.Future[None] | None = None
        self._batch: list[Touched] | None = None
        self._joined_at = 0.0  # loop time the latest touch joined the batch not started yet
        self._waiters = 0
        self._hurry = asyncio.Event()  # set while somebody waits (binds to a loop on first use)
        # The gathering pause of the batch not started yet: resolved when somebody starts
        # waiting, so it starts at once (a plain future and a timer, not a task per pause).
        self._pause: asyncio.Future[None] | None = None

    @property
    def hurry(self) -> asyncio.Event:
        """Set while somebody waits for this queue (a step, ``pending``, a discard)."""
        return self._hurry

    def add(self, touched: Touched, projector: Projector[S], session: S) -> None:
        """Queue ``touched``; ``projector.project(session, batch)`` runs when its turn comes."""
        now = asyncio.get_running_loop().time()
        self._joined_at = now
        if self._batch is not None:
            self._batch.append(touched)
            return
        batch = self._batch = [touched]
        previous = self.tail

        async def go() -> None:
            try:
                if previous is not None and not previous.done():
                    await asyncio.gather(previous, return_exceptions=True)
                elif previous is not None and not previous.cancelled():
                    previous.exception()  # retrieved, as the gather would have
                await self._gather(now)
                if self._batch is batch:
                    self._batch = None  # from here on, touches queue a projection of their own
                await projector.project(session, list(batch))
            finally:
                if self._batch is batch:  # cancelled before it started: let touches queue anew
                    self._batch = None

        self.tail = asyncio.ensure_future(go())

    async def _gather(self, started: float) -> None:
        """Let the touches of a burst join, unless somebody waits for this queue."""
        loop = asyncio.get_running_loop()
        while not self._waiters:
            pause = min(self._joined_at + QUIET_SECONDS, started + GATHER_SECONDS) - loop.time()
            if pause <= 0:
                return
            self._pause = waiter = loop.create_future()
            timer = loop.call_later(pause, _end_pause, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                if self._pause is waiter:
                    self._pause = None

    async def drain(self) -> None:
        """Wait until every projection queued so far has run (they start without a pause)."""
        if self.tail is None or self.tail.done():
            return  # nothing queued: nothing to hurry
        self._wait()
        try:
            while self.tail is not None and not self.tail.done():
                await asyncio.shield(self.tail)
        finally:
            self._waited()

    async def settle(self) -> None:
        """``drain``, swallowing the failures (already reported) of queued projections."""
        async with self.waiting():
            if self.tail is not None:
                await asyncio.gather(self.tail, return_exceptions=True)

    @contextlib.asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        """While inside, this session's projections are somebody's own work: they start without
        a pause and run at once (``hurry``), never behind other sessions' backlog. A command
        holds it while it waits for the session lock, which a projection may be holding."""
        self._wait()
        try:
            yield
        finally:
            self._waited()

    def _wait(self) -> None:
        self._waiters += 1
        self._hurry.set()
        if self._pause is not None:
            _end_pause(self._pause)

    def _waited(self) -> None:
        self._waiters -= 1
        if not self._waiters:
            self._hurry.clear()


def _end_pause(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)

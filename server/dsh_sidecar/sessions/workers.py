"""Where blocking work runs: bounded thread pools, never the event loop.

Filesystem work (previews, scopes, hover, resolving touched paths) and store work (anything that
reads or writes SQLite, including steps and projections, which also read files) run in separate
pools, so a store whose write lock another process holds, or a slow disk, stalls only the requests
that need it: the loop keeps reading messages and the other pool keeps answering.

The filesystem pool's threads are daemon threads: its work only reads (files, directories), so
a server stopped by SIGTERM or SIGINT in the middle of a large request (a deep chain of big
files, a huge rule set) exits at once instead of waiting for that read to end. The store pools'
threads are not: the interpreter lets a write in progress finish before the process exits (what
``ThreadPoolExecutor`` does), and only then ends. Both hand an answer back to the loop the same
way (``ThreadPool.run``).

Projections are background store work (``background``): one runs at a time, in a thread of its
own, and none starts while a request's store work (a step, ``pending``, a discard, any session
command) is running, so another session's backlog never queues in front of a request. A
projection somebody waits for (its session's step or ``pending``) is that request's own work: it
runs at once, as foreground store work, even if it was already waiting for its turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")

FS_THREADS = 4
STORE_THREADS = 4


# What ``concurrent.futures.thread`` registers its own exit with: called when the interpreter
# begins to exit, before it joins the non-daemon threads (which would otherwise wait on their
# queue for ever; ``atexit`` runs only after that join). Refused (RuntimeError) once the exit
# has begun. Not in the typeshed stubs, as it is private to the standard library.
_at_interpreter_exit: Callable[[Callable[[], None]], None]
_at_interpreter_exit = threading._register_atexit  # type: ignore[attr-defined]


class ThreadPool(Executor):
    """A fixed pool of threads. Threads start on first use; ``shutdown`` drops what is queued.

    ``daemon`` threads may be abandoned when the process exits (work that only reads). The
    others are let go when the interpreter begins to exit, after the loop has returned: each
    finishes the call it is in (a write is never cut short), then ends, and the interpreter waits
    for that. Work still queued then is dropped, as ``shutdown`` drops it: whoever asked for it
    has gone with the loop.

    ``run`` is the loop's way in: the answer comes back as an asyncio future settled with one
    ``call_soon_threadsafe``, without a ``concurrent.futures.Future`` chained to it (a lock and a
    condition per call, and callbacks both ways, on every request's path: what
    ``run_in_executor`` costs).
    """

    def __init__(self, threads: int, name: str, *, daemon: bool) -> None:
        self._threads = threads
        self._name = name
        self._daemon = daemon
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._started: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def _put(self, job: _Job) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            if len(self._started) < self._threads:
                if not self._started and not self._daemon:
                    _at_interpreter_exit(self._let_go)
                thread = threading.Thread(
                    target=self._work,
                    name=f"{self._name}_{len(self._started)}",
                    daemon=self._daemon,
                )
                self._started.append(thread)
                thread.start()
        self._queue.put(job)

    def _let_go(self) -> None:
        self.shutdown(wait=False, cancel_futures=True)

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """``fn`` in a thread of the pool; its outcome in the future (on the running loop).
        Cancelling the future before ``fn`` starts drops it, as an executor drops cancelled work."""
        job = _LoopJob(asyncio.get_running_loop(), fn)
        self._put(job)
        return job.future

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        job = _ExecutorJob(lambda: fn(*args, **kwargs))
        self._put(job)
        return job.future

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            job.run()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            started = list(self._started)
        if cancel_futures:
            while True:
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job.cancel()
        for _ in started:
            self._queue.put(None)
        if wait:
            for thread in started:
                thread.join()


class _Job(Protocol):
    def run(self) -> None: ...

    def cancel(self) -> None: ...


class _ExecutorJob(Generic[T]):
    """A call whose outcome goes to a ``concurrent.futures.Future`` (``Executor.submit``)."""

    def __init__(self, call: Callable[[], T]) -> None:
        self.future: Future[T] = Future()
        self._call = call

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self._call()
        except BaseException as exc:  # handed to whoever waits, as an executor does
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)

    def cancel(self) -> None:
        self.future.cancel()


class _LoopJob(Generic[T]):
    """A call whose outcome settles an asyncio future of ``loop`` (``ThreadPool.run``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, call: Callable[[], T]) -> None:
        self.loop = loop
        self.future: asyncio.Future[T] = loop.create_future()
        self._call = call

    def run(self) -> None:
        if self.future.cancelled():  # its awaiter gave up before it started (a plain read)
            return
        try:
            result = self._call()
        except BaseException as exc:  # handed to the awaiting coroutine, as an executor does
            self._settle(_fail, exc)
        else:
            self._settle(_succeed, result)

    def cancel(self) -> None:
        self._settle(_cancel, None)

    def _settle(self, how: Callable[[asyncio.Future[T], Any], None], value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            self.loop.call_soon_threadsafe(how, self.future, value)


def _succeed(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _cancel(future: asyncio.Future[Any], _: object) -> None:
    future.cancel()


class _Lane:
    """The background lane's turn-taking (loop only): free when no background job runs and no
    foreground store work is in flight. Every change wakes the waiters, who look again."""

    def __init__(self) -> None:
        self.busy = False
        self.foreground = 0
        self._changed = asyncio.Event()

    def _pulse(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def enter(self, hurry: asyncio.Event | None) -> bool:
        """Wait for the lane; False as soon as ``hurry`` is set (then run it as foreground)."""
        while self.busy or self.foreground:
            if hurry is not None and hurry.is_set():
                return False
            waits = {asyncio.ensure_future(self._changed.wait())}
            if hurry is not None:
                waits.add(asyncio.ensure_future(hurry.wait()))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
        if hurry is not None and hurry.is_set():
            return False
        self.busy = True
        return True

    def leave(self) -> None:
        self.busy = False
        self._pulse()

    def foreground_ended(self) -> None:
        self.foreground -= 1
        if not self.foreground:
            self._pulse()


class Workers:
    def __init__(self, fs_threads: int = FS_THREADS, store_threads: int = STORE_THREADS) -> None:
        self._fs = ThreadPool(fs_threads, "dsh-fs", daemon=True)
        self._store = ThreadPool(store_threads, "dsh-store", daemon=False)
        self._background = ThreadPool(1, "dsh-background", daemon=False)
        self._lane: _Lane | None = None  # made on first use, on the loop

    async def fs(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (filesystem only, no store) in the filesystem pool."""
        return await self._fs.run(fn)

    async def store(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (it reads or writes the store) in the store pool, now: a request's work."""
        lane = self._the_lane()
        lane.foreground += 1
        try:
            return await self._store.run(fn)
        finally:
            lane.foreground_ended()

    async def background(self, fn: Callable[[], T], hurry: asyncio.Event | None = None) -> T:
        """Run ``fn`` (store work nobody waits for yet: a projection) when the lane is free; at
        once, as foreground work, when ``hurry`` is set before its turn comes."""
        lane = self._the_lane()
        if not await lane.enter(hurry):
            return await self.store(fn)
        try:
            return await self._background.run(fn)
        finally:
            lane.leave()

    def _the_lane(self) -> _Lane:
        if self._lane is None:
            self._lane = _Lane()
        return self._lane

    def shutdown(self) -> None:
        # Queued work is dropped; running work finishes in its thread (nothing waits for it).
        self._fs.shutdown(wait=False, cancel_futures=True)
        self._store.shutdown(wait=False, cancel_futures=True)
        self._background.shutdown(wait=False, cancel_futures=True)

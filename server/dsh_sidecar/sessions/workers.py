"""Where blocking work runs: bounded thread pools, never the event loop.

Filesystem work (previews, scopes, hover, resolving touched paths) and store work (anything that
reads or writes SQLite, including steps and projections, which also read files) run in separate
pools, so a store whose write lock another process holds, or a slow disk, stalls only the requests
that need it: the loop keeps reading messages and the other pool keeps answering.

The filesystem pool's threads are daemon threads: its work only reads (files, directories), so
a server stopped by SIGTERM or SIGINT in the middle of a large request (a deep chain of big
files, a huge rule set) exits at once instead of waiting for that read to end, which
``ThreadPoolExecutor`` would do (the interpreter joins its threads at exit). The store pool keeps
``ThreadPoolExecutor``: a write in progress finishes before the process exits.

Projections are background store work (``background``): one runs at a time, in a thread of its
own, and none starts while a request's store work (a step, ``pending``, a discard, any session
command) is running, so another session's backlog never queues in front of a request. A
projection somebody waits for (its session's step or ``pending``) is that request's own work: it
runs at once, as foreground store work, even if it was already waiting for its turn.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

FS_THREADS = 4
STORE_THREADS = 4


class DaemonPool(Executor):
    """A fixed pool of daemon threads, for work that may be abandoned when the process exits
    (reads only). Threads start on first use; ``shutdown`` drops what is queued."""

    def __init__(self, threads: int, name: str) -> None:
        self._threads = threads
        self._name = name
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._started: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            if len(self._started) < self._threads:
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}_{len(self._started)}", daemon=True
                )
                self._started.append(thread)
                thread.start()
        self._queue.put((future, lambda: fn(*args, **kwargs)))
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # handed to the awaiting coroutine, as an executor does
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            started = list(self._started)
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in started:
            self._queue.put(None)
        if wait:
            for thread in started:
                thread.join()


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
        self._fs = DaemonPool(fs_threads, "dsh-fs")
        self._store = ThreadPoolExecutor(store_threads, thread_name_prefix="dsh-store")
        self._background = ThreadPoolExecutor(1, thread_name_prefix="dsh-background")
        self._lane: _Lane | None = None  # made on first use, on the loop

    async def fs(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (filesystem only, no store) in the filesystem pool."""
        return await asyncio.get_running_loop().run_in_executor(self._fs, fn)

    async def store(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (it reads or writes the store) in the store pool, now: a request's work."""
        lane = self._the_lane()
        lane.foreground += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._store, fn)
        finally:
            lane.foreground_ended()

    async def background(self, fn: Callable[[], T], hurry: asyncio.Event | None = None) -> T:
        """Run ``fn`` (store work nobody waits for yet: a projection) when the lane is free; at
        once, as foreground work, when ``hurry`` is set before its turn comes."""
        lane = self._the_lane()
        if not await lane.enter(hurry):
            return await self.store(fn)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._background, fn)
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

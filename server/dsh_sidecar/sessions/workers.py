"""Where blocking work runs: two bounded thread pools, never the event loop.

Filesystem work (previews, scopes, hover, resolving touched paths) and store work (anything that
reads or writes SQLite, including steps and projections, which also read files) run in separate
pools, so a store whose write lock another process holds, or a slow disk, stalls only the requests
that need it: the loop keeps reading messages and the other pool keeps answering.

The filesystem pool's threads are daemon threads: its work only reads (files, directories), so
a server stopped by SIGTERM or SIGINT in the middle of a large request (a deep chain of big
files, a huge rule set) exits at once instead of waiting for that read to end, which
``ThreadPoolExecutor`` would do (the interpreter joins its threads at exit). The store pool keeps
``ThreadPoolExecutor``: a write in progress finishes before the process exits.
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


class Workers:
    def __init__(self, fs_threads: int = FS_THREADS, store_threads: int = STORE_THREADS) -> None:
        self._fs = DaemonPool(fs_threads, "dsh-fs")
        self._store = ThreadPoolExecutor(store_threads, thread_name_prefix="dsh-store")

    async def fs(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (filesystem only, no store) in the filesystem pool."""
        return await asyncio.get_running_loop().run_in_executor(self._fs, fn)

    async def store(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (it reads or writes the store) in the store pool."""
        return await asyncio.get_running_loop().run_in_executor(self._store, fn)

    def shutdown(self) -> None:
        # Queued work is dropped; running work finishes in its thread (nothing waits for it).
        self._fs.shutdown(wait=False, cancel_futures=True)
        self._store.shutdown(wait=False, cancel_futures=True)

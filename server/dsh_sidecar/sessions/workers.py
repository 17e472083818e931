"""Where blocking work runs: two bounded thread pools, never the event loop.

Filesystem work (previews, scopes, hover, resolving touched paths) and store work (anything that
reads or writes SQLite, including steps and projections, which also read files) run in separate
pools, so a store whose write lock another process holds, or a slow disk, stalls only the requests
that need it: the loop keeps reading messages and the other pool keeps answering.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

FS_THREADS = 4
STORE_THREADS = 4


class Workers:
    def __init__(self, fs_threads: int = FS_THREADS, store_threads: int = STORE_THREADS) -> None:
        self._fs = ThreadPoolExecutor(fs_threads, thread_name_prefix="dsh-fs")
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

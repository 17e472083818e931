"""The worker pools' way back to the loop (``sessions/workers.py``): a filesystem call's outcome
settles the asyncio future its request awaits, cancelled work is dropped, shutdown cancels what
is queued. Behaviour only: how long a hop takes is bench/roundtrip.py's business."""

from __future__ import annotations

import asyncio
import threading

import pytest

from dsh_sidecar.sessions.workers import DaemonPool, Workers

HANG_GUARD = 60.0  # seconds; only against a hang


async def test_a_call_runs_in_a_pool_thread_and_its_result_comes_back() -> None:
    workers = Workers()
    try:
        name = await asyncio.wait_for(
            workers.fs(lambda: threading.current_thread().name), HANG_GUARD
        )
        assert name.startswith("dsh-fs")
        assert name != threading.current_thread().name
    finally:
        workers.shutdown()


async def test_an_exception_reaches_the_awaiting_coroutine() -> None:
    workers = Workers()

    def fail() -> None:
        raise OSError("disk on fire")

    try:
        with pytest.raises(OSError, match="disk on fire"):
            await asyncio.wait_for(workers.fs(fail), HANG_GUARD)
    finally:
        workers.shutdown()


async def test_a_call_cancelled_before_it_starts_is_dropped() -> None:
    pool = DaemonPool(1, "test-pool")
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def block() -> None:
        started.set()
        release.wait(HANG_GUARD)

    try:
        first = pool.run(block)
        assert await asyncio.to_thread(started.wait, HANG_GUARD)
        second = pool.run(lambda: ran.append("second"))
        second.cancel()
        release.set()
        await asyncio.wait_for(first, HANG_GUARD)
        third = pool.run(lambda: ran.append("third"))
        await asyncio.wait_for(third, HANG_GUARD)
        assert ran == ["third"]  # the one thread ran third after second, which it dropped
        assert second.cancelled()
    finally:
        release.set()
        pool.shutdown(wait=False)


async def test_shutdown_cancels_what_is_queued_and_refuses_new_work() -> None:
    pool = DaemonPool(1, "test-pool")
    started, release = threading.Event(), threading.Event()

    def block() -> str:
        started.set()
        release.wait(HANG_GUARD)
        return "done"

    try:
        running = pool.run(block)
        assert await asyncio.to_thread(started.wait, HANG_GUARD)
        queued = pool.run(lambda: "never")
        submitted = pool.submit(lambda: "never either")
        pool.shutdown(wait=False, cancel_futures=True)
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(queued, HANG_GUARD)
        assert submitted.cancelled()
        release.set()
        assert await asyncio.wait_for(running, HANG_GUARD) == "done"  # running work finishes
        with pytest.raises(RuntimeError):
            pool.run(lambda: None)
    finally:
        release.set()


def test_submit_still_serves_as_an_executor() -> None:
    pool = DaemonPool(2, "test-pool")
    try:
        assert pool.submit(lambda a, b: a + b, 2, b=3).result(HANG_GUARD) == 5
    finally:
        pool.shutdown()

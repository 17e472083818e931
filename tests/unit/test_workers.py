"""The worker pools' way back to the loop (``sessions/workers.py``): a filesystem call's outcome
settles the asyncio future its request awaits, cancelled work is dropped, shutdown cancels what
is queued. Behaviour only: how long a hop takes is bench/roundtrip.py's business."""

from __future__ import annotations

import asyncio
import pathlib
import subprocess
import sys
import threading

import pytest

from dsh_sidecar.sessions.workers import ThreadPool, Workers

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
    pool = ThreadPool(1, "test-pool", daemon=True)
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
    pool = ThreadPool(1, "test-pool", daemon=True)
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
    pool = ThreadPool(2, "test-pool", daemon=True)
    try:
        assert pool.submit(lambda a, b: a + b, 2, b=3).result(HANG_GUARD) == 5
    finally:
        pool.shutdown()


# What the process does at exit with work in a pool's thread: a store write in progress is
# finished, a read is abandoned, and idle threads never hold the exit up. Each runs in a real
# interpreter, which returns from its main while the pool's thread is still inside the call.
EXIT_SCRIPT = """
import asyncio, sys, threading, time
from dsh_sidecar.sessions.workers import ThreadPool

daemon = sys.argv[1] == "daemon"
marker = sys.argv[2]
pool = ThreadPool(2, "exit-test", daemon=daemon)
started = threading.Event()

def slow_write():
    started.set()
    time.sleep(0.5)  # the main thread has returned by now
    with open(marker, "w") as fh:
        fh.write("written")

async def main():
    await pool.run(lambda: None)  # a thread that is idle at exit
    pool.run(slow_write)
    await asyncio.to_thread(started.wait)

asyncio.run(main())
"""


def _run_to_exit(tmp_path: pathlib.Path, kind: str) -> tuple[subprocess.CompletedProcess[str], str]:
    marker = tmp_path / "marker"
    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, kind, str(marker)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )
    return done, marker.read_text() if marker.exists() else ""


def test_at_exit_a_store_pool_finishes_the_call_in_progress_and_ends(
    tmp_path: pathlib.Path,
) -> None:
    done, written = _run_to_exit(tmp_path, "store")
    assert (done.returncode, done.stderr) == (0, "")
    assert written == "written"


def test_at_exit_a_daemon_pool_abandons_the_call_in_progress(tmp_path: pathlib.Path) -> None:
    done, written = _run_to_exit(tmp_path, "daemon")
    assert (done.returncode, done.stderr) == (0, "")
    assert written == ""

"""glibc's heap thresholds (``lsp/rpc/heap.py``): a served process keeps the memory an answer
freed instead of faulting it in again for the next one.

Each case runs in a fresh interpreter (the thresholds are the process's) and counts the minor
page faults of twenty rounds that build four copies of a 4.5 MB answer and free them, as a deep
chain's preview is encoded, joined, encoded to bytes and framed. A count of faults, not a time.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

SERVER = pathlib.Path(__file__).resolve().parents[2] / "server"

ROUNDS = """
import resource

def answer_like():
    blocks = [b"x" * (4_500_000 + i) for i in range(4)]
    return sum(len(b) for b in blocks)

def faults_per_round():
    answer_like()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        answer_like()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20
"""


def run_python(body: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", ROUNDS + body],
        env={"PYTHONPATH": str(SERVER), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_without_the_thresholds_each_round_faults_its_answer_in_again() -> None:
    # What the change is for: glibc's own thresholds hand the blocks back every round.
    assert float(run_python("print(faults_per_round())")) > 1000


def test_with_the_thresholds_the_freed_memory_is_reused() -> None:
    out = run_python(
        "from dsh_sidecar.lsp.rpc.heap import keep_freed_memory\n"
        "print(keep_freed_memory(), faults_per_round())"
    )
    applied, faults = out.split()
    assert applied == "True"  # CI is Linux with glibc
    assert float(faults) < 50


def test_serve_run_sets_them_before_its_loop() -> None:
    out = run_python(
        "from dsh_sidecar.lsp.rpc.serve import run\n"
        "async def main():\n"
        "    print(faults_per_round())\n"
        "    return 0\n"
        "run(main())"
    )
    assert float(out) < 50

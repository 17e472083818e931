"""Shared helpers of the benchmark scripts: timing, ratios, machine facts.

Every script measures the product and its baseline in the same run, interleaved, and prints the
ratio; absolute times vary between machines, ratios much less. Nothing here is a test.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no samples")
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def interleaved(
    runs: dict[str, Callable[[], Any]], rounds: int, inner: int = 1
) -> dict[str, list[float]]:
    """Per-call seconds of each callable, run round-robin so drift hits all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - start) / inner)
    return samples


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages (the machine is shared: every figure carries them)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            one, five, fifteen = fh.read().split()[:3]
    except (OSError, ValueError):
        return None
    return float(one), float(five), float(fifteen)


def report(title: str, rows: list[tuple[str, str]], result: dict[str, Any]) -> None:
    """Human lines on stdout, then one JSON line (``RESULT {...}``) for docs and scripts."""
    load = load_average()
    if load is not None:
        rows = [*rows, ("load average (1/5/15 min)", " ".join(f"{v:.2f}" for v in load))]
        result = {**result, "loadavg": load}
    print(f"== {title}")
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    print("RESULT " + json.dumps({"bench": title, **result, "machine": machine()}))
    sys.stdout.flush()


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"

"""How long a hook may wait for the store's write lock.

The agent kills a hook at the timeout ``hooks install`` writes for it. Waiting for another
process's write lock may use all of that but a margin for what the event still has to do once it
has the lock (the engine, the print, the commit) and for the interpreter's start before ``main``
sees the clock; only a lock held past that is a busy store, whose touches are spooled.
"""

from __future__ import annotations

# The timeout the installer writes into the agent's settings (Gemini CLI's in milliseconds).
TIMEOUT_SECONDS = 5
# What the rest of an event needs: its p95 is about 0.1 s on a loaded two-core machine
# (docs/benchmarks.md, "Agent hooks"); the rest is headroom for a slower one.
MARGIN_SECONDS = 2.0


def wait_ms(started: float, now: float) -> int:
    """The busy timeout left for an event whose process started at ``started`` (monotonic)."""
    return max(0, int((started + TIMEOUT_SECONDS - MARGIN_SECONDS - now) * 1000))

"""A place where a hook process can be stopped from a test, to kill it there deterministically.

``DSH_TEST_HOOK_PAUSE=<stage>:<fifo>`` (tests only): on reaching ``stage`` the hook writes the
stage's name to the FIFO, then waits until something is written back to it. A test reads the
name (so it knows where the hook is, without sleeping) and either kills the hook or lets it go
on. Unset, each stage costs one dictionary look-up.
"""

from __future__ import annotations

from collections.abc import Mapping

PAUSE_ENV = "DSH_TEST_HOOK_PAUSE"


def stage(env: Mapping[str, str], name: str, *, variable: str = PAUSE_ENV) -> None:
    """Stop at ``name`` when ``variable`` asks for it (the resident engine has its own)."""
    wanted, _, fifo = env.get(variable, "").partition(":")
    if wanted != name or not fifo:
        return
    with open(fifo, "w", encoding="utf-8") as out:  # blocks until the test opens it to read
        out.write(name + "\n")
    with open(fifo, encoding="utf-8") as back:  # blocks until the test lets the hook go on
        back.readline()

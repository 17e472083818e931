"""What the agent loads itself, by the per-agent models ``explain`` uses (``dsh_sidecar.agents``).

The sidecar's own chain is the target; a file the agent already loads natively is recorded as
seen (so a later change is a ``replace`` and a deletion a ``remove``) but never printed again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from dsh_sidecar.fs import LocalFileSystem

if TYPE_CHECKING:  # loaded with the simulation, when a file's native load is asked about
    from dsh_sidecar.agents.rules import AgentRules

from .event import Agent

# A name no directory holds: simulating "a file in the cwd" gives the start-up load alone.
START_PROBE = ".dsh-sidecar-session-start"
READ_CAP = 64 * 1024


def rules_of(agent: Agent) -> AgentRules:
    """The model of what ``agent`` loads, from its record (an unknown id is an error)."""
    from dsh_sidecar.agents.registry import record

    return record(agent).rules


def native_paths(
    agent: Agent,
    files: Iterable[str | None],
    *,
    cwd: str,
    workspace: str,
    home: str,
    env: Mapping[str, str],
    fs: LocalFileSystem,
) -> frozenset[str]:
    """Real paths of the instruction files ``agent`` loads itself: at start (``None``) and for
    each touched file (what it loads after reading that file)."""
    from dsh_sidecar.explain.simulate import Where, simulate

    rules = rules_of(agent)
    found: set[str] = set()
    for file in files:
        target = os.path.join(cwd, START_PROBE) if file is None else file
        if not fs.is_directory(os.path.dirname(target)):
            continue
        where = Where(
            file=target, cwd=cwd, workspace=workspace, home=home, env=env, read_cap=READ_CAP
        )
        for each in simulate(rules, where, fs).files:
            if each.loaded:
                found.add(_real(fs, each.path))
    return frozenset(found)


def _real(fs: LocalFileSystem, path: str) -> str:
    try:
        return os.path.join(fs.resolve(os.path.dirname(path)), os.path.basename(path))
    except (OSError, ValueError):
        return path

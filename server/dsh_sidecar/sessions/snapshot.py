"""Immutable views that worker threads get instead of the service's live state.

The event loop owns every mutable piece of the service (the live sessions, the settings) and is
the only code that changes them. A worker that needs to know "which sessions are live and what do
they have active" gets a ``Snapshot``: frozen values, built on the loop, safe to read from any
thread while the loop goes on opening and closing sessions.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from dsh_sidecar.config import Settings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.state import Change

NO_CHANGES: Mapping[str, Change] = MappingProxyType({})


def frozen_changes(changes: Mapping[str, Change]) -> Mapping[str, Change]:
    """A read-only copy: what a live session has active, by scope key."""
    return MappingProxyType(dict(changes))


@attrs.frozen
class LiveView:
    """One live session as workers see it."""

    session_id: str
    cwd: str
    # The latest visible agent-instructions change per scope key (removals included).
    effective: Mapping[str, Change] = NO_CHANGES
    # What a person tells sessions apart by (the hover names them so, never by id).
    agent: str | None = None
    created_at: int = 0


@attrs.frozen
class Snapshot:
    settings: Settings
    env: Mapping[str, str]
    dsh_home: str
    fs: LocalFileSystem
    sessions: tuple[LiveView, ...] = ()
    # Which snapshot of its service this is: answers built from one may be kept by it.
    generation: int = 0

"""What a query reads, taken on the event loop and handed whole to one worker call.

``Caches`` holds the answers kept for one settings generation (each document's chain, each
file's explanation, whole hover texts and ``dsh/scopes`` results); a settings change replaces
the whole object, so a worker still running on the old one keeps a consistent set and never
sees a half-replaced one. ``Asked`` pairs it with the service's ``Snapshot`` (settings, live
sessions as frozen views): a worker reads nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import attrs

from dsh_sidecar.config import Settings, os_home
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sessions.snapshot import Snapshot
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser
from dsh_sidecar.sources.observed import ObservedCache, OneLook

from .scopes import ScopeChains

T = TypeVar("T")
EXPLANATIONS_KEPT = 64
ANSWERS_KEPT = 128


@attrs.frozen(eq=False)
class Caches:
    """The kept answers of one settings generation (see docs/architecture.md, "Answers kept")."""

    settings: Settings
    chains: ScopeChains
    explained: ObservedCache[Any]
    answers: ObservedCache[Any]

    @classmethod
    def for_snapshot(cls, snapshot: Snapshot) -> Caches:
        home = snapshot.env.get("HOME") or os_home()
        chains = ScopeChains(
            snapshot.settings.instructions, snapshot.fs, GitUser.from_env(snapshot.env, home)
        )
        return cls(
            snapshot.settings, chains, ObservedCache(EXPLANATIONS_KEPT), ObservedCache(ANSWERS_KEPT)
        )

    def parts_built(self) -> int:
        """How many chains and explanations were computed rather than reused."""
        return self.chains.chains.built + self.explained.built


@attrs.frozen
class Asked:
    """One query's inputs: frozen settings and live sessions, and the caches of those settings."""

    snapshot: Snapshot
    caches: Caches

    @property
    def home(self) -> str:
        return self.snapshot.env.get("HOME") or os_home()

    def look(self) -> OneLook:
        """The request's one view of the filesystem: each path asked once."""
        return OneLook(self.snapshot.fs)

    def kept(self, key: Hashable, compute: Callable[[LocalFileSystem], T]) -> T:
        """``compute``'s whole answer for ``key`` (blocking), kept while what it saw holds.

        Built from kept parts (a document's chain, a file's explanation) and the live sessions
        of one snapshot (``key`` carries its generation). Kept with what rebuilding it
        re-checked of the files (the union of what its parts rest on), a warm request costs one
        pass of stats and no formatting. It is kept only once its parts were kept already:
        recording a cold build of the parts a second time, for the whole, would make the first
        answer on a deep tree markedly slower; the next request keeps it, re-checking the parts
        through the same look.
        """
        look = self.look()
        try:
            found = self.caches.answers.lookup(key, look)
            if found is not None:
                kept: T = found[0]
                return kept
            before = self.caches.parts_built()
            value = compute(look)
            if self.caches.parts_built() == before:  # every part was a kept one: keep the whole
                value = self.caches.answers.get(key, look, compute)
            return value
        finally:
            look.close()  # its directory handles now, not whenever the collector comes

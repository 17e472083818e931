"""``dsh/scopes``, hover and diagnostics: the chain that governs a document, and who has it active.

Runs in a worker over a ``Snapshot`` (never the live sessions themselves), so sessions opening
and closing on the event loop cannot change what a report is being built from.

The chain of a document is a pure function of the files it looks at, so each one is kept (per
document path) with what its computation saw of the filesystem (``sources.observed``) and
served again while that still holds: a warm report costs a ``stat`` per directory of the chain
and per present file instead of a probe, a resolve and a read of every candidate. What the live
sessions have active comes from the snapshot each time (it is in memory). Nothing here takes a
lock that another request could wait on: two workers computing the same report at once each
compute it.
"""

from __future__ import annotations

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_document_chain
from dsh_sidecar.sources.agent_instructions.render import RenderResult
from dsh_sidecar.sources.agent_instructions.state import Change
from dsh_sidecar.sources.observed import ObservedCache, OneLook

from .locations import document_directory
from .snapshot import Snapshot

REPORTS_KEPT = 256


@attrs.frozen
class ScopesReport:
    project_root: str
    directory: str
    load: BaselineLoad
    active: dict[str, list[Change]]  # session id -> active changes for the chain's scopes


class ScopeChains:
    """Builds scopes reports, keeping each document's chain while the files it saw are unchanged.

    One instance serves one settings generation; the service replaces it when the settings
    change, which drops every kept chain.
    """

    def __init__(self, settings: InstructionSettings, fs: LocalFileSystem) -> None:
        self._settings = settings
        self._fs = fs
        self.chains: ObservedCache[BaselineLoad] = ObservedCache(REPORTS_KEPT)

    def chain(self, directory: str, dsh_home: str, look: OneLook) -> BaselineLoad:
        """The chain governing documents in ``directory`` (blocking)."""

        def build(fs: LocalFileSystem) -> BaselineLoad:
            load = load_document_chain(directory, self._settings, fs, dsh_home=dsh_home)
            return _entries_only(load)

        return self.chains.get((directory, dsh_home), look, build)

    def report(self, snapshot: Snapshot, path: str, look: OneLook | None = None) -> ScopesReport:
        """The report for the document at ``path``, a file or a directory (blocking). ``look``
        is the request's view of the filesystem when it asks more than this (hover)."""
        look = look if look is not None else OneLook(self._fs)
        load = self.chain(document_directory(path, look), snapshot.dsh_home, look)
        scopes = {e.candidate.scope for e in load.entries}
        active = {
            view.session_id: [c for s, c in view.effective.items() if s in scopes and c.active]
            for view in snapshot.sessions
        }
        return ScopesReport(load.project_root, load.cwd, load, active)


def _entries_only(load: BaselineLoad) -> BaselineLoad:
    """What a report uses of a chain: its entries, without the instruction text it read."""
    result = load.result
    return attrs.evolve(
        load, observed=(), kept=(), retained=(),
        result=RenderResult("", result.omitted, result.truncated, frozenset()),
    )  # fmt: skip

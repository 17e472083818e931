"""The read-only requests, between ``lsp/`` and ``sessions/`` / ``explain/``.

Every query does two things: on the event loop it checks its params and takes an ``Asked`` (the
service's frozen ``Snapshot`` and the ``Caches`` of those settings), then it does all its work in
one worker call over that, and nothing else. A worker never reads what the loop changes: the
snapshot is frozen, and a settings change gives the next query a new ``Caches`` instead of
changing the one a running worker holds.
"""

from __future__ import annotations

from dsh_sidecar.explain import Explanation
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.protocol import mapping as wire
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.sessions.locations import parse_cwd, parse_file_uri
from dsh_sidecar.sessions.service import SessionService
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad
from dsh_sidecar.sources.agent_instructions.usage import OffConvention
from dsh_sidecar.sources.session_reference import resolver

from . import candidates as candidates_
from . import preview as preview_
from .asked import Asked, Caches
from .explain import explanation
from .hover_text import hover_text
from .scopes import ScopesReport


class Queries:
    """The queries of one service; holds nothing but the current ``Caches`` (loop only)."""

    def __init__(self, service: SessionService) -> None:
        self.service = service
        self._caches: Caches | None = None

    def ask(self) -> Asked:
        """What a query may read, taken now, on the loop."""
        snapshot = self.service.snapshot()
        caches = self._caches
        if caches is None or caches.settings is not snapshot.settings:
            caches = self._caches = Caches.for_snapshot(snapshot)  # replaced whole, never edited
        return Asked(snapshot, caches)

    async def scopes(self, uri: str) -> ScopesReport:
        """The chain that governs a document and who has it active (diagnostics, tests)."""
        path, asked = parse_file_uri(uri), self.ask()
        return await self.service.workers.fs(
            lambda: asked.caches.chains.report(asked.snapshot, path, asked.look())
        )

    async def scopes_result(self, uri: str, compact_paths: bool = False) -> wt.ScopesResult:
        """``dsh/scopes``, kept whole like a hover's text: a warm request is one pass of stats."""
        path, asked = parse_file_uri(uri), self.ask()
        key = ("scopes", uri, asked.snapshot.generation, compact_paths)

        def work() -> wt.ScopesResult:
            def compute(look: LocalFileSystem) -> wt.ScopesResult:
                r = asked.caches.chains.report(asked.snapshot, path, look)
                return wire.scopes_result(
                    r.project_root,
                    r.directory,
                    r.load,
                    r.active,
                    r.not_read,
                    compact_paths=compact_paths,
                )

            return asked.kept(key, compute)

        return await self.service.workers.fs(work)

    async def hover(self, uri: str, instruction_file: bool, max_bytes: float) -> str:
        """The hover text of a document: its chain and state, then what other agents load."""
        path, asked = parse_file_uri(uri), self.ask()
        # The text depends on the files both halves looked at and on the live sessions (the
        # snapshot's generation): kept with what rebuilding it re-checked of the files.
        key = ("hover", path, instruction_file, max_bytes, asked.snapshot.generation)

        def work() -> str:
            def compute(look: LocalFileSystem) -> str:
                report = asked.caches.chains.report(asked.snapshot, path, look)
                explained = explanation(asked, path, None, look)
                return hover_text(report, explained, path, instruction_file, max_bytes)

            return asked.kept(key, compute)

        return await self.service.workers.fs(work)

    async def explain(self, uri: str, cwd: str | None = None) -> Explanation:
        path = parse_file_uri(uri)
        directory = parse_cwd(cwd) if cwd is not None else None
        asked = self.ask()
        return await self.service.workers.fs(
            lambda: explanation(asked, path, directory, asked.look())
        )

    async def preview(self, cwd: str) -> tuple[BaselineLoad, tuple[OffConvention, ...]]:
        directory, asked = parse_cwd(cwd), self.ask()
        return await self.service.workers.fs(lambda: preview_.preview(asked, directory))

    async def preview_result(self, cwd: str, compact_paths: bool = False) -> wt.PreviewResult:
        """``dsh/context/preview``, kept whole like ``dsh/scopes``: a warm request is one pass
        of stats, and the same result object is sent again (its JSON made once)."""
        directory, asked = parse_cwd(cwd), self.ask()
        return await self.service.workers.fs(
            lambda: preview_.kept_result(asked, directory, compact_paths)
        )

    async def candidates(
        self, session_id: str, query: str | None = None
    ) -> list[resolver.Candidate]:
        service = self.service
        live = await service.require_live(session_id)
        target, settings = live.header, service.settings.session_reference
        return await service.workers.store(
            lambda: candidates_.candidates(service.store, target, settings, query or "")
        )

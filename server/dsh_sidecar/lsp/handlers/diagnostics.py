"""Diagnostics of open instruction documents: published on open, again after any change that
can alter them (a save of an instruction file, files created, renamed or deleted, settings),
cleared on close. What they say is ``lsp/diagnostics.py``'s."""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.uris import from_fs_path

from dsh_sidecar.errors import DshError
from dsh_sidecar.sources.agent_instructions.confinement import confinement_for

from ..diagnostics import diagnostic_text, instruction_diagnostics
from .base import Background, Server
from .files import is_instruction_file, local_path

log = logging.getLogger(__name__)


class Diagnostics:
    def __init__(self, server: Server) -> None:
        self.server = server
        self._open: set[str] = set()  # the open instruction documents, by uri
        self._background = Background()

    def opened(self, uri: str) -> None:
        self._open.add(uri)

    def closed(self, uri: str) -> None:
        if uri in self._open:
            self._open.discard(uri)
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def refresh_all(self) -> None:
        for uri in list(self._open):
            self._background.spawn(self.publish(uri))

    async def publish(self, uri: str) -> None:
        server = self.server
        path = local_path(uri)
        if path is None or not server.started or not is_instruction_file(server, path):
            return
        try:
            service = server.service
            report = await server.queries.scopes(from_fs_path(path) or uri)
            settings = server.settings.instructions
            limit = settings.max_source_bytes
            home, fs = service.os_home, service.fs

            def read() -> str | None:
                # A rule file is read under the same trust boundary as every project file.
                confinement = confinement_for(report.project_root, settings, fs, home)
                return diagnostic_text(report, path, fs, limit, confinement.allows_path)

            text = await service.workers.fs(read)
        except DshError as exc:
            log.info("no diagnostics for %s: %s", uri, exc.message)
            return
        encoding = server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        diagnostics = instruction_diagnostics(report, path, text, encoding)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

"""The editor as a touch seam (docs/protocol.md#touches), plus hover and diagnostics on documents.

Opening, editing, saving, creating, renaming and deleting documents are touches for every live
session whose project contains them. Touches read disk, never unsaved buffer text; a burst of
``didChange`` on one document coalesces into one touch.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from dsh_sidecar.config import OVERRIDE_NAME
from dsh_sidecar.errors import DshError
from dsh_sidecar.sources.agent_instructions.confinement import confinement_for
from dsh_sidecar.sources.agent_instructions.rules import RULE_SETS
from dsh_sidecar.sources.agent_instructions.usage import other_agents_file

from .diagnostics import diagnostic_text, instruction_diagnostics
from .links import document_links, to_document_link, to_location, tooltip_support

if TYPE_CHECKING:
    from .server import DshServer

log = logging.getLogger(__name__)
CHANGE_COALESCE_SECONDS = 0.3
_ALL_FILES = types.FileOperationRegistrationOptions(
    filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"))]
)


def local_path(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


class DocumentTracker:
    def __init__(self, server: DshServer) -> None:
        self.server = server
        self._pending_changes: dict[str, asyncio.TimerHandle] = {}
        self._open_instruction_docs: set[str] = set()
        self._background: set[asyncio.Future[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` in the background, holding a reference until it finishes."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- classification -----------------------------------------------------------------------

    def is_instruction_file(self, path: str) -> bool:
        """A file the engine may load, or one of another agent's conventions (an override, a
        rule file) that hover and diagnostics explain even while its setting is off."""
        settings = self.server.settings.instructions
        name = os.path.basename(path)
        if name in settings.all_candidates or name == OVERRIDE_NAME:
            return True
        if looks_like_a_rule_file(path):
            return True
        service = self.server.service
        absolute = os.path.abspath(path)
        if absolute == os.path.join(settings.home(service.env), "AGENTS.md"):
            return True
        return any(absolute == p for _, p in settings.user_global_paths(service.os_home))

    # --- touches ------------------------------------------------------------------------------

    def touch(self, paths: list[str]) -> None:
        if paths and self.server._service is not None:
            # Registered now (before any await), so a request that follows sees this touch.
            self.spawn(self._touch(self.server.service.editor_touch(paths)))

    async def _touch(self, touched: Awaitable[None]) -> None:
        try:
            await touched
        except Exception as exc:  # a touch must never take the server down
            log.exception("editor touch failed")
            self.server.log_warning(f"workspace instruction refresh failed: {exc}")

    def coalesce_change(self, uri: str, path: str) -> None:
        handle = self._pending_changes.pop(uri, None)
        if handle is not None:
            handle.cancel()

        def fire() -> None:
            self._pending_changes.pop(uri, None)
            self.touch([path])

        self._pending_changes[uri] = asyncio.get_running_loop().call_later(
            CHANGE_COALESCE_SECONDS, fire
        )

    # --- diagnostics --------------------------------------------------------------------------

    async def publish(self, uri: str) -> None:
        path = local_path(uri)
        if path is None or self.server._service is None or not self.is_instruction_file(path):
            return
        try:
            service = self.server.service
            report = await self.server.queries.scopes(from_fs_path(path) or uri)
            settings = self.server.settings.instructions
            limit = settings.max_source_bytes
            home = service.os_home

            def read() -> str | None:
                # A rule file is read under the same trust boundary as every project file.
                confinement = confinement_for(report.project_root, settings, service.fs, home)
                return diagnostic_text(report, path, service.fs, limit, confinement.allows_path)

            text = await service.workers.fs(read)
        except DshError as exc:
            log.info("no diagnostics for %s: %s", uri, exc.message)
            return
        encoding = self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        diagnostics = instruction_diagnostics(report, path, text, encoding)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    def refresh_all(self) -> None:
        for uri in list(self._open_instruction_docs):
            self.spawn(self.publish(uri))

    # --- registration -------------------------------------------------------------------------

    def register(self) -> None:
        server = self.server
        tracker = self

        @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
        async def did_open(ls: DshServer, params: types.DidOpenTextDocumentParams) -> None:
            uri = params.text_document.uri
            path = local_path(uri)
            if path is None:
                return
            tracker.touch([path])
            if tracker.is_instruction_file(path):
                tracker._open_instruction_docs.add(uri)
                await tracker.publish(uri)

        @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
        def did_change(ls: DshServer, params: types.DidChangeTextDocumentParams) -> None:
            uri = params.text_document.uri
            path = local_path(uri)
            if path is not None:
                tracker.coalesce_change(uri, path)

        @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
        async def did_save(ls: DshServer, params: types.DidSaveTextDocumentParams) -> None:
            path = local_path(params.text_document.uri)
            if path is None:
                return
            tracker.touch([path])
            if tracker.is_instruction_file(path):
                # A save can change a sibling's state too (duplicates, budget), so refresh all.
                tracker.refresh_all()

        @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
        def did_close(ls: DshServer, params: types.DidCloseTextDocumentParams) -> None:
            uri = params.text_document.uri
            if uri in tracker._open_instruction_docs:
                tracker._open_instruction_docs.discard(uri)
                ls.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
                )

        @server.feature(types.WORKSPACE_DID_CREATE_FILES, _ALL_FILES)
        def did_create(ls: DshServer, params: types.CreateFilesParams) -> None:
            tracker.touch([p for f in params.files if (p := local_path(f.uri)) is not None])
            tracker.refresh_all()

        @server.feature(types.WORKSPACE_DID_RENAME_FILES, _ALL_FILES)
        def did_rename(ls: DshServer, params: types.RenameFilesParams) -> None:
            tracker.touch([p for f in params.files if (p := local_path(f.new_uri)) is not None])
            tracker.refresh_all()

        @server.feature(types.WORKSPACE_DID_DELETE_FILES, _ALL_FILES)
        def did_delete(ls: DshServer, params: types.DeleteFilesParams) -> None:
            tracker.touch([p for f in params.files if (p := local_path(f.uri)) is not None])
            tracker.refresh_all()

        @server.feature(types.TEXT_DOCUMENT_HOVER)
        async def hover(ls: DshServer, params: types.HoverParams) -> types.Hover | None:
            path = local_path(params.text_document.uri)
            if path is None:
                return None
            instruction_file = tracker.is_instruction_file(path) or other_agents_file(path)
            if not instruction_file and not _hover_other_file(ls, params.position):
                return None
            max_bytes = ls.settings.instructions.max_bytes
            try:
                text = await ls.queries.hover(params.text_document.uri, instruction_file, max_bytes)
            except DshError:
                return None
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
            )

        @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions())
        async def document_link(
            ls: DshServer, params: types.DocumentLinkParams
        ) -> list[types.DocumentLink] | None:
            uri = params.text_document.uri
            path = local_path(uri)
            if path is None or ls._service is None:
                return None
            tooltip = tooltip_support(ls.client_capabilities)
            found = await document_links(tracker, uri, path)
            return [to_document_link(link, tooltip) for link in found]

        @server.feature(types.TEXT_DOCUMENT_DEFINITION)
        async def definition(
            ls: DshServer, params: types.DefinitionParams
        ) -> types.Location | None:
            uri = params.text_document.uri
            path = local_path(uri)
            if path is None or ls._service is None:
                return None
            found = await document_links(tracker, uri, path, params.position)
            return to_location(found[0]) if found else None


def looks_like_a_rule_file(path: str) -> bool:
    """Whether ``path`` sits where a rule set keeps its files (the project root is not known on
    the loop, so the folder names decide; the engine checks against the root)."""
    posix = path.replace(os.sep, "/")
    for rule_set in RULE_SETS.values():
        if any(posix.endswith("/" + name) for name in rule_set.repository_files):
            return True
        if f"/{rule_set.folder}/" in posix and posix.endswith(rule_set.suffix):
            return True
    return False


def _hover_other_file(ls: DshServer, position: types.Position) -> bool:
    """Whether hover answers on a file that is not an instruction file (setting hover.otherFiles)."""
    mode = ls.settings.hover.other_files
    return mode == "always" or (mode == "firstLine" and position.line == 0)

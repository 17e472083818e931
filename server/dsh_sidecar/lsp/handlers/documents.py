"""The editor as a touch seam (docs/protocol.md#touches).

Opening, editing, saving, creating, renaming and deleting documents are touches for every live
session whose project contains them (``sessions/touches/router.py`` decides which). Touches read
disk, never unsaved buffer text; a burst of ``didChange`` on one document coalesces into one
touch. Instruction documents also get their diagnostics (``diagnostics.py``) refreshed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from lsprotocol import types

from .base import Background, Server
from .diagnostics import Diagnostics
from .files import is_instruction_file, local_path

log = logging.getLogger(__name__)
CHANGE_COALESCE_SECONDS = 0.3
_ALL_FILES = types.FileOperationRegistrationOptions(
    filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"))]
)


class Documents:
    def __init__(self, server: Server) -> None:
        self.server = server
        self._pending_changes: dict[str, asyncio.TimerHandle] = {}
        self._background = Background()

    def touch(self, paths: list[str]) -> None:
        if paths and self.server.started:
            # Registered now (before any await), so a request that follows sees this touch.
            touched = self.server.service.editor_touch(paths)
            if touched.done() and not touched.cancelled() and touched.exception() is None:
                return  # every session it reaches has it queued already: nothing to wait for
            self._background.spawn(self._touch(touched))

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


def register(server: Server, diagnostics: Diagnostics) -> None:
    documents = Documents(server)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = local_path(uri)
        if path is None:
            return
        documents.touch([path])
        if ls.started and is_instruction_file(ls, path):
            diagnostics.opened(uri)
            await diagnostics.publish(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = local_path(uri)
        if path is not None:
            documents.coalesce_change(uri, path)

    # Not a coroutine: it never waits, and pygls runs a plain function at once instead of
    # making it a task the loop starts on its next turn.
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
        path = local_path(params.text_document.uri)
        if path is None:
            return
        documents.touch([path])
        if ls.started and is_instruction_file(ls, path):
            # A save can change a sibling's state too (duplicates, budget), so refresh all.
            diagnostics.refresh_all()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
        diagnostics.closed(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CREATE_FILES, _ALL_FILES)
    def did_create(ls: Server, params: types.CreateFilesParams) -> None:
        documents.touch([p for f in params.files if (p := local_path(f.uri)) is not None])
        diagnostics.refresh_all()

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, _ALL_FILES)
    def did_rename(ls: Server, params: types.RenameFilesParams) -> None:
        documents.touch([p for f in params.files if (p := local_path(f.new_uri)) is not None])
        diagnostics.refresh_all()

    @server.feature(types.WORKSPACE_DID_DELETE_FILES, _ALL_FILES)
    def did_delete(ls: Server, params: types.DeleteFilesParams) -> None:
        documents.touch([p for f in params.files if (p := local_path(f.uri)) is not None])
        diagnostics.refresh_all()

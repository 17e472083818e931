"""``textDocument/documentLink`` and ``textDocument/definition``: the ``@path`` imports of an
instruction document, found in a worker (``lsp/links.py``), as links and locations."""

from __future__ import annotations

from lsprotocol import types

from ..links import (
    Link,
    links_in,
    offset_of,
    read_document,
    to_document_link,
    to_location,
    tooltip_support,
)
from .base import Server
from .files import is_instruction_file, local_path


def register(server: Server) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions())
    async def document_link(
        ls: Server, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink] | None:
        uri = params.text_document.uri
        path = local_path(uri)
        if path is None or not ls.started:
            return None
        tooltip = tooltip_support(ls.client_capabilities)
        found = await document_links(ls, uri, path)
        return [to_document_link(link, tooltip) for link in found]

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: Server, params: types.DefinitionParams) -> types.Location | None:
        uri = params.text_document.uri
        path = local_path(uri)
        if path is None or not ls.started:
            return None
        found = await document_links(ls, uri, path, params.position)
        return to_location(found[0]) if found else None


async def document_links(
    server: Server, uri: str, path: str, position: types.Position | None = None
) -> list[Link]:
    """The links of the document; with ``position``, only the one under it (if any)."""
    if not server.settings.instructions.imports or not is_instruction_file(server, path):
        return []
    service = server.service
    buffer = server.workspace.text_documents.get(uri)
    text = buffer.source if buffer is not None else None
    encoding = server.workspace.position_encoding or types.PositionEncodingKind.Utf16
    home, fs = service.os_home, service.fs

    def work() -> list[Link]:
        source = text if text is not None else read_document(fs, path)
        if source is None:
            return []
        links = links_in(source, path, home, fs, encoding)
        if position is None:
            return links
        offset = offset_of(source, position, encoding)
        return [link for link in links if link.span.start <= offset <= link.span.end][:1]

    return await service.workers.fs(work)

"""``textDocument/hover``: a call to ``queries/`` (one worker call, kept while what it saw
holds), its text as Markdown."""

from __future__ import annotations

from lsprotocol import types

from dsh_sidecar.errors import DshError
from dsh_sidecar.sources.agent_instructions.usage import other_agents_file

from .base import Server
from .files import is_instruction_file, local_path


def register(server: Server) -> None:
    # The last answer, for its text: a kept hover text comes back as the same string, and
    # answering it with the same ``Hover`` lets the protocol send the JSON it made for it.
    last: list[tuple[str, types.Hover]] = []

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
        path = local_path(params.text_document.uri)
        if path is None or not ls.started:
            return None
        instruction_file = is_instruction_file(ls, path) or other_agents_file(path)
        if not instruction_file and not _hover_other_file(ls, params.position):
            return None
        max_bytes = ls.settings.instructions.max_bytes
        try:
            text = await ls.queries.hover(params.text_document.uri, instruction_file, max_bytes)
        except DshError:
            return None
        if last and last[0][0] is text:
            return last[0][1]
        answer = types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
        )
        last[:] = [(text, answer)]
        return answer


def _hover_other_file(ls: Server, position: types.Position) -> bool:
    """Whether hover answers on a file that is not an instruction file (setting hover.otherFiles)."""
    mode = ls.settings.hover.other_files
    return mode == "always" or (mode == "firstLine" and position.line == 0)

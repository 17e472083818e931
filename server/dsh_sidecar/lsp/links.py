"""``@path`` imports as editor links (instructions.imports): ``textDocument/documentLink`` and
``textDocument/definition`` in instruction files: where the links are (``handlers/links.py``
asks for them and answers).

The text is the editor's buffer when the document is open (what the user sees, unsaved edits
included), else the file on disk read in a worker. Each ``@path`` outside code whose target is an
existing file becomes a link to it; go-to-definition on one opens that file. Positions are in the
negotiated position encoding. Nothing here runs a filesystem call on the event loop.
"""

from __future__ import annotations

import os

import attrs
from lsprotocol import types
from pygls.uris import from_fs_path

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.import_syntax import ImportSpan, import_spans

from .diagnostics import _Locator

MAX_LINK_TEXT_BYTES = 1024 * 1024


@attrs.frozen
class Link:
    span: ImportSpan
    start: types.Position
    end: types.Position
    target: str


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    """The offset in ``text`` of an LSP position in the given encoding (clamped to the line)."""
    starts = _Locator(text, encoding).starts
    if position.line >= len(starts):
        return len(text)
    start = starts[position.line]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    line = text[start:end]
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return start + index
        if encoding == types.PositionEncodingKind.Utf8:
            units += len(char.encode("utf-8", "surrogatepass"))
        elif encoding == types.PositionEncodingKind.Utf32:
            units += 1
        else:
            units += 2 if ord(char) > 0xFFFF else 1
    return end


def links_in(text: str, path: str, home: str, fs: LocalFileSystem, encoding: str) -> list[Link]:
    """The imports of ``text`` (the file ``path``) whose target exists (blocking: a worker)."""
    locate = _Locator(text, encoding)
    out = []
    present: dict[str, bool] = {}  # each target probed once, however often it is named
    for span in import_spans(text, os.path.dirname(path), home):
        if span.path not in present:
            present[span.path] = fs.probe(span.path).present
        if present[span.path]:
            out.append(Link(span, locate(span.start), locate(span.end), span.path))
    return out


def read_document(fs: LocalFileSystem, path: str) -> str | None:
    """The document's text on disk, bounded, or None (blocking: a worker)."""
    probe = fs.probe(path)
    if not probe.present:
        return None
    return fs.read_text(probe, MAX_LINK_TEXT_BYTES).text


def to_document_link(link: Link, tooltip: bool) -> types.DocumentLink:
    """The link; its tooltip only for a client that said it shows them."""
    return types.DocumentLink(
        range=types.Range(start=link.start, end=link.end),
        target=from_fs_path(link.target),
        tooltip=f"@{link.span.raw}: imported (instructions.imports)" if tooltip else None,
    )


def tooltip_support(capabilities: types.ClientCapabilities | None) -> bool:
    text = capabilities.text_document if capabilities is not None else None
    link = text.document_link if text is not None else None
    return bool(link is not None and link.tooltip_support)


def to_location(link: Link) -> types.Location:
    top = types.Position(line=0, character=0)
    return types.Location(
        uri=from_fs_path(link.target) or link.target, range=types.Range(start=top, end=top)
    )

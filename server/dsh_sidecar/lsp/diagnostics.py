"""Diagnostics on instruction files (protocol.md, Diagnostics): what will go wrong when an agent
loads it."""

from __future__ import annotations

import bisect
import re

from lsprotocol import types

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sessions.service import ScopesReport
from dsh_sidecar.sources.agent_instructions.baseline import ChainEntry
from dsh_sidecar.sources.agent_instructions.escaping import frame_tags, one_line

SOURCE = "dsh-sidecar"
_SEVERITY = {
    "oversized": types.DiagnosticSeverity.Warning,
    "unreadable": types.DiagnosticSeverity.Error,
    "duplicate": types.DiagnosticSeverity.Information,
    "omitted": types.DiagnosticSeverity.Warning,
    "truncated": types.DiagnosticSeverity.Warning,
    "ignored": types.DiagnosticSeverity.Information,
    "outside-project": types.DiagnosticSeverity.Warning,
}
_MESSAGE = {
    "oversized": "Not loaded: larger than maxSourceBytes ({reason})",
    "unreadable": "Not loaded: {reason}",
    "duplicate": "Collapsed: {reason}; agents see it once",
    "omitted": "Omitted from the baseline by the byte budget",
    "truncated": "Only part of this file fits the byte budget: {reason}",
    "ignored": "Never discovered by a touch: {reason}",
    "outside-project": (
        "Not loaded: it {reason}. To load it, add that directory (or a parent) to "
        "instructions.allowedSymlinkTargets"
    ),
}
# States whose file is read, so its text is what an agent may be given: only those are scanned.
_READ_STATES = frozenset({"included", "truncated", "omitted", "duplicate", "ignored"})
_TOP = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
)
_LINE_END = re.compile(r"\r\n|\r|\n")  # what LSP counts as a line break


def _diag(
    range_: types.Range, severity: types.DiagnosticSeverity, code: str, message: str
) -> types.Diagnostic:
    return types.Diagnostic(
        range=range_, severity=severity, code=code, source=SOURCE, message=message
    )


def _entry(report: ScopesReport, path: str) -> ChainEntry | None:
    return next((e for e in report.load.entries if e.candidate.abs_path == path), None)


def diagnostic_text(
    report: ScopesReport, path: str, fs: LocalFileSystem, max_source_bytes: int
) -> str | None:
    """The text of ``path`` to scan, read as the engine reads it, or None when the engine does
    not read it (outside the project, oversized, unreadable, not in the chain): the sidecar
    then reads nothing, so a link to a secret or a FIFO is never opened for a diagnostic."""
    entry = _entry(report, path)
    if entry is None or entry.state not in _READ_STATES:
        return None
    probe = fs.probe(path)
    if not probe.present or (entry.target is not None and probe.target != entry.target):
        return None  # changed since the report: its next refresh will say how
    return fs.read_text(probe, max_source_bytes).text


def instruction_diagnostics(
    report: ScopesReport, path: str, text: str | None, encoding: str = "utf-16"
) -> list[types.Diagnostic]:
    """``encoding`` is the negotiated position encoding (``utf-16`` unless the client chose)."""
    entry = _entry(report, path)
    out: list[types.Diagnostic] = []
    if entry is not None and entry.state in _SEVERITY:
        message = _MESSAGE[entry.state].format(reason=entry.reason or entry.state)
        out.append(_diag(_TOP, _SEVERITY[entry.state], entry.state, message))
    if entry is not None and text is not None and entry.state in _READ_STATES:
        out.extend(_frame_tags(text, encoding))
    return out


def _frame_tags(text: str, encoding: str) -> list[types.Diagnostic]:
    """One diagnostic per frame tag, spanning it up to its ``>`` when it has one."""
    out = []
    locate = _Locator(text, encoding)
    for tag in frame_tags(text):
        end = tag.end()
        close = text.find(">", end)
        if close != -1 and "<" not in text[end:close]:
            end = close + 1
        shown = one_line(text[tag.start()] + "\\" + text[tag.start() + 1 : end])
        if tag["slash"] is not None:
            code, effect = "closing-tag-escaped", "close the instruction frame"
        else:
            code, effect = "opening-tag-escaped", "open a frame inside the instructions"
        out.append(_diag(
            types.Range(start=locate(tag.start()), end=locate(end)),
            types.DiagnosticSeverity.Information, code,
            f"Escaped as {shown} when loaded, so it cannot {effect}",
        ))  # fmt: skip
    return out


class _Locator:
    """Offsets in ``text`` to LSP positions in the negotiated encoding."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(text)]

    def __call__(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        prefix = self.text[self.starts[line] : offset]
        if self.encoding == types.PositionEncodingKind.Utf8:
            column = len(prefix.encode("utf-8", "surrogatepass"))
        elif self.encoding == types.PositionEncodingKind.Utf32:
            column = len(prefix)
        else:
            column = len(prefix.encode("utf-16-le", "surrogatepass")) // 2
        return types.Position(line=line, character=column)

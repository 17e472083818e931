"""Diagnostics on instruction files (protocol.md, Diagnostics): what will go wrong when an agent
loads it."""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable

from lsprotocol import types

from dsh_sidecar.fs import LocalFileSystem, ReadFailure
from dsh_sidecar.queries.hover_text import rule_limit_message
from dsh_sidecar.queries.scopes import ScopesReport
from dsh_sidecar.sources.agent_instructions.baseline import ChainEntry
from dsh_sidecar.sources.agent_instructions.escaping import frame_tags, one_line
from dsh_sidecar.sources.agent_instructions.import_syntax import import_spans
from dsh_sidecar.sources.agent_instructions.imports import (
    CYCLE,
    IN_CHAIN,
    MISSING,
    OUTSIDE,
    OVER_BUDGET,
    TOO_DEEP,
    UNREADABLE,
    ImportRecord,
)
from dsh_sidecar.sources.agent_instructions.paths import is_within
from dsh_sidecar.sources.agent_instructions.rules import Rule
from dsh_sidecar.sources.agent_instructions.usage import IMPORTS

SOURCE = "dsh-sidecar"
_SEVERITY = {
    "oversized": types.DiagnosticSeverity.Warning,
    "unreadable": types.DiagnosticSeverity.Error,
    "duplicate": types.DiagnosticSeverity.Information,
    "omitted": types.DiagnosticSeverity.Warning,
    "truncated": types.DiagnosticSeverity.Warning,
    "ignored": types.DiagnosticSeverity.Information,
    "outside-project": types.DiagnosticSeverity.Warning,
    "overridden": types.DiagnosticSeverity.Information,
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
    "overridden": "Not loaded: {reason}",
}
# Import states (instructions.imports) that a diagnostic reports: its code and severity.
_IMPORT_DIAGNOSTICS = {
    MISSING: ("import-missing", types.DiagnosticSeverity.Warning),
    CYCLE: ("import-cycle", types.DiagnosticSeverity.Warning),
    TOO_DEEP: ("import-too-deep", types.DiagnosticSeverity.Warning),
    OUTSIDE: ("import-outside", types.DiagnosticSeverity.Warning),
    UNREADABLE: ("import-unreadable", types.DiagnosticSeverity.Warning),
    OVER_BUDGET: ("import-over-budget", types.DiagnosticSeverity.Warning),
    IN_CHAIN: ("import-in-chain", types.DiagnosticSeverity.Information),
}
CONVENTION_OFF = "convention-off"
RULE_FRONTMATTER = "rule-frontmatter"
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
    report: ScopesReport,
    path: str,
    fs: LocalFileSystem,
    max_source_bytes: int,
    allowed: Callable[[str], bool] | None = None,
) -> str | None:
    """The text of ``path`` to scan, read as the engine reads it, or None when the engine does
    not read it (outside the project, oversized, unreadable, not in the chain): the sidecar
    then reads nothing, so a link to a secret or a FIFO is never opened for a diagnostic."""
    entry = _entry(report, path)
    rule = report.facts.rule
    if entry is None or entry.state not in _READ_STATES:
        if rule is None or rule.abs_path != path or rule.applies is None:
            return None
        # A rule file of an enabled rule set that does not apply to itself: read as the engine
        # read it (inside the project).
        probe = fs.probe(path)
        if not probe.present:
            return None
        inside = allowed if allowed is not None else _inside(report)
        return fs.read_text(probe, max_source_bytes, allowed=inside).text
    probe = fs.probe(path)
    if not probe.present or (entry.target is not None and probe.target != entry.target):
        return None  # changed since the report: its next refresh will say how
    return fs.read_text(probe, max_source_bytes).text


def _inside(report: ScopesReport) -> Callable[[str], bool]:
    """The project root alone (the caller passes the full confinement when it has it)."""
    root = report.project_root
    return lambda real: is_within(real, root)


def instruction_diagnostics(
    report: ScopesReport, path: str, text: str | None, encoding: str = "utf-16"
) -> list[types.Diagnostic]:
    """``encoding`` is the negotiated position encoding (``utf-16`` unless the client chose)."""
    entry = _entry(report, path)
    out: list[types.Diagnostic] = []
    if entry is not None and entry.state in _SEVERITY:
        message = _MESSAGE[entry.state].format(reason=entry.reason or entry.state)
        out.append(_diag(_TOP, _SEVERITY[entry.state], entry.state, message))
    rule = report.facts.rule
    if rule is not None and rule.abs_path == path:
        out.extend(_rule_diagnostics(rule, entry))
    if report.facts.beyond_rule_limit:
        out.append(
            _diag(_TOP, types.DiagnosticSeverity.Warning, "rule-limit", rule_limit_message())
        )
    readable = entry is not None and entry.state in _READ_STATES
    if text is not None and (readable or (rule is not None and rule.abs_path == path)):
        out.extend(_frame_tags(text, encoding))
    locate = _Locator(text, encoding) if text is not None else None
    if entry is not None and entry.imports and locate is not None:
        out.extend(_import_diagnostics(path, entry.imports, locate))
    out.extend(_convention_diagnostics(report, path, locate))
    return out


def _rule_diagnostics(rule: Rule, entry: ChainEntry | None) -> list[types.Diagnostic]:
    """A rule file's own troubles: it cannot be read, or its frontmatter is wrong."""
    out = []
    if rule.applies is None and entry is None:
        failure = rule.failure.value if rule.failure is not None else "error"
        if rule.failure is ReadFailure.NOT_ALLOWED:
            message = _MESSAGE["outside-project"].format(
                reason=f"links outside the project to {rule.detail}"
            )
            out.append(_diag(_TOP, _SEVERITY["outside-project"], "outside-project", message))
        else:
            state = "oversized" if failure == "oversized" else "unreadable"
            reason = f"{failure}: {rule.detail}" if rule.detail else failure
            out.append(_diag(_TOP, _SEVERITY[state], state, _MESSAGE[state].format(reason=reason)))
    if rule.applies is not None:
        for problem in rule.applies.problems:
            line = types.Range(
                start=types.Position(line=problem.line, character=0),
                end=types.Position(line=problem.line + 1, character=0),
            )
            out.append(
                _diag(line, types.DiagnosticSeverity.Warning, RULE_FRONTMATTER, problem.message)
            )
    return out


def _import_diagnostics(
    path: str, records: tuple[ImportRecord, ...], locate: _Locator
) -> list[types.Diagnostic]:
    """One diagnostic per import that added nothing for a reason worth knowing, at its ``@path``
    in this file (or, when a file this one imports holds it, at the top)."""
    # Only where each ``@path`` is and how it is written matter here, not what it names.
    spans = import_spans(locate.text, os.path.dirname(path), os.sep)
    out = []
    used = 0
    for record in records:
        diagnostic = _IMPORT_DIAGNOSTICS.get(record.state)
        where = _TOP
        if record.importer == path:
            match = next((i for i in range(used, len(spans)) if spans[i].raw == record.raw), None)
            if match is not None:
                used = match + 1
                span = spans[match]
                where = types.Range(start=locate(span.start), end=locate(span.end))
        if diagnostic is None:
            continue
        prefix = "" if record.importer == path else f"{_short(record.importer)}: "
        message = f"{prefix}@{record.raw} adds nothing: {record.reason or record.state}"
        out.append(_diag(where, diagnostic[1], diagnostic[0], message))
    return out


def _convention_diagnostics(
    report: ScopesReport, path: str, locate: _Locator | None
) -> list[types.Diagnostic]:
    """Conventions this file uses while they are off: at each ``@path`` for imports, at the top
    for a file the sidecar does not read at all."""
    out = []
    for convention in report.facts.conventions:
        message = (
            f"Not read by this sidecar: {convention.agent}'s convention {convention.effect}; "
            f"{convention.enable} to read it"
        )
        if convention.setting == IMPORTS and locate is not None:
            unfollowed = set(report.facts.unfollowed)
            for span in import_spans(locate.text, os.path.dirname(path), os.sep):
                if span.raw not in unfollowed:
                    continue
                where = types.Range(start=locate(span.start), end=locate(span.end))
                out.append(_diag(
                    where, types.DiagnosticSeverity.Information, CONVENTION_OFF,
                    f"@{span.raw} is not followed: {convention.enable} to import it "
                    f"({convention.agent}'s convention)",
                ))  # fmt: skip
            continue
        out.append(_diag(_TOP, types.DiagnosticSeverity.Information, CONVENTION_OFF, message))
    return out


def _short(path: str) -> str:
    return os.path.basename(path)


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

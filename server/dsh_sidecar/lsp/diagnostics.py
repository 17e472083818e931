"""Diagnostics on instruction files (protocol.md §8): what will go wrong when an agent loads it."""

from __future__ import annotations

import os

from lsprotocol import types

from dsh_sidecar.sessions.service import ScopesReport
from dsh_sidecar.sources.agent_instructions.paths import is_within
from dsh_sidecar.sources.agent_instructions.render import CLOSE_TAG

SOURCE = "dsh-sidecar"
_SEVERITY = {
    "oversized": types.DiagnosticSeverity.Warning,
    "unreadable": types.DiagnosticSeverity.Error,
    "duplicate": types.DiagnosticSeverity.Information,
    "omitted": types.DiagnosticSeverity.Warning,
    "truncated": types.DiagnosticSeverity.Warning,
    "ignored": types.DiagnosticSeverity.Information,
}
_MESSAGE = {
    "oversized": "Not loaded: larger than maxSourceBytes ({reason})",
    "unreadable": "Not loaded: {reason}",
    "duplicate": "Collapsed: {reason}; agents see it once",
    "omitted": "Omitted from the baseline by the byte budget",
    "truncated": "Only part of this file fits the byte budget: {reason}",
    "ignored": "Never discovered by a touch: {reason}",
}
_TOP = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
)


def _diag(
    range_: types.Range, severity: types.DiagnosticSeverity, code: str, message: str
) -> types.Diagnostic:
    return types.Diagnostic(
        range=range_, severity=severity, code=code, source=SOURCE, message=message
    )


def instruction_diagnostics(
    report: ScopesReport, path: str, text: str | None
) -> list[types.Diagnostic]:
    entry = next((e for e in report.load.entries if e.candidate.abs_path == path), None)
    out: list[types.Diagnostic] = []
    if entry is not None and entry.state in _SEVERITY:
        message = _MESSAGE[entry.state].format(reason=entry.reason or entry.state)
        out.append(_diag(_TOP, _SEVERITY[entry.state], entry.state, message))
    if entry is not None and text is not None:
        out.extend(_closing_tags(text))
        boundary = _trust_boundary(
            entry.candidate.abs_path, report.project_root, entry.candidate.user_global
        )
        if boundary is not None:
            out.append(boundary)
    return out


def _closing_tags(text: str) -> list[types.Diagnostic]:
    out = []
    for line_no, line in enumerate(text.split("\n")):
        start = line.find(CLOSE_TAG)
        while start != -1:
            rng = types.Range(
                start=types.Position(line=line_no, character=start),
                end=types.Position(line=line_no, character=start + len(CLOSE_TAG)),
            )
            out.append(_diag(
                rng, types.DiagnosticSeverity.Information, "closing-tag-escaped",
                "Escaped as <\\/system-reminder> when loaded, so it cannot close the instruction frame",
            ))  # fmt: skip
            start = line.find(CLOSE_TAG, start + 1)
    return out


def _trust_boundary(path: str, project_root: str, user_global: bool) -> types.Diagnostic | None:
    if user_global or not os.path.islink(path):
        return None
    target = os.path.realpath(path)
    if is_within(target, project_root):
        return None
    return _diag(
        _TOP, types.DiagnosticSeverity.Warning, "symlink-outside-project",
        f"Symlink to {target}, outside the project: its content is loaded as workspace instructions",
    )  # fmt: skip

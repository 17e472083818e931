"""Following ``@path`` imports (``instructions.imports``, Claude Code's convention).

An imported file is part of the scope that imports it: its text is appended to the importing
file's, under an ``Imported from: <path>`` line, and its own imports follow it, depth first, up to
``MAX_HOPS`` hops from the scope's file. So the digest of the scope covers every imported byte,
an edit of an imported file is a ``replace`` of its importer, and the scope's cache entry lists
the version of every file it looked at (``deps``), which the version fast path checks too.

Nothing here is fatal. An import that cannot add anything gets a record saying why (docs/
sources.md, "Imports"): a missing file, a cycle back to a file on its own import path, a file
beyond five hops, one outside the trust boundary (a project file's imports stay in the project or
``allowedSymlinkTargets``; a user-global file's may also reach the home directory), one that
cannot be read, or one that is already an instruction file of the scope's own chain (it is loaded
as itself: ``@AGENTS.md`` in a ``CLAUDE.md`` adds nothing). A file imported a second time within
one scope adds nothing either. An ``@name`` that names no file and does not look like a path
(``@alice``) is prose, not an import.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from dsh_sidecar.fs import LocalFileSystem, Probe, ProbeState, ReadFailure
from dsh_sidecar.jsutil import utf8_len

from .escaping import one_line

if TYPE_CHECKING:
    from .import_syntax import ImportSpan

MAX_HOPS = 5
MAX_IMPORTED_FILES = 64

IMPORTED = "imported"
MISSING = "missing"
CYCLE = "cycle"
TOO_DEEP = "too-deep"
OUTSIDE = "outside"
UNREADABLE = "unreadable"
IN_CHAIN = "in-chain"
REPEATED = "repeated"
OVER_BUDGET = "over-budget"
IMPORT_STATES = (IMPORTED, MISSING, CYCLE, TOO_DEEP, OUTSIDE, UNREADABLE, IN_CHAIN, REPEATED,
                 OVER_BUDGET)  # fmt: skip
# States that say something is wrong with the import (diagnostics warn about these).
PROBLEM_STATES = frozenset({MISSING, CYCLE, TOO_DEEP, OUTSIDE, UNREADABLE, OVER_BUDGET})


@attrs.frozen
class ImportRecord:
    """One import met while expanding a scope's file, and what became of it."""

    importer: str  # absolute path of the file holding the ``@path``
    raw: str  # the path as written after ``@``
    path: str  # the absolute path it names
    display: str
    state: str
    depth: int  # 1 for an import of the scope's own file
    reason: str | None = None
    bytes: int | None = None
    target: str | None = None  # where an ``outside`` import really leads


@attrs.frozen
class Expansion:
    text: str
    deps: tuple[tuple[str, str], ...] = ()  # (path, version or "" when absent) of every target
    records: tuple[ImportRecord, ...] = ()


@attrs.frozen
class ImportPolicy:
    """What a scope's imports may reach and how they are shown."""

    fs: LocalFileSystem
    home: str
    max_source_bytes: int
    allowed: Callable[[str], bool]  # the real path of an opened import
    boundary: str  # "the project" / "the home directory": said when an import is refused
    chain: frozenset[str]  # instruction files of the scope's own chain: loaded as themselves
    display: Callable[[str], str]


def expand(own_path: str, own_text: str, policy: ImportPolicy) -> Expansion:
    """``own_text`` with its imports appended, depth first; never raises for file problems."""
    run = _Run(policy, own_path, own_text)
    run.visit(own_path, own_text, 1)
    return Expansion("".join(run.parts), tuple(run.deps.items()), tuple(run.records))


class _Run:
    def __init__(self, policy: ImportPolicy, own_path: str, own_text: str) -> None:
        self.policy = policy
        self.parts = [own_text]
        self.length = utf8_len(own_text)
        # Files on the current import path and files already imported, by real path: a file
        # reached through a second spelling (a link to it) is the same file.
        self.path_stack = [os.path.normpath(own_path)]
        self.real_stack = [_real(policy.fs, own_path)]
        self.included = {self.real_stack[0]}
        self.deps: dict[str, str] = {}
        self.records: list[ImportRecord] = []
        self.count = 0

    def record(self, importer: str, span: ImportSpan, state: str, depth: int, **kw: object) -> None:
        display = self.policy.display(span.path)
        self.records.append(
            ImportRecord(importer, span.raw, span.path, display, state, depth, **kw)  # type: ignore[arg-type]
        )

    def visit(self, importer: str, text: str, depth: int) -> None:
        if "@" not in text:
            return  # no import can start: the parser (and its module) is not needed
        from .import_syntax import import_spans

        policy = self.policy
        for span in _first_of_each(import_spans(text, os.path.dirname(importer), policy.home)):
            path = span.path
            probe = policy.fs.probe(path)
            self.deps.setdefault(path, _version(probe))
            if probe.state is ProbeState.ABSENT:
                if policy.fs.exists(path):
                    self.record(importer, span, UNREADABLE, depth, reason="not a regular file")
                elif span.looks_like_a_path:
                    self.record(importer, span, MISSING, depth, reason="no such file")
                continue
            real = probe.target or path
            if real in self.real_stack:
                shown = " -> ".join(policy.display(p) for p in [*self.path_stack, path])
                self.record(importer, span, CYCLE, depth, reason=f"import cycle: {shown}")
                continue
            if path in policy.chain or real in policy.chain:
                self.record(
                    importer, span, IN_CHAIN, depth,
                    reason="an instruction file of this chain, loaded as itself",
                )  # fmt: skip
                continue
            if real in self.included:
                self.record(importer, span, REPEATED, depth, reason="already imported here")
                continue
            if depth > MAX_HOPS:
                self.record(
                    importer, span, TOO_DEEP, depth, bytes=probe.size,
                    reason=f"more than {MAX_HOPS} import hops from the instruction file",
                )  # fmt: skip
                continue
            if not probe.present:
                self.record(importer, span, UNREADABLE, depth, reason=probe.error)
                continue
            if self.count >= MAX_IMPORTED_FILES:
                self.record(
                    importer, span, OVER_BUDGET, depth, bytes=probe.size,
                    reason=f"more than {MAX_IMPORTED_FILES} files imported by one scope",
                )  # fmt: skip
                continue
            read = policy.fs.read_text(probe, policy.max_source_bytes, allowed=policy.allowed)
            if read.failure is ReadFailure.NOT_ALLOWED:
                self.record(
                    importer, span, OUTSIDE, depth, bytes=probe.size, target=read.detail,
                    reason=f"leads outside {policy.boundary} to {read.detail}",
                )  # fmt: skip
                continue
            if read.text is None:
                failure = read.failure.value if read.failure else "error"
                reason = f"{failure}: {read.detail}" if read.detail else failure
                self.record(importer, span, UNREADABLE, depth, bytes=probe.size, reason=reason)
                continue
            section = _section(self.parts[-1], policy.display(path), read.text)
            if self.length + utf8_len(section) > policy.max_source_bytes:
                self.record(
                    importer, span, OVER_BUDGET, depth, bytes=probe.size,
                    reason="the file with its imports would be larger than maxSourceBytes",
                )  # fmt: skip
                continue
            if read.version is not None:
                self.deps[path] = read.version  # the version of the bytes actually read
            self.count += 1
            self.included.add(real)
            self.parts.append(section)
            self.length += utf8_len(section)
            self.record(importer, span, IMPORTED, depth, bytes=utf8_len(read.text))
            self.path_stack.append(path)
            self.real_stack.append(real)
            self.visit(path, read.text, depth + 1)
            self.path_stack.pop()
            self.real_stack.pop()


def _first_of_each(spans: list[ImportSpan]) -> list[ImportSpan]:
    """One span per path: a file naming the same import twice imports it once."""
    seen: set[str] = set()
    out = []
    for span in spans:
        if span.path not in seen:
            seen.add(span.path)
            out.append(span)
    return out


def _section(previous: str, display: str, text: str) -> str:
    """An imported file as it follows the text before it: a blank line, its heading, its text."""
    lead = "\n" if previous.endswith("\n") else "\n\n"
    return f"{lead}Imported from: {one_line(display)}\n\n{text}"


def _real(fs: LocalFileSystem, path: str) -> str:
    try:
        return fs.resolve(path)
    except (OSError, ValueError):
        return os.path.normpath(path)


def _version(probe: Probe) -> str:
    if probe.present and probe.version is not None:
        return probe.version
    return "" if probe.state is ProbeState.ABSENT else "unavailable"


def deps_unchanged(fs: LocalFileSystem, deps: tuple[tuple[str, str], ...]) -> bool:
    """Whether every file a scope's imports looked at still has the version it had (an absent
    one still absent): the version fast path for imports."""
    for path, version in deps:
        found = fs.quick_stat(path)
        if isinstance(found, Probe):
            if found.state is not ProbeState.ABSENT or version != "":
                return False
        elif found[0] != version:
            return False
    return True

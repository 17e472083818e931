"""What this sidecar loads for an agent session in ``cwd`` working on a file.

Built from the instruction engine's own answers, so it explains the same decision a session
makes: the baseline of the session directory (``load_baseline``) arrives at the first step, and
the chain of the file's directory (``load_document_chain``) adds, on the first touch of the file,
the directories between the session directory and the file. Every chain entry keeps its state
and reason; states this module does not know (a convention added later) pass through unchanged.
Only the budget states of touch-added files are worked out again, because a touch renders them in
a message of their own under the same byte budget.
"""

from __future__ import annotations

import os

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.baseline import (
    INCLUDED,
    OMITTED,
    TRUNCATED,
    ChainEntry,
    LoadedFile,
    load_baseline,
    load_document_chain,
)
from dsh_sidecar.sources.agent_instructions.discovery import descendant_dirs_between
from dsh_sidecar.sources.agent_instructions.imports import CYCLE, IMPORTED, IN_CHAIN, REPEATED
from dsh_sidecar.sources.agent_instructions.paths import scope_dir_of_display
from dsh_sidecar.sources.agent_instructions.render import RenderItem, RenderResult, render

from .model import UNREACHED, SidecarFile

BASELINE = "baseline"
TOUCH = "touch"
_BUDGET_STATES = frozenset({INCLUDED, TRUNCATED, OMITTED})


@attrs.frozen
class SidecarPart:
    project_root: str
    cwd: str
    files: tuple[SidecarFile, ...]


def sidecar_part(
    file_path: str,
    cwd: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    *,
    dsh_home: str,
    os_home: str | None = None,
) -> SidecarPart:
    """``file_path``'s directory must exist (the file itself need not); both paths absolute."""
    baseline = load_baseline(cwd, settings, fs, dsh_home=dsh_home, os_home=os_home)
    chain = load_document_chain(
        os.path.dirname(file_path),
        settings,
        fs,
        dsh_home=dsh_home,
        os_home=os_home,
        file_path=file_path,
    )
    files: list[SidecarFile] = []
    for entry in baseline.entries:
        files.extend(_with_imports(_file(entry, BASELINE), entry))
    in_baseline = {e.candidate.abs_path for e in baseline.entries}
    real_file = os.path.join(chain.cwd, os.path.basename(file_path))
    touched = set(descendant_dirs_between(baseline.cwd, real_file))
    # A touch of the file reaches the directories on its way and the rules whose globs match
    # it (the document chain lists only those rules).
    touch_entries = [
        e
        for e in chain.entries
        if e.candidate.abs_path not in in_baseline
        and (e.candidate.directory in touched or e.candidate.is_rule)
    ]
    budgeted = _touch_budget(chain.kept, touch_entries, settings)
    for entry in chain.entries:
        if entry.candidate.abs_path in in_baseline:
            continue
        if entry.candidate.directory in touched or entry.candidate.is_rule:
            budgeted_entry = budgeted.get(entry.candidate.abs_path, entry)
            files.extend(_with_imports(_file(budgeted_entry, TOUCH), budgeted_entry))
        else:
            files.append(_unreached(entry, baseline.cwd, baseline.project_root))
    return SidecarPart(baseline.project_root, baseline.cwd, tuple(files))


def _with_imports(found: SidecarFile, entry: ChainEntry) -> list[SidecarFile]:
    """The file, then each file it imports (instructions.imports): an imported file arrives
    with its importer, as part of its scope, and reaches the model exactly when it does."""
    out = [found]
    for record in entry.imports:
        if record.state in (IN_CHAIN, REPEATED, CYCLE):
            continue  # loaded as itself, or already listed (a cycle leads to a listed file)
        imported = record.state == IMPORTED
        out.append(
            SidecarFile(
                path=record.path,
                display_path=record.display,
                scope=found.scope,
                state=record.state,
                bytes=record.bytes,
                via=found.via if imported else None,
                included_bytes=record.bytes if imported and found.loaded else None,
                reason=(
                    f"imported by {entry.candidate.display_path}"
                    if imported
                    else f"an import of {entry.candidate.display_path}: {record.reason}"
                ),
            )
        )
    return out


def _file(entry: ChainEntry, via: str) -> SidecarFile:
    return SidecarFile(
        path=entry.candidate.abs_path,
        display_path=entry.candidate.display_path,
        scope=entry.candidate.scope,
        state=entry.state,
        bytes=entry.bytes,
        via=via,
        included_bytes=entry.included_bytes,
        digest=entry.digest,
        reason=entry.reason,
    )


def _unreached(entry: ChainEntry, cwd: str, project_root: str) -> SidecarFile:
    shown = os.path.relpath(cwd, project_root) if cwd != project_root else "the project root"
    return SidecarFile(
        path=entry.candidate.abs_path,
        display_path=entry.candidate.display_path,
        scope=entry.candidate.scope,
        state=UNREACHED,
        bytes=entry.bytes,
        digest=entry.digest,
        reason=(
            f"a session in {shown} loads the directories down to its own and, when it touches a "
            "file, those between it and the file; this one is neither"
        ),
    )


def _touch_budget(
    kept: tuple[LoadedFile, ...], touch_entries: list[ChainEntry], settings: InstructionSettings
) -> dict[str, ChainEntry]:
    """The touch-added files' budget states, as the one message a first touch renders them in."""
    wanted = {e.candidate.abs_path: e for e in touch_entries if e.state in _BUDGET_STATES}
    files = [f for f in kept if f.candidate.abs_path in wanted]
    if not files:
        return {}
    items = [
        RenderItem(
            "set",
            f.candidate.display_path,
            f.content,
            scope_dir_of_display(f.candidate.display_path),
            applies_to=f.applies.describe() if f.applies is not None else None,
        )
        for f in files
    ]
    if settings.active:
        result = render(items, settings.max_bytes, None)
    else:
        result = RenderResult("", tuple(i.path for i in items), (), frozenset())
    truncations = {t.path: t for t in result.truncated}
    omitted = set(result.omitted)
    out: dict[str, ChainEntry] = {}
    for item, f in zip(items, files, strict=True):
        entry = wanted[f.candidate.abs_path]
        cut = truncations.get(item.path)
        if cut is not None:
            entry = attrs.evolve(
                entry,
                state=TRUNCATED,
                included_bytes=cut.included_bytes,
                reason=(
                    f"truncated from {cut.original_bytes} to {cut.included_bytes} bytes by the "
                    "budget of the touch message"
                ),
            )
        elif item.path in omitted:
            entry = attrs.evolve(
                entry,
                state=OMITTED,
                included_bytes=None,
                reason="omitted by the budget of the touch message",
            )
        else:
            entry = attrs.evolve(entry, state=INCLUDED, included_bytes=entry.bytes, reason=None)
        out[f.candidate.abs_path] = entry
    return out

"""Baseline composition: discover, read, deduplicate per directory, render (reference §2.2–§2.3).

Besides the rendered block, the load reports every present candidate with a state
(``included``/``truncated``/``omitted``/``duplicate``/``oversized``/``unreadable``/``ignored``/
``outside-project``) so the CLI, ``dsh/scopes``, hover and diagnostics all explain the same
decision. A project file whose real target lies outside the project (``confinement``) is never
read.
"""

from __future__ import annotations

import attrs

from dsh_sidecar.config import InstructionSettings, os_home_or_default
from dsh_sidecar.fs import LocalFileSystem, Probe, ReadFailure

from .confinement import OUTSIDE_PROJECT, Confinement, confinement_for, outside_reason
from .digests import sha1_hex, trimmed_digest
from .discovery import Candidate, baseline_identity, chain_candidates, find_project_root
from .git_excludes import GitUser
from .gitignore import IgnoreMatcher
from .paths import dedup_key
from .render import BASELINE_INTRO, REPLACEMENT_INTRO, RenderItem, RenderResult, render

INCLUDED = "included"
TRUNCATED = "truncated"
OMITTED = "omitted"
DUPLICATE = "duplicate"
OVERSIZED = "oversized"
UNREADABLE = "unreadable"
IGNORED = "ignored"
FILE_STATES = (
    INCLUDED, TRUNCATED, OMITTED, DUPLICATE, OVERSIZED, UNREADABLE, IGNORED, OUTSIDE_PROJECT,
)  # fmt: skip


@attrs.frozen
class LoadedFile:
    candidate: Candidate
    probe: Probe
    content: str
    digest: str
    trimmed: str

    @property
    def bytes(self) -> int:
        return len(self.content.encode("utf-8"))


@attrs.frozen
class ChainEntry:
    """One present candidate of the chain and what became of it."""

    candidate: Candidate
    state: str
    bytes: int | None = None
    digest: str | None = None
    reason: str | None = None
    included_bytes: int | None = None
    target: str | None = None


@attrs.frozen
class BaselineLoad:
    project_root: str
    cwd: str
    identity: str
    observed: tuple[LoadedFile, ...]
    kept: tuple[LoadedFile, ...]
    result: RenderResult
    retained: tuple[LoadedFile, ...]
    entries: tuple[ChainEntry, ...]

    @property
    def text(self) -> str:
        return self.result.text

    @property
    def excluded_scopes(self) -> frozenset[str]:
        """Scopes read successfully but not retained (collapsed or dropped by the budget)."""
        retained = {f.candidate.scope for f in self.retained}
        return frozenset(f.candidate.scope for f in self.observed) - retained


def read_candidate(
    candidate: Candidate, probe: Probe, settings: InstructionSettings, fs: LocalFileSystem
) -> LoadedFile | ChainEntry:
    """Read one present candidate; a failure comes back as its chain entry."""
    read = fs.read_text(probe, settings.max_source_bytes)
    if read.text is None:
        state = OVERSIZED if read.failure is ReadFailure.OVERSIZED else UNREADABLE
        reason = f"{read.failure.value if read.failure else 'error'}: {read.detail or ''}".rstrip(
            ": "
        )
        return ChainEntry(candidate, state, bytes=probe.size, reason=reason, target=probe.target)
    return LoadedFile(candidate, probe, read.text, sha1_hex(read.text), trimmed_digest(read.text))


def load_baseline(
    cwd: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    *,
    dsh_home: str,
    replace_previous: bool = False,
    ignore: IgnoreMatcher | None = None,
    os_home: str | None = None,
) -> BaselineLoad:
    """What a session at ``cwd`` receives as its baseline, with the state of every present file.

    ``ignore`` is given only when reporting on a document's directory (``dsh/scopes``); a session's
    own chain is never filtered.
    """
    root = find_project_root(cwd, settings.project_root_markers, fs)
    real_cwd = fs.resolve(cwd)
    identity = baseline_identity(root, real_cwd, settings)
    entries: list[ChainEntry] = []
    observed: list[LoadedFile] = []
    candidates = chain_candidates(root, real_cwd, settings, dsh_home, os_home)
    confinement: Confinement | None = None
    for cand in candidates:
        hit = None if cand.user_global or ignore is None else ignore.check_candidate(cand.abs_path)
        probe = fs.probe(cand.abs_path)
        if not probe.present:
            if probe.error is not None:
                entries.append(ChainEntry(cand, UNREADABLE, reason=probe.error))
            continue
        if not cand.user_global:
            if confinement is None:
                confinement = confinement_for(root, settings, fs, os_home_or_default(os_home))
            if not confinement.allows(probe):
                entries.append(ChainEntry(
                    cand, OUTSIDE_PROJECT, bytes=probe.size, target=probe.target,
                    reason=outside_reason(probe.target),
                ))  # fmt: skip
                continue
        if hit is not None:
            entries.append(ChainEntry(cand, IGNORED, bytes=probe.size, reason=hit.describe()))
            continue
        loaded = read_candidate(cand, probe, settings, fs)
        if isinstance(loaded, ChainEntry):
            entries.append(loaded)
        else:
            observed.append(loaded)
    kept, duplicates = dedup_per_directory(observed)
    intro = REPLACEMENT_INTRO if replace_previous else BASELINE_INTRO
    items = [RenderItem("baseline", f.candidate.display_path, f.content) for f in kept]
    if not settings.active:
        result = RenderResult("", tuple(i.path for i in items), (), frozenset())
    elif not items:
        # Upstream emits no baseline when nothing was found (reference §2.9 step 4); rendering an
        # empty list would still produce a frame holding only the intro.
        result = RenderResult("", (), (), frozenset())
    else:
        result = render(items, settings.max_bytes, intro)
    retained = tuple(f for i, f in enumerate(kept) if i in result.represented)
    entries.extend(_rendered_entries(kept, duplicates, result))
    order = {c.abs_path: i for i, c in enumerate(candidates)}
    entries.sort(key=lambda e: order.get(e.candidate.abs_path, len(order)))
    return BaselineLoad(
        root, real_cwd, identity, tuple(observed), tuple(kept), result, retained, tuple(entries)
    )


def load_document_chain(
    directory: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    *,
    dsh_home: str,
    os_home: str | None = None,
    matchers: dict[str, IgnoreMatcher] | None = None,
    git_user: GitUser | None = None,
) -> BaselineLoad:
    """The chain that governs a document in ``directory``, with ignored directories marked.

    This is what ``dsh/scopes`` and ``dsh-sidecar scopes`` report: the baseline a session at
    ``directory`` would load, except that a file in a ``.gitignore``d (or excluded) directory is
    reported as ``ignored``, because a touch would never discover it.
    """
    root = find_project_root(directory, settings.project_root_markers, fs)
    # ``matchers`` (per project root) lets a long-lived caller keep parsed .gitignore files,
    # which a matcher re-validates by file version on every use.
    matcher = matchers.get(root) if matchers is not None else None
    if matcher is None:
        matcher = IgnoreMatcher(root, settings, fs, git_user=git_user)
        if matchers is not None:
            matchers[root] = matcher
    # One pass: each .gitignore is probed once and each directory decided once for the chain.
    with matcher.one_pass():
        return load_baseline(
            directory, settings, fs, dsh_home=dsh_home, ignore=matcher, os_home=os_home
        )


def dedup_per_directory(
    files: list[LoadedFile],
) -> tuple[list[LoadedFile], list[tuple[LoadedFile, LoadedFile]]]:
    """Keep the first file per (directory, trimmed content); return kept and (dropped, kept-twin)."""
    seen: dict[tuple[str, str], LoadedFile] = {}
    kept: list[LoadedFile] = []
    dropped: list[tuple[LoadedFile, LoadedFile]] = []
    for f in files:
        key = (dedup_key(f.candidate.display_path), f.trimmed)
        twin = seen.get(key)
        if twin is not None:
            dropped.append((f, twin))
            continue
        seen[key] = f
        kept.append(f)
    return kept, dropped


def _rendered_entries(
    kept: list[LoadedFile],
    duplicates: list[tuple[LoadedFile, LoadedFile]],
    result: RenderResult,
) -> list[ChainEntry]:
    entries = []
    truncations = {t.path: t for t in result.truncated}
    omitted = set(result.omitted)
    for f in kept:
        path = f.candidate.display_path
        t = truncations.get(path)
        if t is not None:
            state, included = TRUNCATED, t.included_bytes
            reason: str | None = (
                f"truncated from {t.original_bytes} to {t.included_bytes} bytes by the budget"
            )
        elif path in omitted:
            state, included, reason = OMITTED, None, "omitted by the byte budget"
        else:
            state, included, reason = INCLUDED, f.bytes, None
        entries.append(
            ChainEntry(
                f.candidate, state, bytes=f.bytes, digest=f.digest, reason=reason,
                included_bytes=included, target=f.probe.target,
            )
        )  # fmt: skip
    for f, twin in duplicates:
        entries.append(ChainEntry(
            f.candidate, DUPLICATE, bytes=f.bytes, digest=f.digest, target=f.probe.target,
            reason=f"same content as {twin.candidate.display_path} (after trimming whitespace)",
        ))  # fmt: skip
    return entries

"""Baseline composition: discover, read, deduplicate per directory, render (docs/reference/agent-instructions.md, Baseline candidates; Per-directory dedup).

Besides the rendered block, the load reports every present candidate with a state
(``included``/``truncated``/``omitted``/``duplicate``/``oversized``/``unreadable``/``ignored``/
``outside-project``) so the CLI, ``dsh/scopes``, hover and diagnostics all explain the same
decision. A project file whose real target lies outside the project (``confinement``) is never
read.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import attrs

from dsh_sidecar.config import OVERRIDE_NAME, InstructionSettings, os_home_or_default
from dsh_sidecar.fs import LocalFileSystem, Probe, ReadFailure

from .confinement import (
    OUTSIDE_PROJECT,
    Confinement,
    confinement_for,
    confinement_once,
    outside_reason,
)
from .content import ContentRules
from .digests import sha1_hex, trimmed_digest
from .discovery import Candidate, baseline_identity, chain_candidates, find_project_root
from .git_excludes import GitUser
from .gitignore import IgnoreMatcher
from .imports import ImportRecord
from .paths import dedup_key, is_within
from .render import BASELINE_INTRO, REPLACEMENT_INTRO, RenderItem, RenderResult, render
from .rules import Applicability, Rule, RuleIndex

INCLUDED = "included"
TRUNCATED = "truncated"
OMITTED = "omitted"
DUPLICATE = "duplicate"
OVERSIZED = "oversized"
UNREADABLE = "unreadable"
IGNORED = "ignored"
OVERRIDDEN = "overridden"
FILE_STATES = (
    INCLUDED,
    TRUNCATED,
    OMITTED,
    DUPLICATE,
    OVERSIZED,
    UNREADABLE,
    IGNORED,
    OUTSIDE_PROJECT,
    OVERRIDDEN,
)


@attrs.frozen
class LoadedFile:
    candidate: Candidate
    probe: Probe
    content: str
    digest: str
    trimmed: str
    # What the conventions found: the imports followed (and the versions they were read at),
    # a rule's frontmatter. Empty with every convention off.
    deps: tuple[tuple[str, str], ...] = ()
    imports: tuple[ImportRecord, ...] = ()
    applies: Applicability | None = None

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
    imports: tuple[ImportRecord, ...] = ()
    applies: Applicability | None = None  # a rule's frontmatter (rules.py)


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
    candidate: Candidate,
    probe: Probe,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    contents: ContentRules | None = None,
) -> LoadedFile | ChainEntry:
    """Read one present candidate; a failure comes back as its chain entry."""
    read = fs.read_text(probe, settings.max_source_bytes)
    if read.text is None:
        state = OVERSIZED if read.failure is ReadFailure.OVERSIZED else UNREADABLE
        reason = f"{read.failure.value if read.failure else 'error'}: {read.detail or ''}".rstrip(
            ": "
        )
        return ChainEntry(candidate, state, bytes=probe.size, reason=reason, target=probe.target)
    if contents is None or not contents.active:
        return LoadedFile(
            candidate, probe, read.text, sha1_hex(read.text), trimmed_digest(read.text)
        )
    found = contents.content(candidate.scope, candidate.abs_path, read.text)
    return LoadedFile(
        candidate,
        probe,
        found.text,
        found.digest,
        found.trimmed,
        found.deps,
        found.imports,
        found.applies,
    )


def load_baseline(
    cwd: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    *,
    dsh_home: str,
    replace_previous: bool = False,
    ignore: IgnoreMatcher | None = None,
    os_home: str | None = None,
    file_path: str | None = None,
    rules: RuleIndex | None = None,
    project_root: str | None = None,
) -> BaselineLoad:
    """What a session at ``cwd`` receives as its baseline, with the state of every present file.

    ``ignore`` is given only when reporting on a document's directory (``dsh/scopes``); a session's
    own chain is never filtered. ``file_path`` (a document in ``cwd``) adds the path-scoped rules
    whose globs match it, as a touch of it would. ``rules`` is a kept ``RuleIndex`` of the root.
    ``project_root`` is ``cwd``'s, when the caller has just looked it up over the same ``fs``.
    """
    root = project_root or find_project_root(cwd, settings.project_root_markers, fs)
    real_cwd = fs.resolve(cwd)
    identity = baseline_identity(root, real_cwd, settings)
    entries: list[ChainEntry] = []
    observed: list[LoadedFile] = []
    home = os_home_or_default(os_home)
    confinement: list[Confinement] = []

    def confined() -> Confinement:
        if not confinement:
            confinement.append(confinement_for(root, settings, fs, home))
        return confinement[0]

    contents = ContentRules(root, settings, fs, dsh_home, home, confined)
    candidates = chain_candidates(root, real_cwd, settings, dsh_home, os_home)
    if settings.rule_sets:
        candidates = _with_rules(candidates, root, settings, fs, confined, rules, file_path)
    overridden: set[str] = set()  # AGENTS.md slots replaced by a present AGENTS.override.md
    for cand in candidates:
        check = not (cand.user_global or cand.is_rule) and ignore is not None
        hit = ignore.check_candidate(cand.abs_path) if check and ignore is not None else None
        probe = fs.probe(cand.abs_path)
        if not probe.present:
            if probe.error is not None:
                entries.append(ChainEntry(cand, UNREADABLE, reason=probe.error))
            continue
        if not cand.user_global and not confined().allows(probe):
            entries.append(
                ChainEntry(
                    cand,
                    OUTSIDE_PROJECT,
                    bytes=probe.size,
                    target=probe.target,
                    reason=outside_reason(probe.target),
                )
            )
            continue
        if hit is not None:
            entries.append(ChainEntry(cand, IGNORED, bytes=probe.size, reason=hit.describe()))
            continue
        if cand.abs_path in overridden:
            entries.append(
                ChainEntry(
                    cand,
                    OVERRIDDEN,
                    bytes=probe.size,
                    target=probe.target,
                    reason=f"replaced by {OVERRIDE_NAME} in this directory (instructions.overrideFiles)",
                )
            )
            continue
        if cand.overrides is not None:
            overridden.add(os.path.join(cand.directory, cand.overrides))
        loaded = read_candidate(cand, probe, settings, fs, contents)
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
        # Upstream emits no baseline when nothing was found (docs/reference/agent-instructions.md, Compose); rendering an
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


def rule_index(
    root: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    confined: Callable[[], Confinement],
) -> RuleIndex:
    """A rule index whose reads are confined to the project, as every project file's are."""

    def read(probe: Probe) -> tuple[str | None, ReadFailure | None, str | None]:
        # Through the index's filesystem of the moment (a kept index is lent to each projection).
        found = index.fs.read_text(probe, settings.max_source_bytes, allowed=confined().allows_path)
        return found.text, found.failure, found.detail

    index = RuleIndex(root, settings.rule_sets, fs, read)
    return index


def _with_rules(
    candidates: list[Candidate],
    root: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    confined: Callable[[], Confinement],
    index: RuleIndex | None,
    file_path: str | None,
) -> list[Candidate]:
    """The chain with its rule files: those that apply to every file right after the project
    root's own files (they are as broad), those whose globs match ``file_path`` at the end (a
    touch of it brings them). A rule that could not be read is listed where an always-on one
    would be, so its state is reported."""
    if index is None or index.project_root != root:
        index = rule_index(root, settings, fs, confined)
    rel = None
    if file_path is not None and is_within(file_path, root):
        rel = os.path.relpath(file_path, root).replace(os.sep, "/")
    broad: list[Candidate] = []
    matching: list[Candidate] = []
    for rule in index.rules():
        if rule.applies is None or rule.always:
            broad.append(rule_candidate(rule, root))
        elif rel is not None and rule.matches(rel):
            matching.append(rule_candidate(rule, root))
    after = max((i for i, c in enumerate(candidates) if c.directory == root), default=-1) + 1
    return [*candidates[:after], *broad, *candidates[after:], *matching]


def rule_candidate(rule: Rule, root: str) -> Candidate:
    return Candidate(
        abs_path=rule.abs_path,
        display_path=os.path.relpath(rule.abs_path, root),
        scope=rule.scope,
        name=os.path.basename(rule.abs_path),
        directory=os.path.dirname(rule.abs_path),
        rule_set=rule.rule_set,
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
    file_path: str | None = None,
    rule_indexes: dict[str, RuleIndex] | None = None,
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
    rules = rule_indexes.get(root) if rule_indexes is not None else None
    if rules is None and settings.rule_sets and rule_indexes is not None:
        home = os_home_or_default(os_home)
        rules = rule_indexes[root] = rule_index(
            root, settings, fs, confinement_once(root, settings, fs, home)
        )
    with matcher.one_pass():
        return load_baseline(
            directory,
            settings,
            fs,
            dsh_home=dsh_home,
            ignore=matcher,
            os_home=os_home,
            file_path=file_path,
            rules=rules,
            project_root=root,  # found above: a deep chain's search up is a thousand looks
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
                f.candidate,
                state,
                bytes=f.bytes,
                digest=f.digest,
                reason=reason,
                included_bytes=included,
                target=f.probe.target,
                imports=f.imports,
                applies=f.applies,
            )
        )
    for f, twin in duplicates:
        entries.append(
            ChainEntry(
                f.candidate,
                DUPLICATE,
                bytes=f.bytes,
                digest=f.digest,
                target=f.probe.target,
                reason=f"same content as {twin.candidate.display_path} (after trimming whitespace)",
                imports=f.imports,
                applies=f.applies,
            )
        )
    return entries

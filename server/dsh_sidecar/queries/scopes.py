"""``dsh/scopes``, hover and diagnostics: the chain that governs a document, and who has it active.

Runs in a worker over a ``Snapshot`` (never the live sessions themselves), so sessions opening
and closing on the event loop cannot change what a report is being built from.

The chain of a document is a pure function of the files it looks at, so each one is kept (per
document path) with what its computation saw of the filesystem (``sources.observed``) and
served again while that still holds: a warm report costs a ``stat`` per directory of the chain
and per present file instead of a probe, a resolve and a read of every candidate. What the live
sessions have active comes from the snapshot each time (it is in memory). Nothing here takes a
lock that another request could wait on: two workers computing the same report at once each
compute it.
"""

from __future__ import annotations

import os
import time

import attrs

from dsh_sidecar.config import InstructionSettings, os_home_or_default
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sessions.locations import document_directory
from dsh_sidecar.sessions.snapshot import LiveView, Snapshot
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_document_chain
from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
from dsh_sidecar.sources.agent_instructions.document import DocumentFacts, document_facts
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser
from dsh_sidecar.sources.agent_instructions.render import RenderResult
from dsh_sidecar.sources.agent_instructions.rules import RuleIndex
from dsh_sidecar.sources.agent_instructions.state import Change
from dsh_sidecar.sources.agent_instructions.usage import OffConvention, project_conventions
from dsh_sidecar.sources.observed import ObservedCache, OneLook

REPORTS_KEPT = 256


@attrs.frozen
class ScopesReport:
    project_root: str
    directory: str
    load: BaselineLoad
    active: dict[str, list[Change]]  # session id -> active changes for the chain's scopes
    # The document itself: the rule file it is, conventions it uses while they are off.
    facts: DocumentFacts = attrs.field(factory=DocumentFacts)
    # The chain's own: instruction files of the repository that the settings do not read.
    not_read: tuple[OffConvention, ...] = ()
    # Session id -> how a person knows it (agent, start time, directory), for the hover.
    labels: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class DocumentChain:
    """What a report keeps of one document's computation: its chain, what the document is, and
    the repository's instruction files the settings leave unread."""

    load: BaselineLoad
    facts: DocumentFacts
    not_read: tuple[OffConvention, ...] = ()


class ScopeChains:
    """Builds scopes reports, keeping each document's chain while the files it saw are unchanged.

    One instance serves one settings generation; the service replaces it when the settings
    change, which drops every kept chain. Each computation builds its own ignore matcher and
    rule index over the filesystem it observes (parsed ``.gitignore`` files are shared by the
    whole process, per file version), so no two requests share mutable state.
    """

    def __init__(
        self, settings: InstructionSettings, fs: LocalFileSystem, git_user: GitUser | None = None
    ) -> None:
        self._settings = settings
        self._fs = fs
        self._git_user = git_user
        self.chains: ObservedCache[DocumentChain] = ObservedCache(REPORTS_KEPT)

    def chain(
        self,
        directory: str,
        document: str | None,
        dsh_home: str,
        home: str,
        look: LocalFileSystem,
    ) -> DocumentChain:
        """The chain of ``directory``; with ``document`` (a file in it), also the rules whose
        globs match it and what the document itself is (``DocumentFacts``). Blocking."""
        settings = self._settings

        def build(fs: LocalFileSystem) -> DocumentChain:
            rules: dict[str, RuleIndex] = {}
            load = load_document_chain(
                directory,
                settings,
                fs,
                dsh_home=dsh_home,
                git_user=self._git_user,
                file_path=document,
                rule_indexes=rules,
            )
            facts = DocumentFacts()
            root = load.project_root
            confined = confinement_once(root, settings, fs, home)
            if document is not None:
                facts = document_facts(
                    document, load, settings, fs, home, confined, rules.get(root)
                )
            unread = project_conventions(
                load.cwd, root, settings, fs, home, confined, imports=False
            )
            return DocumentChain(
                _entries_only(load), facts, tuple(c for c in unread if c.in_project)
            )

        return self.chains.get((directory, document, dsh_home, home), look, build)

    def report(
        self, snapshot: Snapshot, path: str, look: LocalFileSystem | None = None
    ) -> ScopesReport:
        """The report for the document at ``path``, a file or a directory (blocking). ``look``
        is the request's view of the filesystem when it asks more than this (hover)."""
        look = look if look is not None else OneLook(self._fs)
        directory = document_directory(path, look)
        document = path if directory != path else None
        home = os_home_or_default(snapshot.env.get("HOME") or None)
        kept = self.chain(directory, document, snapshot.dsh_home, home, look)
        load, facts = kept.load, kept.facts
        scopes = {e.candidate.scope for e in load.entries}
        if facts.rule is not None:
            scopes.add(facts.rule.scope)
        active = {
            view.session_id: [c for s, c in view.effective.items() if s in scopes and c.active]
            for view in snapshot.sessions
        }
        labels = {
            view.session_id: session_label(view, load.project_root) for view in snapshot.sessions
        }
        return ScopesReport(load.project_root, load.cwd, load, active, facts, kept.not_read, labels)


def session_label(view: LiveView, project_root: str) -> str:
    """A session as a person knows it: who drives it, since when (the sidecar's local time) and
    in which directory, relative to the project (`.` for its root)."""
    cwd = view.cwd
    inside = cwd == project_root or cwd.startswith(project_root.rstrip(os.sep) + os.sep)
    where = os.path.relpath(cwd, project_root) if inside else cwd
    started = time.strftime("%H:%M", time.localtime(view.created_at / 1000))
    return f"{view.agent or 'editor'} session from {started} in `{where}`"


def _entries_only(load: BaselineLoad) -> BaselineLoad:
    """What a report uses of a chain: its entries, without the instruction text it read."""
    result = load.result
    return attrs.evolve(
        load,
        observed=(),
        kept=(),
        retained=(),
        result=RenderResult("", result.omitted, result.truncated, frozenset()),
    )

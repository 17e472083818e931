"""``dsh/scopes``, hover and diagnostics: the chain that governs a document, and who has it active.

Runs in a worker over a ``Snapshot`` (never the live sessions themselves), so sessions opening
and closing on the event loop cannot change what a report is being built from.
"""

from __future__ import annotations

import threading

import attrs

from dsh_sidecar.config import InstructionSettings, os_home_or_default
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_document_chain
from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.agent_instructions.document import DocumentFacts, document_facts
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser
from dsh_sidecar.sources.agent_instructions.gitignore import IgnoreMatcher
from dsh_sidecar.sources.agent_instructions.rules import RuleIndex
from dsh_sidecar.sources.agent_instructions.state import Change

from .snapshot import Snapshot


@attrs.frozen
class ScopesReport:
    project_root: str
    directory: str
    load: BaselineLoad
    active: dict[str, list[Change]]  # session id -> active changes for the chain's scopes
    # The document itself: the rule file it is, conventions it uses while they are off.
    facts: DocumentFacts = attrs.field(factory=DocumentFacts)


class ScopeChains:
    """Builds scopes reports, keeping each project's parsed ``.gitignore`` files between them.

    A matcher is not safe to share between threads, so each project root has its own lock:
    reports on different projects never wait for each other. One instance serves one settings
    generation; the service replaces it when the settings change.
    """

    def __init__(
        self, settings: InstructionSettings, fs: LocalFileSystem, git_user: GitUser | None = None
    ) -> None:
        self._settings = settings
        self._fs = fs
        self._git_user = git_user
        self._guard = threading.Lock()
        self._matchers: dict[str, tuple[IgnoreMatcher, threading.Lock]] = {}
        self._rules: dict[str, RuleIndex] = {}  # per root, used under that root's lock

    def _matcher(self, root: str) -> tuple[IgnoreMatcher, threading.Lock]:
        with self._guard:
            found = self._matchers.get(root)
            if found is None:
                found = self._matchers[root] = (
                    IgnoreMatcher(root, self._settings, self._fs, git_user=self._git_user),
                    threading.Lock(),
                )
            return found

    def report(
        self, snapshot: Snapshot, directory: str, document: str | None = None
    ) -> ScopesReport:
        """The chain of ``directory``; with ``document`` (a file in it), also the rules whose
        globs match it and what the document itself is (``DocumentFacts``)."""
        settings = snapshot.settings.instructions
        root = find_project_root(directory, settings.project_root_markers, self._fs)
        matcher, lock = self._matcher(root)
        home = os_home_or_default(snapshot.env.get("HOME") or None)
        with lock:
            load = load_document_chain(
                directory, settings, self._fs, dsh_home=snapshot.dsh_home,
                matchers={root: matcher}, file_path=document, rule_indexes=self._rules,
            )  # fmt: skip
            facts = DocumentFacts()
            if document is not None:
                confined = confinement_once(root, settings, self._fs, home)
                facts = document_facts(
                    document, load, settings, self._fs, home, confined, self._rules.get(root)
                )
        scopes = {e.candidate.scope for e in load.entries}
        if facts.rule is not None:
            scopes.add(facts.rule.scope)
        active = {
            view.session_id: [c for s, c in view.effective.items() if s in scopes and c.active]
            for view in snapshot.sessions
        }
        return ScopesReport(load.project_root, load.cwd, load, active, facts)

"""From the text of a file that was read to what its scope holds: the conventions' transforms.

With every convention off a scope's content is the file's text, its digest that text's SHA-1,
exactly as upstream. With ``instructions.imports`` the ``@path`` imports are appended
(``imports.py``) and the digest covers them; a path-scoped rule (``rules.py``) loses its
frontmatter block, which says what the rule applies to, not what to do, while its digest covers
the whole file, so a change of its globs is a change of the rule. Baselines and reconciliation
both call ``ContentRules.content``, so a file has one content whichever path reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.rule_sets import RULE_SETS

from .confinement import Confinement, confinement_for
from .digests import sha1_hex, trimmed_digest
from .discovery import ancestor_chain, directory_candidates, home_display, user_global_candidates
from .imports import ImportPolicy, ImportRecord, expand
from .paths import USER_GLOBAL, is_within, split_scope
from .rules import Applicability, applicability, is_rule_scope, rule_scope_parts

IMPORTING_RULE_SETS = frozenset({"claude"})  # Claude Code's rule files are memory files too


@attrs.frozen
class Content:
    """What one scope holds: the text the model sees, the digest a change records, the
    per-directory duplicate key, and what the conventions found on the way."""

    text: str
    digest: str
    trimmed: str
    deps: tuple[tuple[str, str], ...] = ()
    imports: tuple[ImportRecord, ...] = ()
    applies: Applicability | None = None  # a rule's globs (None: not a rule)


def plain(text: str) -> Content:
    return Content(text, sha1_hex(text), trimmed_digest(text))


class ContentRules:
    """The transforms for one project root and settings; confinement and chains are worked out
    on first need and kept."""

    def __init__(
        self,
        project_root: str,
        settings: InstructionSettings,
        fs: LocalFileSystem,
        dsh_home: str,
        os_home: str,
        confinement: Callable[[], Confinement] | None = None,
    ) -> None:
        self.project_root = project_root
        self.settings = settings
        self.fs = fs
        self.dsh_home = dsh_home
        self.os_home = os_home
        self._project_confinement = confinement
        self._confinements: dict[str, Confinement] = {}
        self._chains: dict[str, frozenset[str]] = {}

    @property
    def active(self) -> bool:
        return self.settings.imports or bool(self.settings.rule_sets)

    def content(self, scope: str, abs_path: str, text: str) -> Content:
        """The content of the scope ``scope`` whose file ``abs_path`` read as ``text``."""
        settings = self.settings
        rule_set = rule_scope_parts(scope)[0] if is_rule_scope(scope) else None
        if rule_set is None and not settings.imports:
            return plain(text)
        applies = None
        body = text
        if rule_set is not None:
            spec = RULE_SETS.get(rule_set)
            if spec is None:
                return plain(text)
            wide = split_scope(scope)[1] in spec.repository_files
            applies = applicability(spec, text, repository_wide=wide)
            body = text[applies.body_start :]
        if settings.imports and (rule_set is None or rule_set in IMPORTING_RULE_SETS):
            expansion = expand(abs_path, body, self.policy(scope, abs_path))
            added = expansion.text[len(body) :]
            whole = text + added
            return Content(
                expansion.text, sha1_hex(whole), trimmed_digest(expansion.text),
                expansion.deps, expansion.records, applies,
            )  # fmt: skip
        return Content(body, sha1_hex(text), trimmed_digest(body), applies=applies)

    # --- imports ---------------------------------------------------------------------------------

    def policy(self, scope: str, abs_path: str) -> ImportPolicy:
        user_global = split_scope(scope)[0] == USER_GLOBAL
        if user_global:
            allowed = self._confinement("home").allows_path
            boundary = "the home directory (or instructions.allowedSymlinkTargets)"
            chain = self._user_global_chain()
        else:
            allowed = self._confinement("project").allows_path
            boundary = "the project (or instructions.allowedSymlinkTargets)"
            directory = self.project_root if is_rule_scope(scope) else os.path.dirname(abs_path)
            chain = self._chain(directory)
        return ImportPolicy(
            self.fs, self.os_home, self.settings.max_source_bytes, allowed, boundary, chain,
            self.display,
        )  # fmt: skip

    def display(self, path: str) -> str:
        """Relative to the project root inside it, ``~/…`` in the home directory, else absolute."""
        if is_within(path, self.project_root):
            return os.path.relpath(path, self.project_root)
        return home_display(path, self.os_home)

    def _confinement(self, kind: str) -> Confinement:
        found = self._confinements.get(kind)
        if found is None:
            if kind == "project":
                found = (
                    self._project_confinement()
                    if self._project_confinement is not None
                    else confinement_for(self.project_root, self.settings, self.fs, self.os_home)
                )
            else:
                # The user's own files may import from the home directory and DSH_HOME.
                roots = [
                    self.os_home,
                    self.dsh_home,
                    *self.settings.symlink_target_dirs(self.os_home),
                ]
                resolved = []
                for root in roots:
                    try:
                        resolved.append(self.fs.resolve(root))
                    except (OSError, ValueError):
                        continue
                found = Confinement(tuple(resolved))
            self._confinements[kind] = found
        return found

    def _user_global_chain(self) -> frozenset[str]:
        candidates = user_global_candidates(self.settings, self.dsh_home, self.os_home)
        return frozenset(c.abs_path for c in candidates)

    def _chain(self, directory: str) -> frozenset[str]:
        """Every instruction slot of ``directory`` and its ancestors up to the root, and the
        user-global files: whenever a scope of ``directory`` is loaded, so are those."""
        found = self._chains.get(directory)
        if found is None:
            paths = set(self._user_global_chain())
            if is_within(directory, self.project_root):
                for each in ancestor_chain(self.project_root, directory):
                    paths.update(
                        c.abs_path
                        for c in directory_candidates(self.project_root, each, self.settings)
                    )
            found = self._chains[directory] = frozenset(paths)
        return found

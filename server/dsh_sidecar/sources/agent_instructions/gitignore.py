"""Ignore-aware discovery (beyond upstream; protocol.md §9 ``respectGitignore``/``exclude``).

A touch must not pull instructions out of a dependency tree such as ``node_modules/``. We apply
the project's ``.gitignore`` files, nested ones included, with git's rules: deeper files take
precedence, the last matching pattern wins, and nothing below an ignored directory can be
re-included. Only *directories* are tested against ``.gitignore``: ``AGENTS.local.md`` overlays are
usually git-ignored on purpose and must still load. ``exclude`` patterns (rooted at the project)
apply to directories and to the instruction file itself. The session's own ancestor chain is never
filtered; callers only ask about touch-discovered scopes.
"""

from __future__ import annotations

import os

import attrs
import pathspec

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem

EXCLUDE_SOURCE = "settings: dsh.instructions.exclude"


@attrs.frozen
class IgnoreHit:
    """Why something is ignored: the pattern, the file it came from, and what it matched."""

    pattern: str
    source: str
    matched: str

    def describe(self) -> str:
        return f"{self.matched} ignored by {self.pattern!r} ({self.source})"


class IgnoreMatcher:
    """Ignore decisions for one project root; ``.gitignore`` parses are cached by file version."""

    def __init__(
        self, project_root: str, settings: InstructionSettings, fs: LocalFileSystem
    ) -> None:
        self.project_root = project_root
        self.fs = fs
        self.respect_gitignore = settings.respect_gitignore
        self._exclude = (
            pathspec.GitIgnoreSpec.from_lines(settings.exclude) if settings.exclude else None
        )
        self._specs: dict[str, tuple[str, pathspec.GitIgnoreSpec]] = {}

    @property
    def enabled(self) -> bool:
        return self.respect_gitignore or self._exclude is not None

    def check_candidate(self, abs_path: str) -> IgnoreHit | None:
        """The hit that keeps a touch-discovered instruction file out, or None."""
        if not self.enabled:
            return None
        hit = self.check_directory(os.path.dirname(abs_path))
        if hit is None and self._exclude is not None:
            rel = os.path.relpath(abs_path, self.project_root)
            if not rel.startswith(".."):
                hit = self._match_exclude(rel)
        return hit

    def check_directory(self, abs_dir: str) -> IgnoreHit | None:
        """The hit that ignores ``abs_dir`` or one of its ancestors below the root, or None."""
        if not self.enabled:
            return None
        rel = os.path.relpath(abs_dir, self.project_root)
        if rel == "." or rel.startswith("..") or os.path.isabs(rel):
            return None
        parts = rel.split(os.sep)
        for depth in range(1, len(parts) + 1):
            hit = self._check_directory(parts[:depth])
            if hit is not None:
                return hit
        return None

    def _check_directory(self, parts: list[str]) -> IgnoreHit | None:
        rel_dir = "/".join(parts)
        if self._exclude is not None:
            hit = self._match_exclude(rel_dir + "/")
            if hit is not None:
                return hit
        if not self.respect_gitignore:
            return None
        decision: IgnoreHit | None = None
        # .gitignore files at the root and in every directory above this one; deeper wins.
        for depth in range(len(parts)):
            base = os.path.join(self.project_root, *parts[:depth])
            loaded = self._spec_for(os.path.join(base, ".gitignore"))
            if loaded is None:
                continue
            spec, source = loaded
            result = spec.check_file("/".join(parts[depth:]) + "/")
            if result.include is None or result.index is None:
                continue
            pattern = str(spec.patterns[result.index].pattern)
            decision = IgnoreHit(pattern, source, rel_dir + "/") if result.include else None
        return decision

    def _match_exclude(self, rel: str) -> IgnoreHit | None:
        assert self._exclude is not None
        result = self._exclude.check_file(rel.replace(os.sep, "/"))
        if result.include and result.index is not None:
            pattern = str(self._exclude.patterns[result.index].pattern)
            return IgnoreHit(pattern, EXCLUDE_SOURCE, rel)
        return None

    def _spec_for(self, path: str) -> tuple[pathspec.GitIgnoreSpec, str] | None:
        probe = self.fs.probe(path)
        if not probe.present or probe.version is None:
            self._specs.pop(path, None)
            return None
        cached = self._specs.get(path)
        if cached is None or cached[0] != probe.version:
            read = self.fs.read_text(probe, 1024 * 1024)
            if read.text is None:
                return None
            cached = (probe.version, _parse_gitignore(read.text))
            self._specs[path] = cached
        return cached[1], os.path.relpath(path, self.project_root)


def _parse_gitignore(text: str) -> pathspec.GitIgnoreSpec:
    """A spec of every line pathspec accepts; git skips a bad line (a lone ``!``, a trailing
    backslash) instead of rejecting the file, so one such line must not disable the rest or
    raise out of discovery."""
    valid = []
    for line in _gitignore_lines(text):
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:  # pathspec's pattern errors subclass ValueError in every version
            continue
        valid.append(line)
    return pathspec.GitIgnoreSpec.from_lines(valid)


def _gitignore_lines(text: str) -> list[str]:
    """Lines as git reads them: split on LF only, one CR before it dropped.

    ``str.splitlines`` would also split on form feed, U+0085, U+2028 and others, which git keeps
    as part of a pattern.
    """
    return [line.removesuffix("\r") for line in text.split("\n")]

"""Ignore-aware discovery (beyond upstream; docs/configuration.md#instructionsrespectgitignore and #instructionsexclude).

A touch must not pull instructions out of a dependency tree such as ``node_modules/``. We apply
the project's ``.gitignore`` files, nested ones included, with git's rules: deeper files take
precedence, the last matching pattern wins, and nothing below an ignored directory can be
re-included. Below every ``.gitignore`` in precedence come the repository's ``info/exclude`` and
the user's global excludes file (``git_excludes``), rooted at the project root. Only *directories* are tested against ``.gitignore``: ``AGENTS.local.md`` overlays are
usually git-ignored on purpose and must still load. ``exclude`` patterns (rooted at the project)
apply to directories and to the instruction file itself. The session's own ancestor chain is never
filtered; callers only ask about touch-discovered scopes.
"""

from __future__ import annotations

import copy
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

import attrs

from dsh_sidecar.config import InstructionSettings, os_home
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.fs import LocalFileSystem, Probe, ProbeState

from .git_excludes import GitExcludes, GitUser
from .paths import is_within, relative_path

if TYPE_CHECKING:
    # pathspec and the linear patterns built on it load with the first pattern actually parsed
    # (a .gitignore met, an exclude setting): a hook process in a directory without one never
    # pays for them.
    import pathspec

EXCLUDE_SOURCE = "settings: dsh.instructions.exclude"


def quick_probe(fs: LocalFileSystem, path: str) -> Probe:
    """``fs.quick_stat(path)`` as a ``Probe`` (``target`` None): an ignore decision needs only
    a .gitignore file's state, version and size, never its real path."""
    found = fs.quick_stat(path)
    if isinstance(found, Probe):
        return found
    return Probe(ProbeState.PRESENT, path, None, found[0], found[1])


@attrs.frozen
class IgnoreHit:
    """Why something is ignored: the pattern, the file it came from, and what it matched."""

    pattern: str
    source: str
    matched: str

    def describe(self) -> str:
        return f"{self.matched} ignored by {self.pattern!r} ({self.source})"


_Verdict = tuple[bool | None, int | None]  # pathspec's CheckResult (include, index)


@attrs.define(eq=False)
class _Spec:
    """A parsed .gitignore and its answers so far: pathspec runs every pattern's regex per
    question, and a warm touch asks the same few questions each time."""

    spec: pathspec.GitIgnoreSpec
    verdicts: dict[str, _Verdict] = attrs.field(factory=dict)

    def check(self, rel: str) -> _Verdict:
        verdict = self.verdicts.get(rel)
        if verdict is None:
            if len(self.verdicts) >= _VERDICT_LIMIT:
                self.verdicts.clear()
            result = self.spec.check_file(rel)
            verdict = self.verdicts[rel] = (result.include, result.index)
        return verdict


_VERDICT_LIMIT = 4096
GITIGNORE_MAX_BYTES = 1024 * 1024


class ParsedIgnoreFiles:
    """Parsed ``.gitignore`` files shared by every matcher of the process, by path and version.

    A large ``.gitignore`` (tens of thousands of patterns) takes seconds to compile, so each
    version of a file is parsed once, whoever asks first: the session matchers, ``dsh/scopes``,
    hover and explain all get the same parse, and a second asker of a version being parsed
    waits for that parse instead of starting its own. One version is kept per path (a new one
    replaces it), and the least recently used files go once the kept text passes ``max_bytes``
    (a parse holds about thirty times its text); the last one asked for always stays.
    """

    def __init__(self, max_bytes: int = 2 * GITIGNORE_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.parses = 0  # how many parses this cache ran (tests check "one per version")
        self._lock = threading.Lock()
        self._files: OrderedDict[str, tuple[str, _Spec, int]] = OrderedDict()
        self._parsing: dict[tuple[str, str], threading.Lock] = {}

    def get(
        self, path: str, version: str, read: Callable[[], tuple[str, str] | None]
    ) -> _Spec | None:
        """The parse of ``path`` at ``version``; ``read`` gives ``(text, version read)`` or None
        when the file cannot be read (then nothing is kept)."""
        with self._lock:
            found = self._cached(path, version)
            if found is not None:
                return found
            parsing = self._parsing.setdefault((path, version), threading.Lock())
        with parsing:
            with self._lock:
                found = self._cached(path, version)
            if found is not None:
                return found
            try:
                got = read()
                if got is None:
                    return None
                text, read_version = got
                spec = _Spec(_parse_gitignore(text))
                with self._lock:
                    self.parses += 1
                    # Kept under the version of the bytes parsed: a file changed between its
                    # probe and its read is parsed again at the next probe, never mistaken.
                    self._keep(path, read_version, spec, len(text))
                return spec
            finally:
                with self._lock:
                    self._parsing.pop((path, version), None)

    def _cached(self, path: str, version: str) -> _Spec | None:
        found = self._files.get(path)
        if found is None or found[0] != version:
            return None
        self._files.move_to_end(path)
        return found[1]

    def _keep(self, path: str, version: str, spec: _Spec, size: int) -> None:
        self._files[path] = (version, spec, size)
        self._files.move_to_end(path)
        total = sum(entry[2] for entry in self._files.values())
        while total > self.max_bytes and len(self._files) > 1:
            _, (_, _, dropped) = self._files.popitem(last=False)
            total -= dropped

    def forget(self, path: str) -> None:
        """Drop a file that is gone (its absence is what the next pass sees)."""
        with self._lock:
            self._files.pop(path, None)


PARSED_IGNORE_FILES = ParsedIgnoreFiles()
# (where a path below its directory starts in a path relative to the root, its path, its parse)
_Found = tuple[int, str, _Spec]


class _ChainState(NamedTuple):
    """Where a walk down from the root stands after one directory."""

    hit: IgnoreHit | None  # the first ignored directory so far (nothing below can come back)
    found: tuple[_Found, ...]  # the .gitignore files above the next directory, shallowest first
    base: str  # this directory's absolute path


class IgnoreMatcher:
    """Ignore decisions for one project root; ``.gitignore`` parses are cached by file version."""

    def __init__(
        self,
        project_root: str,
        settings: InstructionSettings,
        fs: LocalFileSystem,
        parsed: ParsedIgnoreFiles = PARSED_IGNORE_FILES,
        *,
        git_user: GitUser | None = None,
    ) -> None:
        self.project_root = project_root
        self.respect_gitignore = settings.respect_gitignore
        # git's other two ignore files (the repository's info/exclude, the user's global one),
        # of lower precedence than every .gitignore; ``None``: this process's user.
        self._git_excludes = GitExcludes(project_root, fs, git_user or _process_git_user())
        self.fs = fs
        self._parsed = parsed
        self._exclude = _linear_spec(settings.exclude) if settings.exclude else None
        # Inside ``one_pass``: .gitignore path -> spec (or None), rel dir -> its chain state,
        # abs dir -> check_directory's answer, abs dir -> rel dir.
        self._pass_specs: dict[str, _Spec | None] | None = None
        self._pass_dirs: dict[str, _ChainState] | None = None
        self._pass_answers: dict[str, IgnoreHit | None] | None = None
        self._pass_rels: dict[str, str] | None = None
        # Inside ``one_pass``: every .gitignore consulted and what its probe said (None once one
        # was present but unreadable, which a later pass might read differently).
        self._pass_seen: dict[str, tuple[ProbeState, str | None]] | None = None
        self._pass_stable = True

    def seen_through(self, fs: LocalFileSystem) -> IgnoreMatcher:
        """This matcher asking ``fs``, git's exclude files included. What it keeps (the exclude
        files' texts, the parsed ``.gitignore`` files) is shared; a pass's memory is the view's
        own. A kept matcher is lent this way to whoever uses it now (a projection records what
        it saw) without being changed."""
        view = copy.copy(self)
        view.fs = fs
        view._git_excludes = self._git_excludes.seen_through(fs)
        return view

    @contextmanager
    def one_pass(self) -> Iterator[None]:
        """Within the block each .gitignore is probed once and each directory decided once.

        One touch asks about every candidate of every directory between the session and the
        file, and each question walks every ancestor .gitignore: O(depth³) probes without this.
        A reconciliation pass wants one view of the ignore files anyway. Re-entrant.
        """
        if self._pass_dirs is not None:
            yield
            return
        self._pass_specs, self._pass_dirs, self._pass_answers = {}, {}, {}
        self._pass_rels, self._pass_seen, self._pass_stable = {}, {}, True
        try:
            yield
        finally:
            self._pass_specs = self._pass_dirs = self._pass_answers = None
            self._pass_rels = self._pass_seen = None

    def consulted(self) -> tuple[tuple[str, tuple[ProbeState, str | None]], ...] | None:
        """Inside ``one_pass``: the .gitignore files consulted so far with their probe states
        and versions, or None when an answer may not repeat (an unreadable .gitignore)."""
        if self._pass_seen is None or not self._pass_stable:
            return None
        return tuple(self._pass_seen.items())

    def unchanged(self, consulted: tuple[tuple[str, tuple[ProbeState, str | None]], ...]) -> bool:
        """Whether every .gitignore of ``consulted`` still probes the same: then every decision
        that depended on them is the same too (parses are keyed by version)."""
        for path, seen in consulted:
            probe = quick_probe(self.fs, path)
            if (probe.state, probe.version) != seen:
                return False
        return True

    @property
    def enabled(self) -> bool:
        return self.respect_gitignore or self._exclude is not None

    def check_candidate(self, abs_path: str) -> IgnoreHit | None:
        """The hit that keeps a touch-discovered instruction file out, or None."""
        if not self.enabled:
            return None
        hit = self.check_directory(os.path.dirname(abs_path))
        return hit if hit is not None else self.check_excluded_file(abs_path)

    def check_excluded_file(self, abs_path: str) -> IgnoreHit | None:
        """The ``exclude`` pattern matching the file itself (its directory aside), or None."""
        if self._exclude is None:
            return None
        rel = relative_path(abs_path, self.project_root)
        return None if rel.startswith("..") else self._match_exclude(rel)

    def check_directory(self, abs_dir: str) -> IgnoreHit | None:
        """The hit that ignores ``abs_dir`` or one of its ancestors below the root, or None."""
        if not self.enabled:
            return None
        answers = self._pass_answers
        if answers is None:
            return self._check_directory_chain(abs_dir)
        if abs_dir not in answers:
            answers[abs_dir] = self._check_directory_chain(abs_dir)
        return answers[abs_dir]

    def _check_directory_chain(self, abs_dir: str) -> IgnoreHit | None:
        rel = self._relative(abs_dir)
        if rel == "." or rel.startswith("..") or os.path.isabs(rel):
            return None
        # Each directory on the way is known by its path relative to the root: a leading slice
        # of ``rel``, cut rather than split and joined again (a split of a path a thousand
        # directories deep, per directory of a chain, is the square of the depth).
        memo = self._pass_dirs
        # Resume from the deepest ancestor already decided in this pass (a touch asks about a
        # directory right after its parent), so each .gitignore is looked up once per pass.
        end, state = len(rel), None
        if memo is not None:
            while end > 0 and (state := memo.get(rel[:end])) is None:
                end = max(rel.rfind(os.sep, 0, end), 0)
        if state is None:
            end, state = 0, _ChainState(None, self._exclude_files(), self.project_root)
        while end < len(rel):
            start = end + 1 if end else 0  # where the next directory's name starts
            end = rel.find(os.sep, start)
            if end == -1:
                end = len(rel)
            rel_dir = rel[:end]
            hit, found, base = state
            if hit is None:
                if self.respect_gitignore:
                    path = os.path.join(base, ".gitignore")
                    spec = self._spec_for(path)
                    if spec is not None:
                        found = (*found, (start, path, spec))
                hit = self._check_directory(rel_dir, found)
            state = _ChainState(hit, found, os.path.join(base, rel[start:end]))
            if memo is not None:
                memo[rel_dir] = state
        return state.hit

    def _relative(self, abs_dir: str) -> str:
        """``abs_dir`` relative to the project root. In a pass, a directory right below one
        asked about before is that one's relative path and its own name: a chain asks about
        each of its directories, and a scan of each whole path would cost the square of the
        depth (below the root, a plain name adds itself to the relative path, as it would to
        ``os.path.relpath``'s)."""
        rels = self._pass_rels
        if rels is None:
            return relative_path(abs_dir, self.project_root)
        parent, _, name = abs_dir.rpartition(os.sep)
        above = rels.get(parent)
        if above is None or name in ("", ".", "..") or above.startswith(".."):
            rel = relative_path(abs_dir, self.project_root)
        else:
            rel = name if above == "." else above + os.sep + name
        rels[abs_dir] = rel
        return rel

    def _exclude_files(self) -> tuple[_Found, ...]:
        """The global excludes file and info/exclude, parsed, in rising precedence: the start of
        every walk from the root, so each .gitignore found later overrides them."""
        if not self.respect_gitignore:
            return ()
        found: list[_Found] = []
        for path in self._git_excludes.files(self._probe_seen):
            spec = self._spec_for(path)
            if spec is not None:
                found.append((0, path, spec))
        return tuple(found)

    def _probe_seen(self, path: str) -> Probe:
        """A quick probe recorded among the files this pass consulted."""
        probe = quick_probe(self.fs, path)
        if self._pass_seen is not None:
            self._pass_seen[path] = (probe.state, probe.version)
        return probe

    def _check_directory(self, rel_dir: str, found: tuple[_Found, ...]) -> IgnoreHit | None:
        """The decision for ``rel_dir`` itself, given the .gitignore files of its ancestors."""
        if self._exclude is not None:
            hit = self._match_exclude(rel_dir + "/")
            if hit is not None:
                return hit
        if not self.respect_gitignore:
            return None
        decision: IgnoreHit | None = None
        # .gitignore files at the root and in every directory above this one; deeper wins.
        for below, path, spec in found:
            include, matched = spec.check(rel_dir[below:] + "/")
            if include is None or matched is None:
                continue
            decision = None
            if include:
                pattern = str(spec.spec.patterns[matched].pattern)
                decision = IgnoreHit(pattern, self._source(path), rel_dir + "/")
        return decision

    def _source(self, path: str) -> str:
        """An ignore file as a hit names it: relative to the project root inside it, ``~/…``
        in the home directory, else absolute."""
        if is_within(path, self.project_root):
            return os.path.relpath(path, self.project_root)
        user = self._git_excludes.user
        home = user.home if user is not None else ""
        if home and home != os.sep and is_within(path, home):
            return "~/" + os.path.relpath(path, home)
        return path

    def _match_exclude(self, rel: str) -> IgnoreHit | None:
        assert self._exclude is not None
        result = self._exclude.check_file(rel.replace(os.sep, "/"))
        if result.include and result.index is not None:
            pattern = str(self._exclude.patterns[result.index].pattern)
            return IgnoreHit(pattern, EXCLUDE_SOURCE, rel)
        return None

    def _spec_for(self, path: str) -> _Spec | None:
        memo = self._pass_specs
        if memo is None:
            return self._load_spec(path)
        if path not in memo:
            memo[path] = self._load_spec(path)
        return memo[path]

    def _load_spec(self, path: str) -> _Spec | None:
        probe = quick_probe(self.fs, path)
        if self._pass_seen is not None:
            self._pass_seen[path] = (probe.state, probe.version)
        if not probe.present or probe.version is None:
            self._parsed.forget(path)
            return None

        def read() -> tuple[str, str] | None:
            got = self.fs.read_text(probe, GITIGNORE_MAX_BYTES)
            if got.text is None:
                return None
            return got.text, got.version or probe.version or ""

        spec = self._parsed.get(path, probe.version, read)
        if spec is None:
            self._pass_stable = False
        return spec


def _process_git_user() -> GitUser | None:
    """This process's user, or None (no global excludes) when no home directory is known."""
    try:
        return GitUser.from_env(os.environ, os_home())
    except ConfigError:
        return None


def _parse_gitignore(text: str) -> pathspec.GitIgnoreSpec:
    """A spec of every line pathspec accepts; git skips a bad line (a lone ``!``, a trailing
    backslash) instead of rejecting the file, so one such line must not disable the rest or
    raise out of discovery. Each pattern matches in time linear in the path
    (``ignore_patterns``), so a hostile pattern cannot stall the process."""
    return _linear_spec(_gitignore_lines(text))


def _linear_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    from .ignore_patterns import linear_spec

    return linear_spec(lines, skip_bad=True)


def _gitignore_lines(text: str) -> list[str]:
    """Lines as git reads them: split on LF only, one CR before it dropped.

    ``str.splitlines`` would also split on form feed, U+0085, U+2028 and others, which git keeps
    as part of a pattern.
    """
    return [line.removesuffix("\r") for line in text.split("\n")]

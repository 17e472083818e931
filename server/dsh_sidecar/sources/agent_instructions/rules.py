"""Path-scoped rule files (``instructions.ruleSets``): which exist, what each applies to.

Three conventions put instruction files in a folder of the project root, each with a few
frontmatter keys saying which files it concerns (docs/sources.md, "Rule files"):

- ``copilot``: ``.github/instructions/**/*.instructions.md`` with ``applyTo``, one string of
  globs separated by commas (VS Code and the Copilot CLI document no list), relative to the
  project root; a file without ``applyTo`` is not applied automatically. With it,
  ``.github/copilot-instructions.md`` applies to every file (repository-wide).
- ``claude``: ``.claude/rules/**/*.md`` with ``paths``, a glob string or a YAML list; a rule
  without ``paths`` applies to every file.
- ``cursor``: ``.cursor/rules/**/*.mdc`` with ``globs`` (a string or a list) and
  ``alwaysApply``; ``alwaysApply: true`` applies it to every file, and a rule with neither is
  only attached on the model's or the user's request, which this sidecar has no way to do.

A rule that applies to every file belongs to the baseline; one with globs is ``set`` once a
touched file matches them. Each rule is its own scope (``scope_key``); its content is the file
without its frontmatter block. Frontmatter mistakes (a list where a string is documented, a
quoted boolean, an empty or runaway glob) are ``RuleProblem`` s, reported as diagnostics.

Listing is bounded (``MAX_RULE_FILES`` files, ``MAX_DEPTH`` levels) and does not enter
symlinked directories (one could loop); a symlinked rule file is read like any project file,
only when its real path is inside the project. ``RuleIndex`` keeps listings by directory version
and parses by file version, so a warm touch re-lists nothing.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Callable, Iterable
from typing import Literal

import attrs

from dsh_sidecar.fs import (
    DIRECTORY,
    REGULAR_FILE,
    LocalFileSystem,
    Probe,
    ProbeState,
    ReadFailure,
    version_of,
)
from dsh_sidecar.rule_sets import RULE_SETS, RuleSet

from .frontmatter import FrontValue, read_frontmatter
from .globs import (
    Glob,
    compile_claude_glob,
    compile_glob,
    compile_vscode_glob,
    split_patterns,
)
from .paths import SCOPE_SEPARATOR

RULES_PREFIX = "rules:"
MAX_GLOBS_PER_RULE = 100
MAX_RULE_FILES = 500
MAX_DEPTH = 12
FRONTMATTER_LINES = 200

Mode = Literal["always", "globs", "manual", "invalid"]


def scope_key(rule_set: str, rel_path: str) -> str:
    """``rules:<set>`` NUL ``<path from the project root>``. The path holds a ``/`` (a rule lives
    in a folder), which no directory scope's file name can, so the two never collide."""
    return f"{RULES_PREFIX}{rule_set}{SCOPE_SEPARATOR}{rel_path}"


def is_rule_scope(scope: str) -> bool:
    return scope.startswith(RULES_PREFIX)


def rule_scope_parts(scope: str) -> tuple[str, str]:
    """``(rule set, path from the project root)`` of a rule scope key."""
    head, _, rel = scope.partition(SCOPE_SEPARATOR)
    return head[len(RULES_PREFIX) :], rel


@attrs.frozen
class RuleProblem:
    """A frontmatter mistake: what is wrong and on which line (0-based) of the file."""

    line: int
    message: str


@attrs.frozen
class Applicability:
    """What a rule's frontmatter says it applies to."""

    mode: Mode
    globs: tuple[str, ...] = ()
    compiled: tuple[Glob, ...] = ()
    problems: tuple[RuleProblem, ...] = ()
    body_start: int = 0  # offset of the content after the frontmatter block
    listed_globs: int = 0  # how many globs the frontmatter lists, when past MAX_GLOBS_PER_RULE

    def limit_note(self) -> str | None:
        """What the glob limit left out, for scopes and hover; None when nothing."""
        if not self.listed_globs:
            return None
        return (
            f"only the first {MAX_GLOBS_PER_RULE} of its {self.listed_globs:,} globs are used "
            "(the sidecar's limit per rule)"
        )

    def matches(self, rel_path: str, base: str = "") -> bool:
        """Whether the file at ``rel_path`` from the project root ``base`` is one it applies
        to (``base`` matters only to VS Code's globs, which match the absolute path)."""
        return self.mode == "globs" and any(g.matches(rel_path, base) for g in self.compiled)

    def describe(self) -> str:
        if self.mode == "always":
            return "every file of this project"
        if self.mode == "globs":
            return "files matching " + ", ".join(f"`{g}`" for g in self.globs)
        if self.mode == "manual":
            return "no file automatically (only when attached by hand)"
        return "no file (its frontmatter is not usable)"


@attrs.frozen
class Rule:
    """One rule file of the project and what it applies to (None when it could not be read)."""

    rule_set: str
    abs_path: str
    rel_path: str  # from the project root, with "/"
    scope: str
    version: str | None
    size: int | None
    applies: Applicability | None
    failure: ReadFailure | None = None
    detail: str | None = None
    repository_wide: bool = False

    @property
    def always(self) -> bool:
        return self.applies is not None and self.applies.mode == "always"

    def matches(self, rel_path: str) -> bool:
        if self.applies is None:
            return False
        base = self.abs_path[: len(self.abs_path) - len(self.rel_path)]
        return self.applies.matches(rel_path, base)


def applicability(rule_set: RuleSet, text: str, *, repository_wide: bool = False) -> Applicability:
    """Read a rule's frontmatter: its mode, globs and mistakes."""
    start = body_start(text)
    if repository_wide:
        return Applicability("always", body_start=start)
    problems: list[RuleProblem] = []
    front = read_frontmatter(text)
    if front is None and _opens_frontmatter(text):
        problems.append(RuleProblem(0, "the frontmatter block is never closed by a --- line; "
                                       "the file is read as having no frontmatter"))  # fmt: skip
    front = front or {}
    lines = _front_lines(text)
    if rule_set.always_field is not None and rule_set.always_field in front:
        value = front[rule_set.always_field]
        if value is True:
            return Applicability("always", problems=tuple(problems), body_start=start)
        if value is not False and value is not None:
            problems.append(RuleProblem(
                lines.get(rule_set.always_field, 0),
                f"{rule_set.always_field} must be true or false (unquoted), got {value!r}; "
                "the rule is not always applied",
            ))  # fmt: skip
    field = rule_set.glob_field
    value = front.get(field)
    line = lines.get(field, 0)
    if value is None or value == "" or value == []:
        mode: Mode = rule_set.without_globs
        return Applicability(mode, problems=tuple(problems), body_start=start)
    patterns = _patterns(value, rule_set)
    if patterns is None:
        shown = "a list" if isinstance(value, list) else repr(value)
        wanted = "one string of globs separated by commas" + (
            "" if rule_set.glob_list else f" ({rule_set.agent} reads no list here)"
        )
        problems.append(RuleProblem(
            line, f"{field} must be {wanted}, got {shown}; this rule matches no file",
        ))  # fmt: skip
        return Applicability("invalid", problems=tuple(problems), body_start=start)
    listed = len(patterns) if len(patterns) > MAX_GLOBS_PER_RULE else 0
    if listed:
        problems.append(RuleProblem(
            line, f"{field} lists {len(patterns):,} globs; only the first "
            f"{MAX_GLOBS_PER_RULE} are used (a limit of this sidecar, docs/sources.md)",
        ))  # fmt: skip
        patterns = patterns[:MAX_GLOBS_PER_RULE]
    compile_one = {
        "root": compile_glob, "vscode": compile_vscode_glob, "claude": compile_claude_glob
    }[rule_set.glob_dialect]  # fmt: skip
    compiled: list[Glob] = []
    kept: list[str] = []
    for pattern in patterns:
        glob = compile_one(pattern)
        if glob is None:
            problems.append(RuleProblem(
                line, f"{field}: the glob {pattern!r} is empty or too complex (more than 512 "
                "characters or 64 brace alternatives); it matches no file",
            ))  # fmt: skip
            continue
        compiled.append(glob)
        kept.append(pattern)
    if not compiled:
        return Applicability("invalid", tuple(patterns), (), tuple(problems), start, listed)
    return Applicability("globs", tuple(kept), tuple(compiled), tuple(problems), start, listed)


def body_start(text: str) -> int:
    """Where the content starts: after a closed frontmatter block (and one line break after it),
    else 0. A leading byte order mark was already dropped by the read."""
    if not _opens_frontmatter(text):
        return 0
    offset = text.index("\n") + 1
    for count, line in enumerate(text[offset:].split("\n")):
        if count >= FRONTMATTER_LINES:
            return 0
        end = offset + len(line) + 1
        if line.rstrip("\r").strip() in ("---", "..."):
            return min(end, len(text))
        offset = end
    return 0


def body_of(text: str) -> str:
    return text[body_start(text) :]


def _opens_frontmatter(text: str) -> bool:
    first = text.split("\n", 1)[0]
    return first.rstrip("\r").strip() == "---" and "\n" in text


def _front_lines(text: str) -> dict[str, int]:
    """The line of each top-level key of the frontmatter block."""
    out: dict[str, int] = {}
    for number, line in enumerate(text.split("\n")[1:FRONTMATTER_LINES], start=1):
        if line.rstrip("\r").strip() in ("---", "..."):
            break
        key, colon, _ = line.partition(":")
        if colon and key and not key[0].isspace() and key.strip() not in out:
            out[key.strip()] = number
    return out


def _patterns(value: FrontValue, rule_set: RuleSet) -> list[str] | None:
    if isinstance(value, str):
        return split_patterns(value)
    if isinstance(value, list) and rule_set.glob_list:
        out: list[str] = []
        for item in value:
            out.extend(split_patterns(item))
        return out
    return None


# --- the index ------------------------------------------------------------------------------------


Reader = Callable[[Probe], tuple[str | None, ReadFailure | None, str | None]]


@attrs.define
class _LastListing:
    """What the last ``rules()`` met, shared by an index and every view of it."""

    over_limit: bool = False
    listed: frozenset[str] = frozenset()


class RuleIndex:
    """The rule files of one project root for the enabled rule sets, kept between passes.

    ``read`` reads one rule file the way the engine reads project files (confined to the
    project); it returns ``(text, failure, detail)``.
    """

    def __init__(
        self, project_root: str, rule_sets: Iterable[str], fs: LocalFileSystem, read: Reader
    ) -> None:
        self.project_root = project_root
        self.rule_sets = tuple(RULE_SETS[name] for name in rule_sets if name in RULE_SETS)
        self.fs = fs
        self._read = read
        self._dirs: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
        self._rules: dict[str, Rule] = {}
        self._last = _LastListing()

    def seen_through(self, fs: LocalFileSystem) -> RuleIndex:
        """This index (what it keeps is shared) asking ``fs``: a projection lends a kept index
        its own recording filesystem this way, without changing the index."""
        view = copy.copy(self)
        view.fs = fs
        return view

    @property
    def over_limit(self) -> bool:
        """Whether the last listing met more rule files than MAX_RULE_FILES: the rest are not
        read, which hover, diagnostics and explain say (never a silent cut)."""
        return self._last.over_limit

    def rules(self) -> tuple[Rule, ...]:
        """Every rule file now, in rule-set order, then by path; re-read only what changed."""
        out: list[Rule] = []
        seen: set[str] = set()
        budget = [MAX_RULE_FILES]
        for rule_set in self.rule_sets:
            for rel in rule_set.repository_files:
                rule = self._rule(rule_set, rel, repository_wide=True)
                if rule is not None:
                    out.append(rule)
                    seen.add(rule.abs_path)
            folder = os.path.join(self.project_root, *rule_set.folder.split("/"))
            for path in sorted(self._listing(folder, rule_set.suffix, 0, budget)):
                rel = os.path.relpath(path, self.project_root).replace(os.sep, "/")
                rule = self._rule(rule_set, rel)
                if rule is not None:
                    out.append(rule)
                    seen.add(rule.abs_path)
        for stale in set(self._rules) - seen:
            del self._rules[stale]
        self._last.over_limit = budget[0] < 0
        self._last.listed = frozenset(seen)
        return tuple(out)

    def beyond_limit(self, path: str) -> bool:
        """After ``rules()``: whether ``path`` is a rule file of an enabled set that was not
        read because the project has more than ``MAX_RULE_FILES`` of them."""
        if not self.over_limit or path in self._last.listed:
            return False
        rule_set = rule_set_of_path(self.project_root, path)
        return rule_set is not None and rule_set in self.rule_sets

    def _listing(self, directory: str, suffix: str, depth: int, budget: list[int]) -> list[str]:
        found = self._directory(directory)
        if found is None:
            return []
        files, subdirectories = found
        out: list[str] = []
        for name in files:
            if name.endswith(suffix):
                if budget[0] <= 0:
                    budget[0] = -1  # one more than the limit: said, not read
                    return out
                budget[0] -= 1
                out.append(os.path.join(directory, name))
        if depth + 1 < MAX_DEPTH:
            for name in subdirectories:
                if budget[0] < 0:
                    break
                out.extend(self._listing(os.path.join(directory, name), suffix, depth + 1, budget))
        return out

    def _directory(self, directory: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """``(files, subdirectories)`` of a real (not symlinked) directory, by its version."""
        try:
            st = self.fs.stat(directory)
            if not stat.S_ISDIR(st.st_mode) or os.path.islink(directory):
                self._dirs.pop(directory, None)
                return None
        except (OSError, ValueError):
            self._dirs.pop(directory, None)
            return None
        version = version_of(st)
        cached = self._dirs.get(directory)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        files: list[str] = []
        subdirectories: list[str] = []
        try:
            for entry in self.fs.list_directory(directory):
                if entry.kind == DIRECTORY:
                    subdirectories.append(entry.name)
                elif entry.kind == REGULAR_FILE:
                    files.append(entry.name)
        except (OSError, ValueError):
            return None
        self._dirs[directory] = (version, tuple(sorted(files)), tuple(sorted(subdirectories)))
        return tuple(sorted(files)), tuple(sorted(subdirectories))

    def _rule(self, rule_set: RuleSet, rel: str, *, repository_wide: bool = False) -> Rule | None:
        path = os.path.join(self.project_root, *rel.split("/"))
        found = self.fs.quick_stat(path)
        if isinstance(found, Probe):
            self._rules.pop(path, None)
            if found.state is ProbeState.ABSENT:
                return None
            return Rule(
                rule_set.name, path, rel, scope_key(rule_set.name, rel), None, None, None,
                ReadFailure.IO_ERROR, found.error, repository_wide,
            )  # fmt: skip
        version, size = found
        cached = self._rules.get(path)
        if cached is not None and cached.version == version:
            return cached
        text, failure, detail = self._read(Probe(ProbeState.PRESENT, path, None, version, size))
        applies = (
            None if text is None else applicability(rule_set, text, repository_wide=repository_wide)
        )
        rule = Rule(
            rule_set.name, path, rel, scope_key(rule_set.name, rel), version, size, applies,
            failure, detail, repository_wide,
        )  # fmt: skip
        self._rules[path] = rule
        return rule


def rule_set_of_path(project_root: str, path: str) -> RuleSet | None:
    """The convention a file belongs to by where it is (whether or not it is enabled)."""
    rel = os.path.relpath(path, project_root).replace(os.sep, "/")
    if rel.startswith("../") or rel == "..":
        return None
    for rule_set in RULE_SETS.values():
        if rel in rule_set.repository_files:
            return rule_set
        if rel.startswith(rule_set.folder + "/") and rel.endswith(rule_set.suffix):
            return rule_set
    return None

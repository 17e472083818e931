"""What one agent would load for a file, by interpreting its rules (``dsh_sidecar.agents``) over
the real tree.

The result lists every file the agent would consider, in its load order: user-global files and
the user's rule files, the directories of its start-up walk, directories on the way to the file,
path-scoped rule files, and imports right after the file importing them; then files of the file's
chain that the agent does not read, so each "why not" is visible. A size limit is applied last,
in that order. Each loaded file says when it reaches the model (``START`` or ``AFTER_READ``, as
the agent reads the file of ``Where``) and what it sends of it (``AgentFile.when``,
``AgentFile.sent_bytes``); the hooks use this to send an agent only what it lacks.

For Claude Code, Codex CLI and Gemini CLI the rules are checked against the real programs by
tests/conformance (docs/reference/agent-models.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from dsh_sidecar.agents.rules import AgentRules, RuleSet, UserGlobal
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.confinement import Confinement
from dsh_sidecar.sources.agent_instructions.discovery import ancestor_chain
from dsh_sidecar.sources.agent_instructions.paths import is_within, relative_path
from dsh_sidecar.sources.agent_instructions.rules import MAX_GLOBS_PER_RULE

from .agent_imports import frontmatter_bytes
from .frontmatter import FrontValue, read_frontmatter
from .globs import compile_claude_glob, compile_glob, compile_vscode_glob, split_patterns
from .model import LOADED_AGENT_STATES, AgentFile, LimitInfo, SourceRef
from .reading import (
    MAX_LIST_DEPTH,
    MAX_LISTED_FILES,
    FileRead,
    case_variant,
    is_regular_file,
    list_files,
    read_file,
)

USER_GLOBAL = "user-global"
PROJECT = "project"
NESTED = "nested"
RULE = "rule"
IMPORT = "import"
# When a loaded file reaches the model: with the first request of the session, or only once the
# agent has read (or, for an editor's agent, works on) the file explained.
START = "start"
AFTER_READ = "after-read"
MAX_IMPORTED_FILES = 200


@attrs.frozen
class Where:
    """Where the simulation runs: the file, the session directory, the workspace root."""

    file: str  # absolute; its directory exists and is resolved
    cwd: str  # resolved
    workspace: str  # the project root this sidecar finds for the file
    home: str
    env: Mapping[str, str]
    read_cap: int
    # Where a project file may really live (the sidecar's own trust boundary): a file under
    # ``workspace`` whose real path is elsewhere is reported, never read.
    confinement: Confinement | None = None

    @property
    def file_dir(self) -> str:
        return os.path.dirname(self.file)


@attrs.frozen
class Simulation:
    working_directory: str
    files: tuple[AgentFile, ...]
    limit: LimitInfo | None
    sources: tuple[SourceRef, ...]


@attrs.frozen
class _Top:
    """The file an import chain starts from: whose it is, and where its imports must lie."""

    user: bool  # the user's own file: its imports may lie outside the working directory
    root: str | None


@attrs.define
class _Found:
    """A file the agent considers, with what was read of it (for limits and imports)."""

    path: str
    kind: str
    state: str
    reason: str
    read: FileRead | None
    kept: int | None = None
    when: str | None = None
    inlined: list[str] = attrs.Factory(list)  # imports the agent puts in place of their @path
    folder_when: str | None = None  # a rule: when the agent reads its folder
    user: bool = False  # the user's own file (~/.claude/CLAUDE.md, a ~/.claude/rules file)


def simulate(rules: AgentRules, where: Where, fs: LocalFileSystem) -> Simulation:
    run = _Run(rules, where, fs)
    run.user_global()
    run.rule_sets(home=True)
    run.walk()
    run.root_file()
    run.nested()
    run.rule_sets(home=False)
    run.imports()
    run.empty()
    run.refused_read()
    run.not_read()
    limit = run.size_limit()
    files = tuple(run.agent_file(f) for f in run.found)
    sources = tuple(SourceRef(s.url, s.checked) for s in rules.sources)
    return Simulation(run.working, files, limit, sources)


class _Run:
    def __init__(self, rules: AgentRules, where: Where, fs: LocalFileSystem) -> None:
        self.rules = rules
        self.where = where
        self.fs = fs
        self.name = rules.name
        self.working = where.cwd if rules.working_directory == "session" else where.workspace
        self.root = self._project_root()
        self.found: list[_Found] = []
        self.seen: set[str] = set()
        self.imported = 0
        self.import_cap_said = False
        self.beyond: dict[str, _Found] = {}  # imports seen only beyond the depth limit
        self.fallback_on = self._fallback_on()

    # --- places -------------------------------------------------------------------------------

    def _project_root(self) -> str | None:
        if self.rules.working_directory == "workspace":
            return self.where.workspace
        current = self.working
        while self.rules.root_markers:
            if any(self.fs.exists(os.path.join(current, m)) for m in self.rules.root_markers):
                return current
            parent = os.path.dirname(current)
            if parent == current:
                return None
            current = parent
        return None

    def walk_dirs(self) -> list[str]:
        kind = self.rules.walk.kind
        if kind == "project-root":
            return [self.working]
        if kind == "root-to-cwd":
            return ancestor_chain(self.root, self.working) if self.root else [self.working]
        if kind == "root-parent-to-cwd":
            return self._from_root_parent()
        chain: list[str] = []
        current = self.working
        while os.path.dirname(current) != current:  # below "/", not "/" itself
            chain.append(current)
            current = os.path.dirname(current)
        return list(reversed(chain))

    def _from_root_parent(self) -> list[str]:
        """Qwen Code's upward search: from the working directory up to the directory just above
        the project root, both included; without a root, up to the directory above the home
        directory, or to the top below ``/`` when that is not on the way (the search of
        loadServerHierarchicalMemory in its 0.24.4 bundle)."""
        if self.working == self.where.home:
            return [self.working]  # started in the home directory, it looks nowhere else
        stop = os.path.dirname(self.root or self.where.home)
        chain: list[str] = []
        current = self.working
        while os.path.dirname(current) != current:  # below "/", not "/" itself
            chain.append(current)
            if current == stop:
                break
            current = os.path.dirname(current)
        return list(reversed(chain))

    def _fallback_on(self) -> bool:
        """Whether the fallback names load: none of the names that turn them off is on the
        start walk with some content (an empty CLAUDE.md does not count, as observed)."""
        fallback = self.rules.fallback
        if fallback is None:
            return False
        return self._blocker() is None

    def _blocker(self) -> str | None:
        fallback = self.rules.fallback
        if fallback is None:
            return None
        for directory in self.walk_dirs():
            for name in fallback.unless:
                read = self._read(os.path.join(directory, name))
                if read is not None and read.error is None and self._blank(read) is not True:
                    return os.path.join(directory, name)
        return None

    def walk_names(self) -> tuple[str, ...]:
        fallback = self.rules.fallback
        extra = fallback.names if fallback is not None and self.fallback_on else ()
        return (*self.rules.walk.names, *extra)

    def nested_names(self) -> tuple[str, ...]:
        fallback = self.rules.fallback
        extra = fallback.names if fallback is not None and self.fallback_on else ()
        return (*self.rules.nested.names, *extra)

    def nested_dirs(self) -> list[str]:
        """Directories strictly below the nested start, down to the file's directory."""
        nested = self.rules.nested
        start = self.working if nested.start == "cwd" else (self.root or self.working)
        target = self.where.file_dir
        rel = os.path.relpath(target, start)
        if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
            return []
        return ancestor_chain(start, target)[1:]

    def display(self, path: str) -> str:
        return display_path(path, self.where.workspace, self.where.home)

    # --- reading ------------------------------------------------------------------------------

    def _read(self, path: str) -> FileRead | None:
        inside = is_within(path, self.where.workspace)
        confined = self.where.confinement if inside else None
        return read_file(self.fs, path, self.where.read_cap, confined)

    def _named(self, directory: str, name: str) -> str:
        """The path the agent takes for ``name`` in ``directory`` (a case variant, for an agent
        that ignores case; the name's directories themselves are matched exactly)."""
        if not self.rules.names_ignore_case:
            return os.path.join(directory, name)
        head, last = os.path.split(name)
        return case_variant(self.fs, os.path.join(directory, head), last)

    def _unseen_read(self, path: str) -> FileRead | None:
        """The read of ``path`` when it is there and not considered yet. Most names a run looks
        for are absent, which one stat tells; the key costs a resolve, so it comes second."""
        read = self._read(path)
        if read is None or self._key(path) in self.seen:
            return None
        return read

    def _add(
        self,
        path: str,
        kind: str,
        state: str,
        reason: str,
        read: FileRead | None,
        when: str | None = None,
    ) -> None:
        if when is None:
            when = AFTER_READ if kind == NESTED else START
        self.found.append(_Found(path, kind, state, reason, read, when=when))
        self.seen.add(self._key(path))

    def _key(self, path: str) -> str:
        try:
            return self.fs.resolve(path)
        except (OSError, ValueError):  # a name with NUL, from a hostile import line
            return path

    def _unreadable(self, read: FileRead) -> bool:
        return read.error is not None

    def _blank(self, read: FileRead) -> bool | None:
        """Whether the agent sees only whitespace: Codex does not count a byte order mark as
        whitespace (its trim keeps it), the others do."""
        if self.rules.sent_text == "codex" and read.blank is True and read.data:
            return not read.data.decode("utf-8", "replace").strip()
        if self.rules.sent_text == "claude-code" and read.blank is False and read.complete:
            # Judged on what it sends: a file of only frontmatter or comments is empty too.
            text = sent_text(self.rules, PROJECT, read.data).decode("utf-8", "replace")
            return not text.strip().strip("\ufeff").strip()
        return read.blank

    # --- the steps ----------------------------------------------------------------------------

    def user_global(self) -> None:
        for group in self.rules.user_global:
            directory = self._global_directory(group)
            chosen: str | None = None
            for name in group.names:
                path = self._named(directory, name)
                read = self._unseen_read(path)
                if read is None:
                    continue
                if chosen is not None:
                    self._add(
                        path,
                        USER_GLOBAL,
                        "shadowed",
                        f"{chosen} comes first; {self.name} uses one file here",
                        read,
                    )
                elif self._unreadable(read):
                    self._add(path, USER_GLOBAL, "unreadable", read.error or "", read)
                elif group.pick == "first-non-empty" and read.blank:
                    self._add(
                        path,
                        USER_GLOBAL,
                        "empty",
                        f"empty; {self.name} uses the first non-empty file here",
                        read,
                    )
                else:
                    self._add(
                        path, USER_GLOBAL, "loaded", "user-global: applies to every project", read
                    )
                    if group.pick == "first-non-empty":
                        chosen = name

    def _global_directory(self, group: UserGlobal) -> str:
        value = self.where.env.get(group.env) if group.env else None
        directory = value if value and value.strip() else group.directory
        if directory == "~" or directory.startswith("~/"):
            directory = os.path.join(self.where.home, directory[2:])
        return os.path.abspath(directory)

    def walk(self) -> None:
        walk = self.rules.walk
        for directory in self.walk_dirs():
            winner: str | None = None
            for name in self.walk_names():
                path = self._named(directory, name)
                read = self._unseen_read(path)
                if read is None:
                    continue
                if winner is not None:
                    self._add(
                        path,
                        PROJECT,
                        "shadowed",
                        f"{winner} wins this directory; {self.name} loads one file per directory",
                        read,
                    )
                    continue
                if walk.pick == "first":
                    winner = name
                self._add(path, PROJECT, *self._start_state(read))

    def root_file(self) -> None:
        """The agent's own file at the project root, after the walk's files; only when a root
        marker was found (the working directory standing in for a root does not count)."""
        name = self.rules.root_file
        if name is None or self.root is None:
            return
        path = os.path.join(self.root, name)
        read = self._unseen_read(path)
        if read is not None:
            state, reason, read = self._start_state(read)
            if state == "loaded":
                reason = f"{name} at the project root, loaded when a session starts"
            self._add(path, PROJECT, state, reason, read)

    def _start_state(self, read: FileRead) -> tuple[str, str, FileRead]:
        if self._unreadable(read):
            return "unreadable", read.error or "", read
        if self.rules.skips_empty_files and self._blank(read):
            return "empty", f"empty; {self.name} skips empty files", read
        if self.rules.working_directory == "workspace":
            return "loaded", "always on for the workspace", read
        return "loaded", "loaded when a session starts", read

    def nested(self) -> None:
        nested = self.rules.nested
        for directory in self.nested_dirs():
            own = self._own_fallback_blocker(directory)
            for name in self.nested_names():
                if own and self.rules.fallback is not None and name in self.rules.fallback.names:
                    continue  # not_read() lists it, saying why
                path = self._named(directory, name)
                read = self._unseen_read(path)
                if read is None:
                    continue
                if nested.when == "never":
                    self._add(path, NESTED, "not-read", nested.why_not, read)
                elif self._unreadable(read):
                    self._add(path, NESTED, "unreadable", read.error or "", read)
                elif self._outside_project(path):
                    self._add(path, NESTED, "not-read", self._outside_project_why(path), read)
                else:
                    shown = self.display(directory)
                    self._add(
                        path,
                        NESTED,
                        "loaded",
                        f"loaded once {self.name} works on a file below {shown}/",
                        read,
                    )

    def _outside_project(self, path: str) -> bool:
        """Whether a file the agent would read after a view really lies outside the project
        (the project root, the working directory without one), for an agent that reads such
        files only inside it (Copilot CLI)."""
        if not self.rules.nested_within_project:
            return False
        return not _inside(self._key(path), self._key(self.root or self.working))

    def _outside_project_why(self, path: str) -> str:
        return (
            f"a link to {self._key(path)}, outside the project: {self.name} reads the files it "
            "adds after a view only from inside it"
        )

    def _own_fallback_blocker(self, directory: str) -> bool:
        """Whether ``directory`` holds a file whose name turns the fallback off for it alone
        (Claude Code: a directory with a Claude file of its own gets no AGENTS.md)."""
        fallback = self.rules.fallback
        if fallback is None or not fallback.per_directory:
            return False
        return any(self._read(os.path.join(directory, n)) is not None for n in fallback.unless)

    def rule_sets(self, *, home: bool) -> None:
        for rule_set in self.rules.rule_sets:
            if (rule_set.anchor == "home") != home:
                continue
            for owner in self._rule_owners(rule_set):
                folder = os.path.join(owner, rule_set.folder)
                pattern = compile_glob(rule_set.pattern)
                if pattern is None:
                    continue
                listing = list_files(folder, pattern, self.fs)
                if listing.truncated:
                    # Never a silent cut: the folder itself says the rest was not looked at.
                    self.found.append(
                        _Found(
                            folder,
                            RULE,
                            "not-read",
                            f"more than {MAX_LISTED_FILES} rule files (or {MAX_LIST_DEPTH} "
                            "levels) here: this explanation looks at the first ones only",
                            None,
                        )
                    )
                linked_out = self._link_out_of_cwd(rule_set, folder)
                for path in listing.files:
                    read = self._unseen_read(path)
                    if read is None:
                        continue
                    if linked_out or self._link_out_of_cwd(rule_set, path):
                        why = (
                            f"a link to {self._key(path)}, outside the working directory: "
                            f"{self.name} does not follow it in a session that cannot ask "
                            "(headless)"
                        )
                        self._add(path, RULE, "not-read", why, read, None)
                        continue
                    if owner in self.nested_dirs() and self._outside_project(path):
                        why = self._outside_project_why(path)
                        self._add(path, RULE, "not-read", why, read, AFTER_READ)
                        continue
                    # Read once: both the state and the time look at it.
                    front = None if self._unreadable(read) else read_frontmatter(read.text) or {}
                    if read.boundary is not None and not read.complete:
                        # The agent reads it, but whether it applies is in its frontmatter,
                        # which the sidecar's boundary keeps this explanation from reading.
                        why = "whether it applies is in its frontmatter, not read here"
                        self._add(path, RULE, "unknown", why, read, None)
                        continue
                    state, reason = self._rule_state(rule_set, owner, read, front)
                    when = self._rule_when(rule_set, owner, front)
                    self._add(path, RULE, state, reason, read, when)
                    # When the agent reads this rule folder (for its imports, see imports()).
                    nested = rule_set.anchor == "walk-and-nested" and owner in self.nested_dirs()
                    self.found[-1].folder_when = AFTER_READ if nested else START
                    self.found[-1].user = rule_set.anchor == "home"

    def _link_out_of_cwd(self, rule_set: RuleSet, path: str) -> bool:
        """Whether ``path`` is a link whose real path is outside the working directory, for an
        agent that does not follow such links in a rule folder (Claude Code, headless)."""
        if not rule_set.skips_links_out_of_cwd or not os.path.islink(path):
            return False
        return not _inside(self._key(path), self._key(self.working))

    def _rule_owners(self, rule_set: RuleSet) -> list[str]:
        anchor = rule_set.anchor
        if anchor == "home":
            return [self.where.home]
        if anchor == "cwd":
            return [self.working]
        if anchor == "project-root":
            return [self.root or self.working]
        if anchor == "walk-and-nested":
            return [*self.walk_dirs(), *self.nested_dirs()]
        base = self.root or self.working
        rel = os.path.relpath(self.where.file_dir, base)
        if rel == ".." or rel.startswith(".." + os.sep):
            return [base]
        return ancestor_chain(base, self.where.file_dir)

    def _rule_state(
        self,
        rule_set: RuleSet,
        owner: str,
        read: FileRead,
        front: dict[str, FrontValue] | None,
    ) -> tuple[str, str]:
        if front is None:
            return "unreadable", read.error or ""
        field = rule_set.glob_field
        if rule_set.always_field and front.get(rule_set.always_field) is True:
            return "loaded", f"{rule_set.always_field}: true applies it to every file"
        value = front.get(field)
        if value is None or value == "" or value == []:
            return self._without_globs(rule_set, front)
        patterns = _globs(rule_set, value)
        if patterns == []:
            return self._without_globs(rule_set, front)
        if patterns is None:
            return "unmatched", f"{field} is not a glob string; it matches nothing"
        if rule_set.glob_base == "owner":
            base = owner
        elif rule_set.glob_base == "project-root":
            base = self.root or self.working
        else:
            base = (
                self.working if self.rules.working_directory == "session" else self.where.workspace
            )
        rel = os.path.relpath(self.where.file, base)
        cut = ""
        if len(patterns) > MAX_GLOBS_PER_RULE:
            cut = f" (only the first {MAX_GLOBS_PER_RULE} of {len(patterns):,} globs are read)"
            patterns = patterns[:MAX_GLOBS_PER_RULE]
        shown = ", ".join(patterns)
        # VS Code prefixes applyTo globs with **/ and matches the absolute path, ignoring case;
        # Claude Code's paths match at any depth, a directory covering what is below it
        # (globs.py; observed with 2.1.332, and taken to hold where VS Code reads paths too).
        vscode = field == "applyTo"
        compile_one = (
            compile_glob
            if rule_set.glob_syntax == "plain"
            else compile_vscode_glob
            if vscode
            else compile_claude_glob
            if field == "paths"
            else compile_glob
        )
        if not vscode and (rel == ".." or rel.startswith(".." + os.sep)):
            return "unmatched", f"{field} {shown}: the file is outside {self.display(base)}{cut}"
        rel = rel.replace(os.sep, "/")
        for pattern in patterns:
            compiled = compile_one(pattern)
            if compiled is not None and compiled.matches(rel, base):
                return "loaded", f"{field} {pattern} matches {rel}{cut}"
        return "unmatched", f"{field} {shown} does not match {rel}{cut}"

    def _rule_when(self, rule_set: RuleSet, owner: str, front: dict[str, FrontValue] | None) -> str:
        """A rule that applies to every file arrives at start; one whose globs match the file,
        or one in a directory below the working directory, once the agent works on the file."""
        if rule_set.anchor == "walk-and-nested" and owner in self.nested_dirs():
            return AFTER_READ
        front = front or {}
        if rule_set.always_field and front.get(rule_set.always_field) is True:
            return START
        value = front.get(rule_set.glob_field)
        if value is None or value == "" or value == []:
            return START
        return START if _globs(rule_set, value) == [] else AFTER_READ

    def _sent_bytes(self, found: _Found) -> int:
        """What the agent receives for this file alone: the bytes its size limit keeps, as the
        agent turns them into text (``sent_text``), without an inlined ``@path`` (imported files
        are counted as their own rows)."""
        read = found.read
        assert read is not None
        if read.complete and read.boundary is None:
            size = len(
                sent_text(self.rules, found.kind, read.data, found.kept, found.when or START)
            )
        else:  # only the size is known (a bigger file than the read cap, or not readable here)
            size = found.kept if found.kept is not None else read.size
            if found.kind == RULE and self.rules.frontmatter == "stripped":
                size -= frontmatter_bytes(read.data)
        spec = self.rules.imports
        # Copilot CLI keeps the @path and adds the imported text after it: nothing to take off.
        if spec is not None and spec.inlined and found.inlined and spec.parser != "copilot-cli":
            # The @path itself is replaced by the imported text, which has a row of its own.
            from .agent_imports import gemini_imports, qwen_imports

            text = read.text
            scan = qwen_imports if spec.parser == "qwen-code" else gemini_imports
            for span in scan(text, os.path.dirname(found.path)):
                if self._key(span.path) in found.inlined:
                    size -= len(text[span.start : span.end].encode("utf-8"))
        return max(size, 0)

    def _without_globs(self, rule_set: RuleSet, front: dict[str, FrontValue]) -> tuple[str, str]:
        field = rule_set.glob_field
        if rule_set.without_globs == "always":
            return "loaded", f"no {field}: applies to every file"
        description = front.get("description")
        if isinstance(description, str) and description.strip():
            return "on-request", f"no {field}: the model decides from its description"
        return "manual", f"no {field} and no description: only when added to a request by hand"

    def imports(self) -> None:
        spec = self.rules.imports
        if spec is None:
            return
        out: list[_Found] = []
        for found in self.found:
            out.append(found)
            if found.read is None or self._imports_not_followed(found.path):
                continue
            if found.kind == RULE and spec.rule_imports == "never":
                continue
            folder_time = spec.rule_imports == "when-folder-read" and found.kind == RULE
            if found.state == "loaded" and not folder_time:
                top = _Top(found.kind == USER_GLOBAL or found.user, self._import_root(found))
                out.extend(self._imports_of(found, 1, spec.max_depth, top, self._branch(found)))
            elif (
                folder_time
                and found.kind == RULE
                and found.state in ("loaded", "unmatched")
                and found.folder_when is not None
            ):
                # The rule itself may wait for a matching read (or never come), but its
                # imports arrive when the agent reads the rule folder.
                top = _Top(found.kind == USER_GLOBAL or found.user, self._import_root(found))
                loaded_when = found.when
                found.when = found.folder_when
                out.extend(self._imports_of(found, 1, spec.max_depth, top, self._branch(found)))
                found.when = loaded_when
        # A file first met beyond the depth limit and loaded by a shorter way is that load only.
        dropped = {id(self.beyond[k]) for k in self.beyond if k in self.seen}
        self.found = [f for f in out if id(f) not in dropped]
        for key in [k for k in self.beyond if k not in self.seen]:
            self.seen.add(key)

    def _imports_not_followed(self, path: str) -> bool:
        """Whether the agent follows no import of the file at ``path`` (Copilot CLI: of a
        GEMINI.md, its case variants too)."""
        spec = self.rules.imports
        assert spec is not None
        name = os.path.basename(path)
        if not self.rules.names_ignore_case:
            return name in spec.not_from
        folded = os.fsencode(name).lower()  # ASCII letters only, as the agent folds them
        return any(os.fsencode(n).lower() == folded for n in spec.not_from)

    def _branch(self, found: _Found) -> frozenset[str]:
        """The files a top file's imports start as having seen: none, or the top file itself."""
        spec = self.rules.imports
        top = spec is not None and spec.top_in_branch
        return frozenset({self._key(found.path)}) if top else frozenset()

    def _import_root(self, top: _Found) -> str | None:
        """Where an import from the file ``top`` must really lie, for an agent that confines
        imports (Gemini CLI: the nearest directory holding .git above the file, the file's own
        directory without one; Copilot CLI: the session's project root, the working directory
        without one, and for the user's own file its directory)."""
        spec = self.rules.imports
        if spec is None or spec.within == "anywhere":
            return None
        if spec.within == "workspace":
            if top.kind == USER_GLOBAL:
                return self._key(os.path.dirname(top.path))
            return self._key(self.root or self.working)
        start = current = self._key(os.path.dirname(top.path))
        while True:
            if self.fs.exists(os.path.join(current, ".git")):
                return current
            parent = os.path.dirname(current)
            if parent == current:
                return start
            current = parent

    def _import_targets(self, text: str, importer_dir: str) -> list[str]:
        """The paths ``text`` imports, in the agent's own syntax, in order. An agent that
        imports per branch sees each occurrence; the others each path once."""
        spec = self.rules.imports
        assert spec is not None
        from . import agent_imports

        home = self.where.home
        if spec.parser == "claude-code":
            paths = [i.path for i in agent_imports.claude_imports(text, importer_dir, home)]
        elif spec.parser == "gemini-cli":
            paths = [i.path for i in agent_imports.gemini_imports(text, importer_dir)]
        elif spec.parser == "copilot-cli":
            from .copilot_imports import copilot_imports

            refs = copilot_imports(text, importer_dir, lambda p: is_regular_file(self.fs, p))
            paths = [i.path for i in refs]
        elif spec.parser == "qwen-code":
            paths = [i.path for i in agent_imports.qwen_imports(text, importer_dir)]
        else:
            from .imports import import_paths

            paths = import_paths(text, importer_dir, home)
        if spec.repeats == "per-branch":
            return paths[:MAX_IMPORTED_FILES]
        return list(dict.fromkeys(paths))

    def _imports_of(
        self, importer: _Found, depth: int, max_depth: int, top: _Top, branch: frozenset[str]
    ) -> list[_Found]:
        read = importer.read
        assert read is not None
        spec = self.rules.imports
        assert spec is not None
        out: list[_Found] = []
        if "@" not in read.text:
            return out  # no import can start: the parser (and its module) is not needed
        per_branch = spec.repeats == "per-branch"
        for path in self._import_targets(read.text, os.path.dirname(importer.path)):
            key = self._key(path)
            if key in branch or (not per_branch and key in self.seen):
                continue
            if self.imported >= MAX_IMPORTED_FILES:
                # A repository of files importing each other is not read without end; the
                # first import not followed says so.
                if not self.import_cap_said:
                    self.import_cap_said = True
                    out.append(
                        _Found(
                            path,
                            IMPORT,
                            "not-read",
                            f"more than {MAX_IMPORTED_FILES} imported files: this explanation "
                            "follows no more",
                            None,
                        )
                    )
                break
            target = self._read(path)
            if target is None:
                continue
            repeat = key in self.seen
            shown = self.display(importer.path)
            if depth > max_depth:
                # Not marked as seen: the agents give up on it before noting it, so a shorter
                # way to the same file later still loads it (the row below is then dropped).
                if not repeat and key not in self.beyond:
                    why = f"imported by {shown}, beyond {max_depth} import levels"
                    self.beyond[key] = _Found(path, IMPORT, "not-read", why, target)
                    out.append(self.beyond[key])
                continue
            self.seen.add(key)
            if self._unreadable(target):
                out.append(_Found(path, IMPORT, "unreadable", target.error or "", target))
                continue
            if top.root is not None and not _inside(key, top.root):
                root = self.display(top.root)
                where = root if root != "." else "the project"
                why = (
                    f"imported by {shown} from outside {where}: {self.name} "
                    "imports only from the project of the file importing"
                )
                out.append(_Found(path, IMPORT, "not-read", why, target))
                continue
            if not top.user and self._needs_approval(path):
                why = (
                    f"imported by {shown} from outside the working directory: {self.name} asks "
                    "before loading such an import, and a session that cannot ask (headless) "
                    "does not load it"
                )
                out.append(_Found(path, IMPORT, "not-read", why, target))
                continue
            reason = f"imported by {shown}"
            if repeat:
                reason += (
                    f"; sent again: {self.name} sends a file once per import path that reaches "
                    "it (its own bug; the hooks never add it)"
                )
            found = _Found(path, IMPORT, "loaded", reason, target, when=importer.when)
            self.imported += 1
            importer.inlined.append(key)
            out.append(found)
            out.extend(self._imports_of(found, depth + 1, max_depth, top, branch | {key}))
        return out

    def _needs_approval(self, path: str) -> bool:
        spec = self.rules.imports
        if spec is None or spec.outside_cwd != "asks":
            return False
        return not _inside(self._key(path), self._key(self.working))

    def empty(self) -> None:
        """Blank files the agent does not send at all (not even a header)."""
        if not self.rules.skips_empty_files:
            return
        for found in self.found:
            if found.state == "loaded" and found.read is not None and self._blank(found.read):
                found.state = "empty"
                found.reason = f"empty; {self.name} does not send empty files"

    def refused_read(self) -> None:
        """An agent whose read tool refuses a file outside its working directory (headless, it
        cannot ask) never reads the file, so nothing it would load after that read loads."""
        if self.rules.reads_outside_cwd != "refused":
            return
        if _inside(self._key(self.where.file), self._key(self.working)):
            return
        for found in self.found:
            if found.state in LOADED_AGENT_STATES and found.when == AFTER_READ:
                found.state = "not-read"
                found.reason = (
                    f"{self.name} refuses to read a file outside its working directory in a "
                    "session that cannot ask (headless), so nothing loads after that read"
                )

    def not_read(self) -> None:
        """Files of the file's chain with a name the agent knows, which it does not read."""
        fallback = self.rules.fallback.names if self.rules.fallback is not None else ()
        names = dict.fromkeys((*self.rules.walk.names, *self.rules.nested.names, *fallback))
        walked = set(self.walk_dirs())
        nested = set(self.nested_dirs())
        for directory in ancestor_chain(self.where.workspace, self.where.file_dir):
            for name in names:
                path = os.path.join(directory, name)
                read = self._unseen_read(path)
                if read is None:
                    continue
                self._add(
                    path, NESTED, "not-read", self._why_not(directory, name, walked, nested), read
                )

    def _why_not(self, directory: str, name: str, walked: set[str], nested: set[str]) -> str:
        rules = self.rules
        fallback = rules.fallback
        if (
            fallback is not None
            and name in fallback.names
            and self.fallback_on
            and directory in nested
            and self._own_fallback_blocker(directory)
        ):
            return (
                f"{self.name} reads {name} below its working directory only in a directory "
                f"without its own {' / '.join(fallback.unless)}"
            )
        if fallback is not None and name in fallback.names and not self.fallback_on:
            blocker = self._blocker()
            shown = self.display(blocker) if blocker else "a CLAUDE.md"
            return (
                f"{self.name} reads {name} only when its start walk finds no non-empty "
                f"{' / '.join(fallback.unless)}; {shown} is there ({fallback.setting} "
                f"setting at its default {fallback.default!r})"
            )
        at_root_only = rules.walk.kind == "project-root" and name in rules.walk.names
        if directory in walked:
            return f"{self.name} does not read {name} here"
        if at_root_only:
            return f"{self.name} reads {name} from the workspace root only"
        if rules.nested.when == "never":
            return rules.nested.why_not
        if directory in nested:
            return f"below its working directory {self.name} reads only " + ", ".join(
                rules.nested.names
            )
        return f"not on {self.name}'s way from its working directory to the file"

    def size_limit(self) -> LimitInfo | None:
        limit = self.rules.size_limit
        if limit is None:
            return None
        remaining = limit.bytes
        for found in self.found:
            if found.kind not in (PROJECT, NESTED) or found.state != "loaded":
                continue
            read = found.read
            assert read is not None
            if remaining <= 0:
                found.state = "dropped"
                found.reason = f"{limit.setting} ({limit.bytes:,} bytes) already used up"
                continue
            kept = min(read.size, remaining)
            # Blankness is judged on what survives the cut, as the agent judges it.
            if (
                self.rules.skips_empty_files
                and read.boundary is None
                and not read.data[:kept].decode("utf-8", "replace").strip()
            ):
                found.state = "empty"
                found.reason = f"blank within the {kept:,} bytes left; {self.name} skips it"
                continue
            if kept < read.size:
                found.state = "truncated"
                found.kept = kept
                found.reason = (
                    f"cut from {read.size:,} to {kept:,} bytes: {limit.setting} "
                    f"({limit.bytes:,}) is filled root first"
                )
            remaining -= kept
        return LimitInfo(limit.setting, limit.bytes, limit.cut)

    def agent_file(self, found: _Found) -> AgentFile:
        size = found.read.size if found.read is not None else None
        kept = found.kept
        loaded = found.state in LOADED_AGENT_STATES
        return AgentFile(
            path=found.path,
            display_path=self.display(found.path),
            kind=found.kind,
            state=found.state,
            bytes=size,
            kept_bytes=kept,
            reason=found.reason or None,
            when=found.when if loaded else None,
            # Beyond the boundary only the size is known, not what the agent makes of the text.
            sent_bytes=self._sent_bytes(found)
            if loaded and not self._unknown_text(found)
            else None,
            boundary=self._boundary(found),
        )

    def _unknown_text(self, found: _Found) -> bool:
        read = found.read
        return read is not None and read.boundary is not None and not read.complete

    def _boundary(self, found: _Found) -> str | None:
        """Why this sidecar will not read (nor send) a file the agent considers: a fact beside
        the agent's, never a reason for the agent's state."""
        read = found.read
        if read is None or read.boundary is None:
            return None
        if found.state in LOADED_AGENT_STATES and self.rules.imports is not None:
            return f"{read.boundary}: this sidecar does not read it, nor follow its imports"
        return f"{read.boundary}: this sidecar does not read it"


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def sent_text(
    rules: AgentRules, kind: str, data: bytes, kept: int | None = None, when: str = START
) -> bytes:
    """The bytes the agent sends for a file whose bytes are ``data``, ``kept`` of them kept by
    its size limit: Claude Code leaves out YAML frontmatter and comment blocks (of every file,
    not only rules); Copilot CLI drops a byte order mark and escapes quotes and angle brackets
    in the files it adds after a view; Codex decodes what its limit kept leniently, a character cut in half ending
    as U+FFFD; Gemini CLI trims each file (Qwen Code too, its rules without frontmatter and
    HTML comments); an agent stripping rule frontmatter leaves it out of rules."""
    cut = data if kept is None else data[:kept]
    if rules.sent_text == "claude-code":
        from .agent_imports import sent_claude_text

        return sent_claude_text(cut)
    if rules.sent_text == "codex":
        return cut.decode("utf-8", "replace").encode("utf-8")
    if rules.sent_text == "gemini-cli" and kind == RULE:  # Qwen Code's rules
        from .agent_imports import sent_qwen_rule_text

        return sent_qwen_rule_text(cut)
    if rules.sent_text == "gemini-cli" and kind != IMPORT:  # an import is inlined untrimmed
        # Trimmed as JavaScript trims: whitespace and a byte order mark, at both ends.
        return cut.decode("utf-8", "replace").strip().strip("\ufeff").strip().encode("utf-8")
    if rules.sent_text == "copilot-cli":
        # A leading byte order mark is not sent; the files it adds in a reminder after a view
        # have their quotes and angle brackets escaped (those of its system message are not).
        cut = cut.removeprefix(b"\xef\xbb\xbf")
        if when != AFTER_READ or kind not in (NESTED, RULE):
            return cut
        text = cut.decode("utf-8", "replace")
        for plain, escaped in (('"', "&quot;"), ("<", "&lt;"), (">", "&gt;")):
            text = text.replace(plain, escaped)
        return text.encode("utf-8")
    if kind == RULE and rules.frontmatter == "stripped":
        return cut[frontmatter_bytes(cut) :]
    return cut


def _globs(rule_set: RuleSet, value: FrontValue) -> list[str] | None:
    """The rule's globs as the agent uses them; [] when they amount to none (Claude Code: a
    trailing "/**" stands for the directory, and globs that are all "**" for no globs)."""
    patterns = _patterns(value, rule_set.glob_list)
    if patterns is None or not rule_set.all_stars_always:
        return patterns
    # Matching already reads "dir/**" as "dir" (compile_claude_glob); what is left to say here
    # is when nothing but "**" remains.
    trimmed = [p[:-3] if p.endswith("/**") else p for p in patterns]
    return [] if all(p in ("", "**") for p in trimmed) else patterns


def _patterns(value: FrontValue, glob_list: bool) -> list[str] | None:
    if isinstance(value, str):
        return split_patterns(value)
    if isinstance(value, list) and glob_list:
        out: list[str] = []
        for item in value:
            out.extend(split_patterns(item))
        return out
    return None


def display_path(path: str, project_root: str, home: str) -> str:
    """Relative to the project root inside it, ``~/…`` inside the home directory, else absolute."""
    rel = relative_path(path, project_root)
    if not (rel == ".." or rel.startswith(".." + os.sep)):
        return rel
    home_rel = relative_path(path, home)
    if not (home_rel == ".." or home_rel.startswith(".." + os.sep)):
        return "~/" + home_rel
    return path

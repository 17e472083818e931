"""Conventions a repository uses while their setting is off: what ``dsh-sidecar doctor``, the
hover on such a file and its diagnostics tell the user, naming the setting that would read it.

A repository written for another agent often carries an ``AGENTS.override.md``, ``@path``
imports, or a rule folder (``.github/instructions``, ``.claude/rules``, ``.cursor/rules``).
With the setting off the sidecar reads none of it, correctly, but silently; this module finds
such files so the silence is explained. Everything here only looks (bounded reads of the
project's own instruction files, listings of the rule folders) and never changes what loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import attrs

from dsh_sidecar.config import OVERRIDDEN_NAME, OVERRIDE_NAME, InstructionSettings
from dsh_sidecar.fs import LocalFileSystem, Probe, ProbeState, ReadFailure
from dsh_sidecar.rule_sets import RULE_SETS, RuleSet

from .confinement import Confinement
from .discovery import ancestor_chain, directory_candidates, home_display
from .import_syntax import ImportSpan, import_spans
from .paths import is_within
from .rules import RuleIndex, rule_set_of_path

IMPORTS = "instructions.imports"
OVERRIDES = "instructions.overrideFiles"
RULE_SETS_KEY = "instructions.ruleSets"
USER_GLOBAL_FILES = "instructions.userGlobalFiles"
CANDIDATES = "instructions.instructionFileCandidates"
# Instruction files of other agents, in a directory of the chain, that no default reads:
# (name, agent, the setting that reads it or None, what to do).
OTHER_AGENTS_NAMES: tuple[tuple[str, str, str | None, str], ...] = (
    ("GEMINI.md", "Gemini CLI", CANDIDATES, f'add "GEMINI.md" to {CANDIDATES}'),
    (
        ".claude/CLAUDE.md",
        "Claude Code",
        None,
        "no setting makes it apply to its project (read as it is, it governs only .claude/ "
        "itself); link or move it to CLAUDE.md",
    ),
)
# User-global files of other agents that a home directory commonly holds.
OTHER_AGENTS_FILES = (
    ("~/.claude/CLAUDE.md", "Claude Code"),
    ("~/.codex/AGENTS.md", "Codex CLI"),
    ("~/.gemini/GEMINI.md", "Gemini CLI"),
)


def other_agents_file(path: str) -> bool:
    """Whether ``path`` is named like another agent's instruction file of OTHER_AGENTS_NAMES
    (hover explains such a file even though no setting of this sidecar reads it)."""
    posix = path.replace(os.sep, "/")
    return any(posix.endswith("/" + name) for name, _, _, _ in OTHER_AGENTS_NAMES)


@attrs.frozen
class OffConvention:
    """A convention in use whose setting is off, and the files that use it."""

    setting: str
    enable: str  # how to turn it on ("set instructions.imports to true")
    agent: str
    effect: str  # what it would do
    paths: tuple[str, ...] = ()  # display paths of the files that use it

    def describe(self) -> str:
        where = f" ({', '.join(self.paths)})" if self.paths else ""
        if not self.setting:
            return f"{self.agent}'s convention {self.effect}{where}: {self.enable}"
        return f"{self.agent}'s convention {self.effect}{where}: {self.enable} to read it"

    @property
    def in_project(self) -> bool:
        """Whether the files are the repository's (not the user's home directory's)."""
        return self.setting != USER_GLOBAL_FILES


def read_confined(
    fs: LocalFileSystem, path: str, limit: int, confinement: Callable[[], Confinement]
) -> str | None:
    """The text of a project file, read only when it really lives inside the project."""
    found = fs.quick_stat(path)
    if isinstance(found, Probe):
        return None
    probe = Probe(ProbeState.PRESENT, path, None, found[0], found[1])
    read = fs.read_text(probe, limit, allowed=confinement().allows_path)
    return None if read.failure is ReadFailure.NOT_ALLOWED else read.text


def override_convention(paths: tuple[str, ...] = ()) -> OffConvention:
    return OffConvention(
        OVERRIDES,
        f"set {OVERRIDES} to true",
        "Codex",
        f"{OVERRIDE_NAME} replaces its directory's {OVERRIDDEN_NAME}",
        paths,
    )


def imports_convention(paths: tuple[str, ...] = ()) -> OffConvention:
    return OffConvention(
        IMPORTS, f"set {IMPORTS} to true", "Claude Code", "@path imports another file", paths
    )


def rule_set_convention(
    rule_set: RuleSet, paths: tuple[str, ...] = (), *, document: str | None = None
) -> OffConvention:
    """A rule set in use while off. Its folder's rules apply to the files their globs name, but a
    repository-wide file of the set (Copilot's ``.github/copilot-instructions.md``) applies to
    every file: the effect names each kind that ``paths`` (or the one ``document``, relative to
    the project root) holds."""
    files = paths if document is None else (document,)
    wide = tuple(f for f in rule_set.repository_files if f in files)
    effects = []
    if len(wide) < len(files) or not files:
        effects.append(f"{rule_set.folder} holds rules for the files they name")
    if wide:
        effects.append(f"{' and '.join(wide)} holds repository-wide instructions")
    return OffConvention(
        RULE_SETS_KEY,
        f'add "{rule_set.name}" to {RULE_SETS_KEY}',
        rule_set.agent,
        ", and ".join(effects),
        paths,
    )


def existing_imports(text: str, importer: str, home: str, fs: LocalFileSystem) -> list[ImportSpan]:
    """The ``@path`` spans of ``text`` that name an existing regular file."""
    present: dict[str, bool] = {}  # each target probed once, however often it is named
    out = []
    for span in import_spans(text, os.path.dirname(importer), home):
        if span.path not in present:
            present[span.path] = fs.probe(span.path).present
        if present[span.path]:
            out.append(span)
    return out


def document_conventions(
    path: str,
    project_root: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    home: str,
    text: str | None = None,
) -> list[OffConvention]:
    """The off conventions that the document ``path`` itself uses (``text``: its content,
    when it is an instruction file whose content the engine reads)."""
    out: list[OffConvention] = []
    name = os.path.basename(path)
    if name == OVERRIDE_NAME and OVERRIDE_NAME not in settings.directory_names:
        out.append(override_convention())
    rule_set = rule_set_of_path(project_root, path)
    if rule_set is not None and rule_set.name not in settings.rule_sets:
        out.append(rule_set_convention(rule_set, document=os.path.relpath(path, project_root)))
    if text is not None and not settings.imports:
        spans = existing_imports(text, path, home, fs)
        if spans:
            shown = tuple(dict.fromkeys(_display(s.path, project_root, home) for s in spans))
            out.append(imports_convention(shown))
    return out


def project_conventions(
    directory: str,
    project_root: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    home: str,
    confinement: Callable[[], Confinement],
    *,
    imports: bool = True,
) -> list[OffConvention]:
    """The off conventions used by the chain of ``directory`` (from the project root down) and
    the project's rule folders, then the other agents' user-global files in ``home``.

    ``imports=False`` leaves out the search for ``@path`` imports, which reads every instruction
    file of the chain: what preview, scopes and hover report on every request is the files the
    settings do not read, and the hover on an importing file names its imports itself."""
    out: list[OffConvention] = []
    chain = ancestor_chain(project_root, directory) if is_within(directory, project_root) else []
    if OVERRIDE_NAME not in settings.directory_names:
        found = tuple(
            os.path.relpath(os.path.join(d, OVERRIDE_NAME), project_root)
            for d in chain
            if fs.probe(os.path.join(d, OVERRIDE_NAME)).present
        )
        if found:
            out.append(override_convention(found))
    if imports and not settings.imports:
        users = []
        # The instruction slots from the root down to the importer's directory: the engine loads
        # each as itself, so importing one (``@AGENTS.md`` in a CLAUDE.md) leaves nothing unread
        # (imports.py, "in-chain") and is not the convention at work.
        loaded: set[str] = set()
        for each in chain:
            candidates = directory_candidates(project_root, each, settings)
            loaded.update(c.abs_path for c in candidates)
            for cand in candidates:
                text = read_confined(fs, cand.abs_path, settings.max_source_bytes, confinement)
                if text is not None and any(
                    span.path not in loaded
                    for span in existing_imports(text, cand.abs_path, home, fs)
                ):
                    users.append(cand.display_path)
        if users:
            out.append(imports_convention(tuple(users)))
    names = settings.all_candidates
    for name, agent, setting, enable in OTHER_AGENTS_NAMES:
        if name in names:
            continue
        found = tuple(
            os.path.relpath(os.path.join(d, name), project_root)
            for d in chain
            if fs.probe(os.path.join(d, name)).present
        )
        if found:
            effect = f"{name} holds a directory's instructions"
            out.append(OffConvention(setting or "", enable, agent, effect, found))
    for rule_set in RULE_SETS.values():
        if rule_set.name in settings.rule_sets:
            continue
        index = RuleIndex(project_root, (rule_set.name,), fs, lambda probe: (None, None, None))
        rules = index.rules()
        if rules:
            out.append(rule_set_convention(rule_set, tuple(r.rel_path for r in rules)))
    listed = {os.path.normpath(p) for _, p in settings.user_global_paths(home)}
    for entry, agent in OTHER_AGENTS_FILES:
        path = os.path.join(home, entry[2:])
        if path not in listed and fs.probe(path).present:
            enable = f"add {entry} to {USER_GLOBAL_FILES}"
            effect = "keeps user-global instructions in your home directory"
            out.append(OffConvention(USER_GLOBAL_FILES, enable, agent, effect, (entry,)))
    return out


def _display(path: str, project_root: str, home: str) -> str:
    if is_within(path, project_root):
        return os.path.relpath(path, project_root)
    return home_display(path, home)

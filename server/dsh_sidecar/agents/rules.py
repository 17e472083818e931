"""The vocabulary the per-agent modules use to state an agent's documented instruction rules.

Each agent module is data: one ``AgentRules`` built from these records, with the documentation
it follows and the date it was checked. ``dsh_sidecar.explain`` interprets them over a real tree.
Anything an agent's documentation leaves open is written down in ``undocumented`` together with
what the simulation does there, instead of being silently assumed.
"""

from __future__ import annotations

from typing import Literal

import attrs

CHECKED = "2026-12-03"

Pick = Literal["first", "all"]
WalkKind = Literal["root-to-cwd", "root-parent-to-cwd", "cwd-to-filesystem-root", "project-root"]
NestedWhen = Literal["working-on-file", "never"]
NestedFrom = Literal["cwd", "project-root"]
WorkingDirectory = Literal["session", "workspace"]
RuleAnchor = Literal["project-root", "cwd", "home", "each-directory", "walk-and-nested"]
WithoutGlobs = Literal["always", "description"]


@attrs.frozen
class Source:
    """A page the rules follow, when it was read, and what it establishes."""

    url: str
    note: str
    checked: str = CHECKED


@attrs.frozen
class UserGlobal:
    """Instruction files outside any project that apply to every project.

    ``directory`` may start with ``~`` (the user's home); ``env`` names an environment variable
    that replaces ``directory`` when set. ``pick`` is ``first-non-empty`` when only the first
    non-empty name counts (Codex), ``all`` when every present name loads.
    """

    directory: str
    names: tuple[str, ...]
    pick: Literal["first-non-empty", "all"] = "all"
    env: str | None = None


@attrs.frozen
class Walk:
    """The directories whose instruction files load when a session starts.

    - ``root-to-cwd``: from the project root (the nearest ancestor of the working directory
      holding a root marker) down to the working directory; the working directory alone when no
      marker is found.
    - ``root-parent-to-cwd``: as ``root-to-cwd`` but from the directory just above the project
      root; without a root marker, from the directory above the home directory when the working
      directory is below it, else from the top below ``/`` (Qwen Code's upward search).
    - ``cwd-to-filesystem-root``: the working directory and every ancestor below ``/``.
    - ``project-root``: the workspace root only.

    ``pick`` is ``first`` when the first present name wins its directory (Codex's one file per
    directory), ``all`` when every present name loads. ``names`` may hold a relative path such as
    ``.github/copilot-instructions.md``.
    """

    kind: WalkKind
    names: tuple[str, ...]
    pick: Pick = "all"


@attrs.frozen
class Nested:
    """Instruction files of directories the walk does not cover, on the way to the file.

    ``when`` is ``working-on-file`` when they load once the agent works on a file below them,
    from the directory just below ``start`` (the working directory or the project root) down to
    the file's directory; ``never`` when they do not load, for the reason ``why_not``.
    """

    names: tuple[str, ...]
    when: NestedWhen
    start: NestedFrom = "cwd"
    why_not: str = ""


@attrs.frozen
class RuleSet:
    """Path-scoped rule files: each applies when the file worked on matches its globs.

    Rule files are the files matching ``pattern`` (a glob, ``**`` for any depth) under
    ``folder`` of ``anchor``: the project root, the working directory, the home directory,
    every directory from the project root down to the file's directory (``each-directory``: a
    nested folder's rules only concern files below that directory), or every directory of the
    start walk and, after a read, each directory below the working directory on the way to the
    file (``walk-and-nested``, Claude Code). ``glob_field`` names the frontmatter key holding
    the globs; ``always_field`` a boolean key that applies the rule everywhere. Without globs a
    rule applies everywhere (``always``) or, with ``description``, only when the model asks for
    it (when it has a description) or when added by hand (when it has none). ``glob_list`` says
    whether the globs may be a YAML list; otherwise only a string (patterns separated by commas)
    is documented.
    """

    anchor: RuleAnchor
    folder: str
    pattern: str
    glob_field: str
    without_globs: WithoutGlobs
    always_field: str | None = None
    # What the globs are relative to: the working directory, the directory holding the rule
    # folder, or the project root (the working directory without one).
    glob_base: Literal["working-directory", "owner", "project-root"] = "working-directory"
    glob_list: bool = True
    # Claude Code reads a trailing "/**" as the directory itself and globs that are all "**"
    # as no globs at all (the rule applies everywhere, at start).
    all_stars_always: bool = False
    # Claude Code, headless: a rule folder, or a file in it, that is a link to somewhere
    # outside the working directory is not followed.
    skips_links_out_of_cwd: bool = False
    # "plain": the globs are matched as written, from glob_base (Qwen Code's picomatch), not by
    # the rules of the agent the field name belongs to (paths: Claude Code's, applyTo: VS Code's).
    glob_syntax: Literal["by-field", "plain"] = "by-field"


@attrs.frozen
class Imports:
    """``@path`` references inside instruction files that load the referenced file too."""

    syntax: str
    max_depth: int
    skips_code: bool
    # "asks": an import from outside the working directory needs the user's approval, so a
    # headless session does not load it (Claude Code, observed).
    outside_cwd: Literal["loaded", "asks"] = "loaded"
    # True when the imported text replaces the ``@path`` in the importing file (Gemini CLI);
    # False when the importing file is sent as written and each import as a file of its own.
    inlined: bool = False
    # Whose syntax reads the ``@`` references (explain/agent_imports.py): the agent's own, or
    # the sidecar's (agents not run against their CLI).
    parser: Literal["sidecar", "claude-code", "gemini-cli", "qwen-code", "copilot-cli"] = "sidecar"
    # "project-root": an import must really lie under the nearest directory holding .git above
    # the top file (that file's own directory without one), Gemini CLI. "workspace": under the
    # session's project root (its working directory without one), and for a user-global file
    # under that file's directory, Copilot CLI.
    within: Literal["anywhere", "project-root", "workspace"] = "anywhere"
    # "per-branch": a file already imported on another branch is imported (and sent) again, and
    # the top file itself can be imported back (Gemini CLI's bug); "once": never twice.
    repeats: Literal["once", "per-branch"] = "once"
    # "when-folder-read": a rule file's imports arrive when the agent reads the rule folder,
    # whether or not the rule itself applies yet (Claude Code); "with-rule": with the rule.
    # "never": a rule file's imports are not followed at all (Copilot CLI).
    rule_imports: Literal["with-rule", "when-folder-read", "never"] = "with-rule"
    # With "per-branch": whether the top file counts as imported from the start, so a cycle
    # back to it is not followed (Qwen Code's fork of Gemini CLI's processor).
    top_in_branch: bool = False
    # Names of loaded files whose imports the agent does not follow (Copilot CLI: GEMINI.md).
    not_from: tuple[str, ...] = ()


@attrs.frozen
class SizeLimit:
    """A byte limit and how it cuts: ``root-first`` fills it in load order, cutting the file
    that crosses it to what remains and adding nothing after it."""

    setting: str
    bytes: int
    applies_to: Literal["project"]
    cut: Literal["root-first"]


@attrs.frozen
class Verified:
    """The release of the agent whose real CLI the rules were checked against, file by file
    (tests/conformance), and the npm package it comes from."""

    version: str
    package: str


@attrs.frozen
class Fallback:
    """Names that load like the walk's own only when the start walk finds none of ``unless``:
    Claude Code's ``instructionFiles`` setting at its default reads AGENTS.md (and
    ``.claude/AGENTS.md``) in a tree without CLAUDE.md, on the walk and below it alike."""

    names: tuple[str, ...]
    unless: tuple[str, ...]
    setting: str
    default: str
    # Below the working directory, a directory holding any of ``unless`` gets none of ``names``
    # (Claude Code decides the nested fallback per directory).
    per_directory: bool = False


@attrs.frozen
class AgentRules:
    id: str
    name: str
    working_directory: WorkingDirectory
    root_markers: tuple[str, ...]
    user_global: tuple[UserGlobal, ...]
    walk: Walk
    nested: Nested
    rule_sets: tuple[RuleSet, ...]
    imports: Imports | None
    size_limit: SizeLimit | None
    skips_empty_files: bool
    order: str
    sources: tuple[Source, ...]
    undocumented: tuple[str, ...]
    verified: Verified | None = None
    frontmatter: Literal["stripped", "sent"] = "sent"
    fallback: Fallback | None = None
    # How the agent turns a file into what it sends (explain/simulate.py, sent_text): as it is;
    # Claude Code without frontmatter and comment blocks; Codex decoding a cut leniently;
    # Gemini CLI trimmed.
    # Copilot CLI escaping quotes and angle brackets in what it adds after a view.
    sent_text: Literal["as-is", "claude-code", "codex", "gemini-cli", "copilot-cli"] = "as-is"
    # "refused": the agent's read tool refuses a file outside the working directory in a
    # headless run, so nothing loads after that read (Claude Code, Gemini CLI).
    reads_outside_cwd: Literal["allowed", "refused"] = "allowed"
    # A file the agent reads at the project root after the walk, only when a root marker was
    # found (Qwen Code's .qwen/QWEN.local.md; none without one, none elsewhere).
    root_file: str | None = None
    # True when the last part of each name of ``user_global``, ``walk`` and ``nested`` is
    # matched ignoring ASCII case (Copilot CLI: agents.md, GEMINI.MD): the exact name when it is
    # a file, else the first case variant in the directory's listing order; one file per name.
    names_ignore_case: bool = False
    # True when the files it adds after a view (nested names, nested rule folders) must really
    # lie inside the project root (the working directory without one): a link out of it is not
    # read, while the start walk's files are (Copilot CLI).
    nested_within_project: bool = False

"""Cursor: project rules (``.cursor/rules/*.mdc`` with ``alwaysApply``, ``globs`` and
``description``), the root AGENTS.md, nested AGENTS.md for their own subtree, and the legacy
``.cursorrules``."""

from __future__ import annotations

from .record import AgentRecord
from .rules import AgentRules, Nested, RuleSet, Source, Walk

RULES = AgentRules(
    id="cursor",
    name="Cursor",
    working_directory="workspace",
    root_markers=(".git",),
    user_global=(),
    walk=Walk("project-root", ("AGENTS.md", ".cursorrules")),
    nested=Nested(("AGENTS.md",), "working-on-file", start="project-root"),
    rule_sets=(
        RuleSet(
            "each-directory",
            ".cursor/rules",
            "**/*.mdc",
            "globs",
            "description",
            always_field="alwaysApply",
            glob_base="owner",
        ),
    ),
    imports=None,
    size_limit=None,
    skips_empty_files=False,
    order="not documented; listed as found",
    sources=(
        Source(
            "https://www.cursor.com/docs/rules",
            "project rules, user rules, team rules and AGENTS.md; project rules are .mdc files in "
            ".cursor/rules (a plain .md there is ignored) with description, globs and "
            "alwaysApply frontmatter; an applied rule's content goes at the start of the context",
        ),
    ),
    undocumented=(
        "how a nested AGENTS.md applies is not on the rules page; simulated as Cursor staff "
        "described it on the Cursor forum: like an always-applied rule with the implicit glob "
        "<dir>/**, once the agent works with files in that subtree, the root AGENTS.md for the "
        "whole workspace",
        "the rule types (Always, Auto Attached by globs, Agent Requested by description, Manual "
        "by @rule), nested .cursor/rules folders scoped to their folder and the deprecated "
        ".cursorrules follow the earlier edition of the rules page (docs.cursor.com/context/"
        "rules), read through a translation",
        "which directory a nested .cursor/rules folder's globs are relative to is not stated; "
        "matched against the path relative to the directory holding that .cursor folder",
        "the load order is not documented",
        "no size limit is documented",
        "@file references inside rules attach files, with no documented depth; not simulated",
        "user rules and team rules live in settings and the dashboard, not in files; not simulated",
        "whether a .cursorrules file outside the workspace root is read is not stated; only the "
        "root's is simulated",
    ),
)

RECORD = AgentRecord(
    id="cursor",
    name="Cursor",
    rules=RULES,
    hooks=None,
    no_hooks="the sidecar installs and answers no hooks for it; explain models what it loads",
)

"""The rule-file conventions of other agents (GitHub Copilot, Claude Code, Cursor), as one table.

Every other place derives from it: the names ``instructions.ruleSets`` accepts (``config/checks.py``),
where each convention's files live and how their frontmatter reads (``sources/…/rules.py``), the
folders ``explain`` attributes to a convention. Pure data, at the bottom of the package.
"""

from __future__ import annotations

from typing import Literal

import attrs


@attrs.frozen
class RuleSet:
    """One convention: where its files live and how their frontmatter says what they apply to."""

    name: str
    folder: str
    suffix: str
    glob_field: str
    glob_list: bool  # whether the globs may be a YAML list
    without_globs: Literal["always", "manual"]
    always_field: str | None = None
    repository_files: tuple[str, ...] = ()  # always-on files of this convention
    agent: str = ""
    # How its globs match (globs.py): "root" from the project root, "vscode" as VS Code
    # matches applyTo, "claude" as Claude Code matches paths.
    glob_dialect: Literal["root", "vscode", "claude"] = "root"


RULE_SETS: dict[str, RuleSet] = {
    "copilot": RuleSet(
        "copilot",
        ".github/instructions",
        ".instructions.md",
        "applyTo",
        False,
        "manual",
        repository_files=(".github/copilot-instructions.md",),
        agent="GitHub Copilot",
        glob_dialect="vscode",
    ),
    "claude": RuleSet(
        "claude",
        ".claude/rules",
        ".md",
        "paths",
        True,
        "always",
        agent="Claude Code",
        glob_dialect="claude",
    ),
    "cursor": RuleSet(
        "cursor",
        ".cursor/rules",
        ".mdc",
        "globs",
        True,
        "manual",
        always_field="alwaysApply",
        agent="Cursor",
    ),
}

RULE_SET_NAMES: tuple[str, ...] = tuple(RULE_SETS)

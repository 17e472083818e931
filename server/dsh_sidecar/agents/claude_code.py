"""Anthropic Claude Code: CLAUDE.md files from the working directory up to the filesystem root,
subdirectory CLAUDE.md files once Claude reads a file below them, .claude/rules with ``paths``
globs, and ``@path`` imports up to five hops."""

from __future__ import annotations

from .rules import AgentRules, Imports, Nested, RuleSet, Source, UserGlobal, Walk

RULES = AgentRules(
    id="claude-code",
    name="Claude Code",
    working_directory="session",
    root_markers=(),
    user_global=(
        UserGlobal("/etc/claude-code", ("CLAUDE.md",)),
        UserGlobal("~/.claude", ("CLAUDE.md",)),
    ),
    walk=Walk("cwd-to-filesystem-root", ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")),
    nested=Nested(("CLAUDE.md",), "working-on-file", start="cwd"),
    rule_sets=(
        RuleSet("home", ".claude/rules", "**/*.md", "paths", "always"),
        RuleSet("cwd", ".claude/rules", "**/*.md", "paths", "always"),
    ),
    imports=Imports("@path", max_depth=5, skips_code=True),
    size_limit=None,
    skips_empty_files=False,
    order=(
        "the managed policy file, the user's ~/.claude/CLAUDE.md and rules, then each directory "
        "from the outermost down to the working directory, then a subdirectory's CLAUDE.md once "
        "Claude reads a file below it; files are concatenated, none replaces another"
    ),
    sources=(
        Source(
            "https://docs.anthropic.com/ja/docs/claude-code/memory",
            "official page (Japanese edition): reads CLAUDE.md and CLAUDE.local.md from the "
            "working directory up to, not including, /; CLAUDE.md nested below the working "
            "directory is included only when Claude reads files in that subtree; @path imports, "
            "relative or absolute, not evaluated in code spans or blocks, at most 5 hops",
        ),
        Source(
            "https://docs.claude.com/zh-CN/docs/claude-code/memory",
            "official page (Chinese edition): the managed policy file /etc/claude-code/CLAUDE.md "
            "on Linux, ./CLAUDE.md or ./.claude/CLAUDE.md, ~/.claude/CLAUDE.md, CLAUDE.local.md",
        ),
        Source(
            "https://github.com/anthropics/claude-code/issues/54955",
            "quotes code.claude.com/docs/en/memory: discovered files are concatenated, not "
            "overriding each other; within a directory CLAUDE.local.md comes after CLAUDE.md",
        ),
        Source(
            "https://github.com/anthropics/claude-code/issues/15710",
            "quotes code.claude.com/docs/en/memory: .claude/rules files scoped with a paths "
            "field apply when Claude works with matching files; without paths a rule loads "
            "unconditionally",
        ),
        Source(
            "https://dev.classmethod.jp/articles/claude-code-memory-spec",
            "quotes the official memory page: CLAUDE.md files are loaded in full regardless of "
            "length (the 200-line / 25 KB limit is MEMORY.md's)",
        ),
        Source(
            "https://github.com/BaseInfinity/claude-sdlc-harness/issues/516",
            "quotes code.claude.com/docs/en/memory, section AGENTS.md: Claude Code reads "
            "CLAUDE.md, not AGENTS.md",
        ),
    ),
    undocumented=(
        "the English page (code.claude.com/docs/en/memory) was read through the official "
        "translations and the verbatim quotations listed",
        "the order of CLAUDE.md, .claude/CLAUDE.md and .claude/rules inside one directory is not "
        "stated beyond CLAUDE.local.md coming after CLAUDE.md; listed in that order",
        "which directory paths globs are relative to is not stated; matched against the file's "
        "path relative to the working directory",
        "whether .claude/rules folders of parent directories load is not stated; only the working "
        "directory's and ~/.claude/rules are simulated",
        "for subdirectories below the working directory the pages name CLAUDE.md only; "
        ".claude/CLAUDE.md and CLAUDE.local.md there are not simulated as loaded",
        "a built-in plugin can add AGENTS.md files, but its default differs between published "
        "versions of its README, so AGENTS.md is simulated as not read",
        "whether an import from outside the project needs the user's approval is not simulated; "
        "every import found within 5 hops is listed as loaded",
    ),
)

"""Anthropic Claude Code, as release 2.1.332 behaves (tests/conformance runs it): CLAUDE.md files
from the outermost directory down to the working directory, or AGENTS.md when there is none;
the same names below the working directory once Claude reads a file there; .claude/rules of those
directories with ``paths`` globs; ``@path`` imports four hops deep."""

from __future__ import annotations

from .record import (
    PRE_TOOL_TEXT_AFTER_THE_TOOL,
    AgentRecord,
    Event,
    Hooks,
    Output,
    Payload,
    SettingsPlace,
    Tool,
)
from .rules import (
    AgentRules,
    Fallback,
    Imports,
    Nested,
    RuleSet,
    Source,
    UserGlobal,
    Verified,
    Walk,
)

CLAUDE_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")

RULES = AgentRules(
    id="claude",
    name="Claude Code",
    working_directory="session",
    root_markers=(),
    user_global=(
        UserGlobal("/etc/claude-code", ("CLAUDE.md",)),
        UserGlobal("~/.claude", ("CLAUDE.md",)),
    ),
    walk=Walk("cwd-to-filesystem-root", CLAUDE_NAMES),
    nested=Nested(CLAUDE_NAMES, "working-on-file", start="cwd"),
    rule_sets=(
        RuleSet(
            "home",
            ".claude/rules",
            "**/*.md",
            "paths",
            "always",
            all_stars_always=True,
            skips_links_out_of_cwd=True,
        ),
        RuleSet(
            "walk-and-nested",
            ".claude/rules",
            "**/*.md",
            "paths",
            "always",
            glob_base="owner",
            all_stars_always=True,
            skips_links_out_of_cwd=True,
        ),
    ),
    imports=Imports(
        "@path",
        max_depth=4,
        skips_code=True,
        outside_cwd="asks",
        parser="claude-code",
        rule_imports="when-folder-read",
    ),
    size_limit=None,
    skips_empty_files=True,
    frontmatter="stripped",
    fallback=Fallback(
        ("AGENTS.md", ".claude/AGENTS.md"),
        unless=CLAUDE_NAMES,
        setting="instructionFiles",
        default="claude-md-or-agents-md",
        per_directory=True,
    ),
    sent_text="claude-code",
    reads_outside_cwd="refused",
    verified=Verified("2.1.332", "@anthropic-ai/claude-code"),
    order=(
        "the managed policy file, ~/.claude/CLAUDE.md, ~/.claude/rules, then each directory from "
        "the outermost down to the working directory (CLAUDE.md, .claude/CLAUDE.md, "
        "CLAUDE.local.md, or AGENTS.md and .claude/AGENTS.md when none of those is found) with "
        "its .claude/rules; after Claude reads a file below the working directory, the same "
        "names and rules of each directory on the way, once; none replaces another"
    ),
    sources=(
        Source(
            "https://code.claude.com/docs/en/memory",
            "the official memory page (read in its Japanese and Chinese editions, the English one "
            "as quoted in the claude-code issue tracker and elsewhere): the managed policy file "
            "/etc/claude-code/CLAUDE.md on Linux, ./CLAUDE.md or ./.claude/CLAUDE.md, "
            "~/.claude/CLAUDE.md, CLAUDE.local.md; CLAUDE.md and CLAUDE.local.md read from the "
            "working directory up to, not including, /; CLAUDE.md nested below the working "
            "directory included only when Claude reads files in that subtree; discovered files "
            "are concatenated, not overriding each other, CLAUDE.local.md after CLAUDE.md in a "
            "directory; .claude/rules files with a paths field apply when Claude works with "
            "matching files, without paths unconditionally; CLAUDE.md files load in full "
            "whatever their length (the 200-line / 25 KB limit is MEMORY.md's); Claude Code reads "
            "CLAUDE.md, not AGENTS.md; @path imports, relative or absolute, not evaluated in code "
            "spans or blocks, at most 5 hops",
        ),
    ),
    undocumented=(
        "observed on 2.1.332 and not in the pages listed: AGENTS.md and .claude/AGENTS.md load "
        "like CLAUDE.md (above the git root too, with their imports) when the start walk finds no "
        "non-empty CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md, and nested ones then load "
        "after a read; the agent's instructionFiles setting decides this and only its default "
        "(claude-md-or-agents-md) is simulated; AGENTS.override.md is never read",
        "observed: imports are followed four hops from the instruction file (the documented "
        "'5' counts the file itself); an import from outside the working directory needs the "
        "user's approval and is simulated as not loaded (headless sessions do not load it)",
        "observed: .claude/rules of every directory of the start walk load, and those of each "
        "directory below the working directory after a read there; paths globs are matched "
        "against the file's path relative to the directory holding that .claude folder",
        "observed and in its shipped code: frontmatter is stripped from every instruction file, "
        "and comment blocks too; a file empty after that is not sent at all (nor counts as a "
        "CLAUDE.md for the AGENTS.md fallback); below the working directory a directory with a "
        "CLAUDE.md of its own gets no AGENTS.md; imports follow its own syntax (explain's "
        "agent_imports.py); a headless run refuses a read outside the working directory",
        "the managed policy file /etc/claude-code/CLAUDE.md is documented, not observed",
        "which directory ~/.claude/rules paths globs are relative to is not observed; matched "
        "against the path relative to the working directory",
    ),
)

# Claude Code 2.1.332's hook events, payload fields and tools (docs/reference/agent-clis.md,
# Hook input; docs/reference/agent-clis.md, Tools the hooks read): the file tools name one
# absolute path; Bash a shell string; Grep a file or directory in ``path`` (its ``glob`` filters
# names, it is no path); Glob a directory in ``path`` and a pattern that may start with literal
# ones. Only its file tools make it load instruction files itself.
HOOKS = Hooks(
    events=(
        Event("start", "SessionStart"),
        Event("subagent-start", "SubagentStart"),
        Event("prompt", "UserPromptSubmit"),
        Event("after-tool", "PostToolUse"),
        Event("pre-tool", "PreToolUse", installed=False, why=PRE_TOOL_TEXT_AFTER_THE_TOOL),
        Event("loaded", "InstructionsLoaded"),
    ),
    not_available=(),
    payload=Payload(subagent_id="agent_id", subagent_type="agent_type", loaded_path="file_path"),
    tools=(
        Tool("Read", "file", ("file_path",)),
        Tool("Edit", "file", ("file_path",), writes=True),
        Tool("Write", "file", ("file_path",), writes=True),
        Tool("MultiEdit", "file", ("file_path",), writes=True),
        Tool("NotebookEdit", "file", ("notebook_path",), writes=True),
        # A Bash command that only prints one file is a read of it to Claude Code (nested
        # CLAUDE.md files follow): docs/reference/agent-clis.md, Claude Code's own reads through Bash
        Tool(
            "Bash", "shell", ("command",), writes=True, loads_after=False, shell_reads="claude-code"
        ),
        Tool("Grep", "search", ("path",), loads_after=False),
        Tool("Glob", "glob", ("pattern", "path"), loads_after=False),
    ),
    settings=(
        SettingsPlace("project", ".claude/settings.json"),
        SettingsPlace("local", ".claude/settings.local.json"),
        SettingsPlace("user", ".claude/settings.json"),
    ),
    matcher="name-list",
    trust="none",
    output=Output(cap=10_000, cap_unit="utf-16-units", frames_itself=True),
    timeout_unit="seconds",
)

RECORD = AgentRecord(id="claude", name="Claude Code", rules=RULES, hooks=HOOKS)

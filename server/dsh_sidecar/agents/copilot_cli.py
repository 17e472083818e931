"""GitHub Copilot CLI: the instruction files of its working directory at start, nested ones after
it views a file below them; hooks in Claude Code's shape, answered with a top-level
``additionalContext``."""

from __future__ import annotations

from .record import (
    PRE_TOOL_TEXT_AFTER_THE_TOOL,
    AgentRecord,
    Event,
    Hooks,
    NotAvailable,
    Output,
    Payload,
    SettingsPlace,
    Tool,
)
from .rules import AgentRules, Imports, Nested, RuleSet, Source, UserGlobal, Verified, Walk

# What it loads: docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102
NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md")

RULES = AgentRules(
    id="copilot-cli",
    name="GitHub Copilot CLI",
    working_directory="session",
    root_markers=(".git",),
    user_global=(UserGlobal("~/.copilot", ("copilot-instructions.md",), env="COPILOT_HOME"),),
    # From the git root down to its working directory (its working directory alone without
    # one), every name in each directory.
    walk=Walk("root-to-cwd", NAMES),
    nested=Nested((*NAMES, ".claude/CLAUDE.md"), "working-on-file"),
    rule_sets=(
        # Claude Code's rule folders: without paths at start, with paths (relative to the git
        # root) after a view of a matching file; below the working directory after a view of a
        # file below them.
        RuleSet(
            "walk-and-nested",
            ".claude/rules",
            "**/*.md",
            "paths",
            "always",
            glob_base="project-root",
            # Globs of only "**" apply everywhere, at start (seen with paths: "**").
            all_stars_always=True,
        ),
        # Its own rule folders the same way, with applyTo globs.
        RuleSet(
            "walk-and-nested",
            ".github/instructions",
            "**/*.instructions.md",
            "applyTo",
            "always",
        ),
    ),
    # An @path is followed (not inside code) and the imported file's text added right after
    # it, for each importing file anew; not in a GEMINI.md nor in a rule file. Its own syntax
    # (explain/copilot_imports.py); only within the project (the user's file: its directory).
    imports=Imports(
        "@path",
        max_depth=8,
        skips_code=True,
        inlined=True,
        parser="copilot-cli",
        within="workspace",
        repeats="per-branch",
        rule_imports="never",
        not_from=("GEMINI.md",),
    ),
    sent_text="copilot-cli",
    size_limit=None,
    skips_empty_files=True,
    verified=Verified("1.0.102", "@github/copilot"),
    reads_outside_cwd="refused",
    # Each name's last part in any ASCII case (agents.md, GEMINI.MD, .github/Copilot-
    # Instructions.md), the exact name first: its runtime's custom_instructions_discovery looks
    # the name up, then lists the directory (docs/reference/agent-clis.md).
    names_ignore_case=True,
    # A nested file or rule that is a link out of the project is not read ("contained" reads
    # of its runtime); one on the start walk is.
    nested_within_project=True,
    order=(
        "the user's copilot-instructions.md and, from the git root down to the working "
        "directory, each directory's files and its rules without globs, in the system message "
        "at start (path-scoped rules listed there by pattern and description); a nested file, "
        "or a rule whose globs match, in a reminder after the first view of a file below it"
    ),
    sources=(
        Source(
            "https://www.npmjs.com/package/@github/copilot/v/1.0.102",
            # The runs: docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102
            "the shipped CLI, run headless against a fake model (tests/conformance): "
            "~/.copilot/copilot-instructions.md; AGENTS.md, CLAUDE.md, GEMINI.md and "
            ".github/copilot-instructions.md from the git root down to the working directory, "
            "each name's last part in any ASCII case (the exact name first); "
            ".claude/rules/**/*.md (paths) and .github/instructions/**/*.instructions.md "
            "(applyTo) of those directories; nested AGENTS.md, CLAUDE.md, .claude/CLAUDE.md, "
            "GEMINI.md, .github/copilot-instructions.md and rule folders below the working directory after a view of a file "
            "below them, not after create, edit or a shell command; @path imports eight deep, "
            "not from GEMINI.md; a view outside the working directory refused without "
            "--allow-all-paths",
        ),
    ),
    undocumented=(
        "a path-scoped rule's frontmatter description is listed in the system message at "
        "start, before the rule itself arrives; explain shows the rule only when it loads",
        "the help screen says 'in git root & cwd'; every directory between them was read too",
    ),
)

# GitHub Copilot CLI 1.0.102 runs hooks written in Claude Code's shape (its settings.json files
# and, in a trusted folder, the project's .claude/settings.json) with Claude Code's tool names
# and snake_case fields; its own format (.github/hooks) would need folder trust for every
# install, and Claude Code's shape lets one reader serve the hooks Copilot runs for Claude Code
# too (hooks/host.py). Its facts: docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102
HOOKS = Hooks(
    events=(
        Event("start", "SessionStart"),
        # Its text goes before the subagent's prompt.
        Event("subagent-start", "SubagentStart"),
        Event("after-tool", "PostToolUse"),
        Event("pre-tool", "PreToolUse", installed=False, why=PRE_TOOL_TEXT_AFTER_THE_TOOL),
    ),
    not_available=(
        NotAvailable(
            "prompt",
            "when several hooks answer UserPromptSubmit only the last one's text reaches the "
            "model, so a delivery there could be lost; pending context waits for the next tool "
            "event",
        ),
        NotAvailable("loaded", "Copilot CLI reports no event for the instruction files it loads"),
    ),
    payload=Payload(
        tool_output="tool_result",
        call_key="digest",
        subagent_id="agent_id",
        subagent_type="agent_type",
        parent_session="parent_agent_id",
        unnamed_event="SubagentStart",
    ),
    tools=(
        Tool("Read", "file", ("path",)),
        # It loads nested files after a view only, not after its own create or edit.
        Tool("Write", "file", ("path",), writes=True, loads_after=False),
        Tool("Edit", "file", ("path",), writes=True, loads_after=False),
        Tool("Bash", "shell", ("command",), writes=True, loads_after=False),
        Tool("Grep", "many-files", ("paths",), loads_after=False),
        Tool("Glob", "glob", ("pattern", "paths"), loads_after=False),
    ),
    settings=(
        SettingsPlace("project", ".github/copilot/settings.json"),
        SettingsPlace(
            "user", ".copilot/settings.json", env="COPILOT_HOME", env_replaces="directory"
        ),
    ),
    matcher="name-list",
    trust="copilot-trusted-folder",
    output=Output(cap=10_240, cap_unit="utf-16-units", frames_itself=False, shape="top-level"),
    timeout_unit="seconds",
    # Resumed (--continue), it keeps the tool results but not the SessionStart text before the
    # first prompt, so that text is given again.
    resume_drops_start_context=True,
    # It compacts with PreCompact (trigger auto or manual) and no SessionStart after; the
    # compacted history drops the SessionStart text, its own nested files and every hook text
    # before that point, and loads no nested file again.
    compact_event="PreCompact",
    compaction="event-only",
)

RECORD = AgentRecord(id="copilot-cli", name="GitHub Copilot CLI", rules=RULES, hooks=HOOKS)

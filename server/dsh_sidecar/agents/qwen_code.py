"""Qwen Code, as release 0.24.4 behaves (its shipped code read, and run headless): QWEN.md and
AGENTS.md from ``~/.qwen`` and from just above the project root down to the working directory,
all at start; nothing nested, after any tool; imports as Gemini CLI's, but with Markdown's code
(explain/qwen_markdown.py); then .qwen/QWEN.local.md at the git root, and its .qwen/rules
(found/qwen-rules.json). Its hooks are Claude Code's in shape, with its own tool names
(docs/reference/agent-clis.md, Qwen Code 0.24.4)."""

from __future__ import annotations

from .record import (
    AgentRecord,
    Event,
    Hooks,
    Output,
    Payload,
    SettingsPlace,
    Tool,
)
from .rules import AgentRules, Imports, Nested, RuleSet, Source, UserGlobal, Verified, Walk

QWEN_NAMES = ("QWEN.md", "AGENTS.md")  # its context.fileName default, in load order

RULES = AgentRules(
    id="qwen-code",
    name="Qwen Code",
    working_directory="session",
    root_markers=(".git",),
    user_global=(UserGlobal("~/.qwen", QWEN_NAMES, env="QWEN_HOME"),),
    # From the directory above the project root (an oddity of its loop) down to the working
    # directory.
    walk=Walk("root-parent-to-cwd", QWEN_NAMES),
    nested=Nested(
        QWEN_NAMES,
        "never",
        why_not="Qwen Code loads its context files once, at start; no tool loads any later",
    ),
    # Every *.md below ~/.qwen/rules, then below the project's .qwen/rules (the git root, else
    # the working directory): without paths at start, with paths once a tool names a file they
    # match, as picomatch globs from the project root (rulesDiscovery: loadRules).
    rule_sets=(
        RuleSet(
            "home",
            ".qwen/rules",
            "**/*.md",
            "paths",
            "always",
            glob_base="project-root",
            glob_syntax="plain",
        ),
        RuleSet(
            "project-root",
            ".qwen/rules",
            "**/*.md",
            "paths",
            "always",
            glob_base="project-root",
            glob_syntax="plain",
        ),
    ),
    # Read after the walk's files, at the git root only, its imports resolved from .qwen/.
    root_file=".qwen/QWEN.local.md",
    # Gemini CLI's import processor, as forked: @file.md inlined five levels deep, not from
    # code, only under the project root; a file reached twice on different branches is sent
    # twice (the set of processed files is copied per branch). Its code is Markdown's as its
    # bundled marked lexes it (a ~~~ fence or an indented block hides an @, a list does not).
    imports=Imports(
        "@file.md",
        max_depth=5,
        skips_code=True,
        inlined=True,
        parser="qwen-code",
        within="project-root",
        repeats="per-branch",
        # Its processed set starts with the top file: a cycle back to it stops there.
        top_in_branch=True,
        # Its rules are read as text: an @ in one imports nothing.
        rule_imports="never",
    ),
    # Each file trimmed before it is sent, as Gemini CLI does.
    sent_text="gemini-cli",
    size_limit=None,
    skips_empty_files=True,
    verified=Verified("0.24.4", "@qwen-code/qwen-code"),
    order=(
        "for each name, QWEN.md then AGENTS.md: ~/.qwen/NAME, then NAME in each directory from "
        "just above the project root down to the working directory; then .qwen/QWEN.local.md "
        "at the root; then ~/.qwen/rules, then the project's .qwen/rules"
    ),
    sources=(
        Source(
            "https://qwenlm.github.io/qwen-code-docs/en/users/configuration/settings/",
            "settings: context.fileName names the context files (QWEN.md by default); the "
            "shipped 0.24.4 bundle (loadServerHierarchicalMemory, "
            "getMemoryFilePathsInternalForEachDir) reads QWEN.md and AGENTS.md, ~/.qwen "
            "(QWEN_HOME) first, then each name from the directory above the one holding .git "
            "down to the working directory; files of only whitespace add nothing; checked "
            "against the real CLI by tests/conformance",
        ),
    ),
    undocumented=(
        "its upward search also reads the directory just above the project root (its loop "
        "stops after that directory), and without a root the directory above the home "
        "directory: simulated so, though the sidecar's own chain starts at the root",
        "its rules folders: a rule left empty once its frontmatter and comments are gone is "
        "listed as loaded (Qwen Code sends nothing for it), a paths string holding commas is "
        "read as several globs (Qwen Code takes it whole), a link to a file in the folder is "
        "read (Qwen Code skips links) and $QWEN_HOME/rules is not looked at (~/.qwen/rules is)",
    ),
)

# Qwen Code 0.24.4's hooks (docs/reference/agent-clis.md, Qwen Code 0.24.4): file tools name an
# absolute ``file_path`` (``notebook_edit`` a ``notebook_path``); ``run_shell_command`` runs
# ``command`` in ``directory`` when given; ``grep_search`` searches ``path`` (its ``glob`` filters
# names, it is no path); ``glob`` a ``pattern`` in ``path``; ``list_directory`` lists ``path``.
# It loads no context file after any tool, so every touch is the sidecar's to answer.
NO_TEXT = "Qwen Code 0.24.4 sends a {event} hook's text to no model request"
HOOKS = Hooks(
    events=(
        Event("start", "SessionStart"),
        Event(
            "subagent-start",
            "SubagentStart",
            installed=False,
            why=NO_TEXT.format(event="SubagentStart")
            + " (the subagent's first tool event brings its baseline instead)",
        ),
        Event("prompt", "UserPromptSubmit"),
        Event("after-tool", "PostToolUse"),
        Event("pre-tool", "PreToolUse", installed=False, why=NO_TEXT.format(event="PreToolUse")),
        Event(
            "loaded",
            "InstructionsLoaded",
            installed=False,
            why="Qwen Code reports only its start-up load, before SessionStart, which the "
            "model in rules covers; it loads nothing later",
        ),
    ),
    not_available=(),
    payload=Payload(
        subagent_id="agent_id",
        subagent_type="agent_type",
        loaded_path="file_path",
        prompt_key="prompt_id",
    ),
    tools=(
        Tool("read_file", "file", ("file_path",), loads_after=False),
        Tool("write_file", "file", ("file_path",), writes=True, loads_after=False),
        Tool("edit", "file", ("file_path",), writes=True, loads_after=False),
        Tool("notebook_edit", "file", ("notebook_path",), writes=True, loads_after=False),
        Tool(
            "run_shell_command", "shell", ("command", "directory"), writes=True, loads_after=False
        ),
        Tool("grep_search", "search", ("path",), loads_after=False),
        Tool("glob", "glob", ("pattern", "path"), loads_after=False),
        Tool("list_directory", "listing", ("path",), loads_after=False),
    ),
    settings=(
        SettingsPlace("project", ".qwen/settings.json"),
        SettingsPlace("user", ".qwen/settings.json", env="QWEN_HOME", env_replaces="directory"),
    ),
    matcher="anchored-regex",
    trust="none",
    output=Output(
        # No cap of its own; after a tool it cuts the whole tool message once output and text
        # pass about twice the tool's output limit, grep_search's 20,000 characters being the
        # lowest of the tools above: 18,000 leaves that room and some for its skill reminder.
        cap=18_000,
        cap_unit="utf-16-units",
        cap_note="none of its own; a tool message over about twice the tool's output limit is "
        "cut (grep_search: 40,000 characters with its output)",
        frames_itself=True,
    ),
    timeout_unit="milliseconds",
    resume_drops_start_context=True,
    # Compressing on its own before a model call, it keeps that call's message (the last tool
    # results with the hook's texts, or the prompt) after the summary, the session-start block
    # of its system message too, and then runs SessionStart with source compact (its text
    # replacing the block); PreCompact names the trigger (/compress by hand keeps no message).
    compact_event="PreCompact",
    compaction="start-keeps-call",
)

RECORD = AgentRecord(id="qwen-code", name="Qwen Code", rules=RULES, hooks=HOOKS)

"""Google Gemini CLI: GEMINI.md (``context.fileName``) from the global file, the workspace
directory and its parents, and just in time from the directories of files its tools access;
``@file.md`` imports up to five levels."""

from __future__ import annotations

from .record import (
    AgentRecord,
    Event,
    Hooks,
    NotAvailable,
    Output,
    Payload,
    SettingsPlace,
    Tool,
)
from .rules import AgentRules, Imports, Nested, Source, UserGlobal, Verified, Walk

RULES = AgentRules(
    id="gemini",
    name="Gemini CLI",
    working_directory="session",
    root_markers=(".git",),
    user_global=(UserGlobal("~/.gemini", ("GEMINI.md",)),),
    walk=Walk("root-to-cwd", ("GEMINI.md",)),
    nested=Nested(("GEMINI.md",), "working-on-file", start="project-root"),
    rule_sets=(),
    imports=Imports(
        "@file.md",
        max_depth=5,
        skips_code=True,
        inlined=True,
        parser="gemini-cli",
        within="project-root",
        repeats="per-branch",
    ),
    reads_outside_cwd="refused",
    sent_text="gemini-cli",
    size_limit=None,
    skips_empty_files=True,
    verified=Verified("0.61.0", "@google/gemini-cli"),
    order=(
        "the global ~/.gemini/GEMINI.md, then the workspace files, then just-in-time files found "
        "when a tool accesses a file; all concatenated"
    ),
    sources=(
        Source(
            "https://geminicli.com/docs/cli/gemini-md",
            "global ~/.gemini/GEMINI.md; GEMINI.md in the workspace directories and their parent "
            "directories; just in time, GEMINI.md in the directory a tool accesses and its "
            "ancestors up to a trusted root; context.fileName sets the name (GEMINI.md by "
            "default); @file.md imports",
        ),
        Source(
            "https://github.com/google-gemini/gemini-cli/blob/009b0d84de89b531703ad5bc9e7cda906ad3c6a1/"
            "docs/core/memport.md",
            "imports: relative and absolute paths, circular imports prevented, imports only from "
            "allowed directories, maximum depth 5 by default, @ inside code blocks and spans "
            "ignored",
        ),
        Source(
            "https://github.com/google-gemini/gemini-cli/blob/17fd386423134134f06e826f3293921757905cf2/"
            "docs/cli/gemini-md.md",
            "earlier edition of the page: the upward search runs from the working directory to "
            "the project root, identified by a .git folder",
        ),
    ),
    undocumented=(
        "the current page does not say where the upward search stops; simulated as stopping at "
        "the nearest directory holding .git, as the earlier edition said",
        "the trusted root of just-in-time files is not defined; the same project root is used",
        "context.fileName may list other names such as AGENTS.md; only the default GEMINI.md is "
        "simulated",
        "the allowed import directories are not named; in its shipped code an import must lie "
        "under the nearest directory holding .git above the importing file, and a file reached "
        "by two import paths (or the top file reached again) is sent once per path",
        "no size limit is documented",
    ),
)

# Gemini CLI 0.61.0's hooks (docs/reference/agent-clis.md, Tools the hooks read): tool paths as
# the model wrote them (often relative to the cwd); ``run_shell_command`` runs ``command`` in
# ``dir_path`` when given; ``grep_search`` searches ``dir_path`` (``include_pattern`` filters
# names, it is no path); ``glob`` a ``pattern`` in ``dir_path``; ``read_many_files`` reads
# ``include`` (paths, directories, patterns). Its own look-up of nested GEMINI.md files runs
# after the file tools, ``list_directory`` and ``read_many_files`` only.
HOOKS = Hooks(
    events=(
        Event("start", "SessionStart"),
        Event("prompt", "BeforeAgent"),
        Event("after-tool", "AfterTool"),
        Event(
            "pre-tool",
            "BeforeTool",
            installed=False,
            why="Gemini CLI never sends a BeforeTool hook's text to the model",
        ),
    ),
    not_available=(
        NotAvailable("subagent-start", "Gemini CLI 0.61.0 has no subagent hook event"),
        NotAvailable("loaded", "Gemini CLI reports no event for the context files it loads"),
    ),
    payload=Payload(
        source=("source", "trigger"),
        prompt="hook-context-stripped",
        failed="error",
        tool_use_id=("tool_use_id", "call_id"),
        call_key="digest",
    ),
    tools=(
        Tool("read_file", "file", ("file_path", "absolute_path")),
        Tool("write_file", "file", ("file_path", "absolute_path"), writes=True),
        Tool("replace", "file", ("file_path", "absolute_path"), writes=True),
        Tool("run_shell_command", "shell", ("command", "dir_path"), writes=True, loads_after=False),
        Tool("grep_search", "search", ("dir_path",), loads_after=False),
        Tool("glob", "glob", ("pattern", "dir_path"), loads_after=False),
        Tool("list_directory", "listing", ("dir_path",)),
        Tool("read_many_files", "many-files", ("paths", "include")),
    ),
    settings=(
        SettingsPlace("project", ".gemini/settings.json"),
        SettingsPlace("user", ".gemini/settings.json", env="GEMINI_CLI_HOME"),
    ),
    matcher="anchored-regex",
    trust="gemini-trusted-folder",
    output=Output(
        cap=None,
        cap_note="no cap seen: 40,000 characters arrive whole",
        frames_itself=True,
        escaping="gemini-at-references",
        escaped_at=("start",),
    ),
    timeout_unit="milliseconds",
    resume_drops_prompt_context=True,
)

RECORD = AgentRecord(id="gemini", name="Gemini CLI", rules=RULES, hooks=HOOKS)

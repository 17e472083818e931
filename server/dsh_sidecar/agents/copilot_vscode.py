"""GitHub Copilot in VS Code (the local agent with default settings): always-on files of the
workspace root, ``*.instructions.md`` files with ``applyTo`` globs, ``.claude/rules`` with
``paths``; nested AGENTS.md only behind an experimental setting."""

from __future__ import annotations

from .record import AgentRecord, Event, Hooks, NotAvailable, Output, Payload, SettingsPlace, Tool
from .rules import AgentRules, Nested, RuleSet, Source, UserGlobal, Walk

RULES = AgentRules(
    id="copilot-vscode",
    name="GitHub Copilot (VS Code)",
    working_directory="workspace",
    root_markers=(".git",),
    user_global=(UserGlobal("~/.claude", ("CLAUDE.md",)),),
    walk=Walk(
        "project-root",
        (
            ".github/copilot-instructions.md",
            "AGENTS.md",
            "CLAUDE.md",
            ".claude/CLAUDE.md",
            "CLAUDE.local.md",
        ),
    ),
    nested=Nested(
        ("AGENTS.md",),
        "never",
        why_not=(
            "VS Code reads the workspace root's AGENTS.md; nested ones are only listed to the "
            "model, as paths it may open, with the experimental chat.useNestedAgentsMdFiles "
            "setting (off by default)"
        ),
    ),
    rule_sets=(
        RuleSet(
            "home",
            ".copilot/instructions",
            "**/*.instructions.md",
            "applyTo",
            "description",
            glob_list=False,
        ),
        RuleSet("home", ".claude/rules", "**/*.md", "paths", "always"),
        RuleSet(
            "project-root",
            ".github/instructions",
            "**/*.instructions.md",
            "applyTo",
            "description",
            glob_list=False,
        ),
        RuleSet("project-root", ".claude/rules", "**/*.md", "paths", "always"),
    ),
    imports=None,
    size_limit=None,
    skips_empty_files=False,
    order="no specific order is guaranteed; listed as found",
    sources=(
        Source(
            "https://code.visualstudio.com/docs/agent-customization/custom-instructions",
            "read as microsoft/vscode-docs docs/agent-customization/custom-instructions.md at "
            "022bf1ae (approved 2026-07-29): .github/copilot-instructions.md and AGENTS.md of the "
            "workspace root always on; CLAUDE.md in the root, .claude/CLAUDE.md, "
            "~/.claude/CLAUDE.md and CLAUDE.local.md; *.instructions.md under .github/instructions "
            "(recursive) and ~/.copilot/instructions with applyTo globs relative to the workspace "
            "root, not applied automatically without applyTo; .claude/rules and ~/.claude/rules "
            "with paths, ** when omitted; no specific order guaranteed; Markdown links instead of "
            "imports",
        ),
        Source(
            "https://code.visualstudio.com/docs/agents/reference/ai-settings",
            "read as microsoft/vscode-docs docs/agents/reference/ai-settings.md at 024cb9bd: "
            "chat.useAgentsMdFile true, chat.useClaudeMdFile true, chat.useNestedAgentsMdFiles "
            "false (experimental)",
        ),
    ),
    undocumented=(
        "the workspace folder is taken to be the project root this sidecar finds",
        "no size limit is documented",
        "an instructions file without applyTo but with a description may be attached when the "
        "agent matches the description to the task; reported as on request",
        "applyTo is documented as a glob string (several separated by commas); any other value "
        "is simulated as matching nothing",
        "organization instructions and VS Code profile instructions are not files in the "
        "workspace and are not simulated",
        "Markdown links in instruction files are followed (chat.includeReferencedInstructions) "
        "with no documented depth; they are not simulated",
    ),
)

# The Claude Code hooks its local agent runs (.claude/settings.json, .claude/settings.local.json,
# ~/.claude/settings.json) with payloads of its own shape, from its documentation, not run here:
# docs/reference/agent-clis.md, Copilot in VS Code runs Claude Code's hooks
# Its tools' input names a file in ``filePath``; ``editFiles`` (the documentation's example) a
# list in ``files``. It loads no nested file itself (``nested`` above), so every touch counts.
GUEST_HOOKS = Hooks(
    events=(
        Event("start", "SessionStart"),
        Event("subagent-start", "SubagentStart"),
        Event("after-tool", "PostToolUse"),
        Event("pre-tool", "PreToolUse", installed=False, why="run only for Claude Code's hooks"),
    ),
    not_available=(
        NotAvailable("prompt", "its UserPromptSubmit takes the common output only: no text"),
        NotAvailable("loaded", "it reports no event for the instruction files it loads"),
    ),
    payload=Payload(
        event_name="hookEventName",
        session_id="sessionId",
        subagent_id="agent_id",
        subagent_type="agent_type",
    ),
    tools=(
        Tool("read_file", "file", ("filePath",)),
        Tool("create_file", "file", ("filePath",), writes=True),
        Tool("replace_string_in_file", "file", ("filePath",), writes=True),
        Tool("insert_edit_into_file", "file", ("filePath",), writes=True),
        Tool("editFiles", "many-files", ("files",), writes=True),
        Tool("run_in_terminal", "shell", ("command",), writes=True, loads_after=False),
        Tool("list_dir", "listing", ("path",), loads_after=False),
    ),
    settings=(
        SettingsPlace("project", ".claude/settings.json"),
        SettingsPlace("local", ".claude/settings.local.json"),
        SettingsPlace("user", ".claude/settings.json"),
    ),
    matcher="every-tool",
    trust="none",
    output=Output(cap=None, frames_itself=False, cap_note="none documented"),
    timeout_unit="seconds",
)

RECORD = AgentRecord(
    id="copilot-vscode",
    name="GitHub Copilot (VS Code)",
    rules=RULES,
    hooks=None,
    no_hooks=(
        "the sidecar installs no hooks for it; it runs those installed for Claude Code, and"
        " they answer it as itself"
    ),
    guest_hooks=GUEST_HOOKS,
)

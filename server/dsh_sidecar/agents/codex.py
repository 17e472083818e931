"""OpenAI Codex CLI: AGENTS.md from the project root down to the working directory, one file per
directory, under a combined 32 KiB limit filled root first."""

from __future__ import annotations

from .record import (
    ANY_TOOL,
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
from .rules import AgentRules, Nested, SizeLimit, Source, UserGlobal, Verified, Walk

NAMES = ("AGENTS.override.md", "AGENTS.md")

RULES = AgentRules(
    id="codex",
    name="Codex CLI",
    working_directory="session",
    root_markers=(".git",),
    user_global=(UserGlobal("~/.codex", NAMES, pick="first-non-empty", env="CODEX_HOME"),),
    walk=Walk("root-to-cwd", NAMES, pick="first"),
    nested=Nested(
        NAMES,
        "never",
        why_not="Codex reads from the project root down to its working directory, never below it",
    ),
    rule_sets=(),
    imports=None,
    size_limit=SizeLimit("project_doc_max_bytes", 32 * 1024, "project", "root-first"),
    skips_empty_files=True,
    sent_text="codex",
    verified=Verified("0.171.0", "@openai/codex"),
    order=(
        "the user-global file, then one file per directory from the project root down to the "
        "working directory; files nearer the working directory come later and take precedence"
    ),
    sources=(
        Source(
            "https://developers.openai.com/codex/guides/agents-md",
            "global AGENTS.override.md else AGENTS.md in CODEX_HOME (~/.codex), first non-empty; "
            "project root (typically the Git root) down to the working directory, only the "
            "working directory without a root; per directory AGENTS.override.md, then AGENTS.md, "
            "then project_doc_fallback_filenames, at most one file; concatenated root first; "
            "empty files skipped; adding stops once the combined size reaches "
            "project_doc_max_bytes (32 KiB)",
        ),
    ),
    undocumented=(
        "project_doc_fallback_filenames adds names after AGENTS.md; it is empty by default and "
        "this simulation does not read Codex's config.toml, so only the default names count",
        "the guide says Codex skips empty files but not whether an empty AGENTS.override.md lets "
        "AGENTS.md of the same directory through; simulated as in the public source: the first "
        "existing name wins the directory",
        "the guide does not say whether the user-global file counts against "
        "project_doc_max_bytes; simulated as in the public source: it does not",
        "the guide says adding stops at the limit; that the file crossing it is cut to the bytes "
        "left (at a byte boundary) and no later file is read comes from the public source "
        "(codex-rs/core/src/agents_md.rs at 0cf644af) and issue 36371",
        "that a file empty after trimming costs nothing against the limit comes from the public "
        "source",
    ),
)

# Codex CLI 0.171.0's hooks (docs/reference/agent-clis.md, Hook input): every tool call is a
# shell command (``tool_input.command``, a string or an argv list) or a patch, read for the
# files it reads and writes; it loads no instruction file after a tool (``nested`` above).
HOOKS = Hooks(
    events=(
        Event("start", "SessionStart"),
        Event("prompt", "UserPromptSubmit"),
        Event("after-tool", "PostToolUse"),
        Event("pre-tool", "PreToolUse", installed=False, why=PRE_TOOL_TEXT_AFTER_THE_TOOL),
    ),
    not_available=(
        NotAvailable(
            "subagent-start",
            "Codex CLI 0.171.0 names a SubagentStart event, but no run of the real CLI here has "
            "shown one or its payload, so a subagent's events are not modelled",
        ),
        NotAvailable("loaded", "Codex CLI reports no event for the instruction files it loads"),
    ),
    payload=Payload(tool_use_id=("tool_use_id", "call_id")),
    tools=(
        Tool(
            ANY_TOOL,
            "argv-or-patch",
            ("command", "cmd"),
            writes=True,
            patch_fields=("input", "patch"),
        ),
    ),
    settings=(
        SettingsPlace("project", ".codex/hooks.json"),
        SettingsPlace("user", ".codex/hooks.json", env="CODEX_HOME", env_replaces="directory"),
    ),
    matcher="every-tool",
    trust="codex-trusted-project",
    output=Output(cap=10_000, cap_unit="utf-8-bytes", frames_itself=False),
    timeout_unit="seconds",
)

RECORD = AgentRecord(id="codex", name="Codex CLI", rules=RULES, hooks=HOOKS)

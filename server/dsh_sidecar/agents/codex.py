"""OpenAI Codex CLI: AGENTS.md from the project root down to the working directory, one file per
directory, under a combined 32 KiB limit filled root first."""

from __future__ import annotations

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

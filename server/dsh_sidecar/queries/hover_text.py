"""Hover text: for an instruction file, its place and state in the chain; for any other file,
the instructions an agent would be told about when it touches it. Pure formatting of a scopes
report and an explanation (``queries/hover.py`` computes both in one worker call)."""

from __future__ import annotations

import os

from dsh_sidecar.explain import Explanation
from dsh_sidecar.explain.hover import code, hover_section
from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions.baseline import ChainEntry
from dsh_sidecar.sources.agent_instructions.imports import IMPORTED, ImportRecord
from dsh_sidecar.sources.agent_instructions.paths import USER_GLOBAL, split_scope
from dsh_sidecar.sources.agent_instructions.rules import MAX_RULE_FILES, Rule, is_rule_scope
from dsh_sidecar.sources.agent_instructions.usage import OffConvention

from .scopes import ScopesReport


def hover_text(
    report: ScopesReport,
    explanation: Explanation,
    path: str,
    instruction_file: bool,
    max_bytes: float,
) -> str:
    """The whole hover of ``path``: our own answer, then what the other agents would load."""
    text = instruction_file_hover(report, path, max_bytes) if instruction_file else None
    rule = report.facts.rule
    if text is None and rule is not None and rule.abs_path == path:
        text = rule_file_hover(report, rule, max_bytes)
    if text is None and report.facts.beyond_rule_limit:
        text = f"**{os.path.basename(path)}** — {rule_limit_message()}"
    if text is None and instruction_file:
        text = conventions_hover(report, path)
    if text is None:
        text = chain_hover(report, max_bytes)
    return text + "\n\n---\n\n" + hover_section(explanation)


def rule_limit_message() -> str:
    return (
        f"Not read: the project has more than {MAX_RULE_FILES} rule files "
        "(instructions.ruleSets reads the first ones, by rule set and path)"
    )


def _bytes(n: int | None) -> str:
    return f"{n:,} bytes" if n is not None else "size unknown"


def _governs(entry: ChainEntry) -> str:
    directory, _ = split_scope(entry.candidate.scope)
    if directory == USER_GLOBAL:
        return "every project (user-global)"
    if is_rule_scope(entry.candidate.scope) and entry.applies is not None:
        agent = RULE_SETS[entry.candidate.rule_set or ""].agent
        return f"{entry.applies.describe()} (a {agent} rule)"
    return (
        "the project root and everything below it"
        if directory == "."
        else f"`{directory}/` and everything below it"
    )


def entry_line(entry: ChainEntry) -> str:
    detail = _bytes(entry.bytes)
    if entry.state == "truncated" and entry.included_bytes is not None:
        detail += f", {entry.included_bytes:,} kept"
    reason = f" — {entry.reason}" if entry.reason else ""
    return f"- `{entry.candidate.display_path}`: **{entry.state}**, {detail}{reason}"


def instruction_file_hover(report: ScopesReport, path: str, max_bytes: float) -> str | None:
    entries = list(report.load.entries)
    index = next((i for i, e in enumerate(entries) if e.candidate.abs_path == path), None)
    if index is None:
        return None
    entry = entries[index]
    lines = [
        f"**{entry.candidate.display_path}** — workspace instructions for {_governs(entry)}",
        "",
        f"- Place in the chain: {index + 1} of {len(entries)} (broadest first; later files take precedence)",
        f"- State: **{entry.state}**" + (f" — {entry.reason}" if entry.reason else ""),
        f"- Size: {_bytes(entry.bytes)} against a baseline budget of {max_bytes:,.0f} bytes",
    ]
    if entry.included_bytes is not None and entry.state == "truncated":
        lines.append(f"- Rendered: {entry.included_bytes:,} bytes")
    if entry.digest:
        lines.append(f"- SHA-1: `{entry.digest}`")
    if entry.target is not None and entry.target != entry.candidate.abs_path:
        lines.append(f"- Symlink to `{entry.target}`")
    if entry.state == "outside-project":
        lines.append(
            "- Not read: list its target's directory in `instructions.allowedSymlinkTargets`"
            " to load it"
        )
    lines.extend(import_lines(entry.imports))
    lines.extend(convention_lines(_conventions(report)))
    lines.extend(["", *session_lines(report, entry.candidate.scope)])
    return "\n".join(lines)


def import_lines(records: tuple[ImportRecord, ...]) -> list[str]:
    """The file's ``@path`` imports (instructions.imports): what each added, or why not."""
    if not records:
        return []
    out = ["- Imports:"]
    for record in records:
        indent = "  " * record.depth
        if record.state == IMPORTED:
            out.append(f"{indent}- {code(record.display)}: imported, {_bytes(record.bytes)}")
        else:
            why = f" — {record.reason}" if record.reason else ""
            out.append(f"{indent}- {code(record.display)}: **{record.state}**{why}")
    return out


def convention_lines(conventions: tuple[OffConvention, ...]) -> list[str]:
    """Conventions the file uses while their setting is off, each naming that setting (or, when
    no setting reads such files, what to do instead)."""
    return [
        f"- Not read by this sidecar: {c.agent}'s convention {c.effect}"
        + (f" ({', '.join(code(p) for p in c.paths)})" if c.paths else "")
        + (
            f"; {c.enable.replace(c.setting, code(c.setting))} to read it"
            if c.setting
            else f"; {c.enable}"
        )
        for c in conventions
    ]


def _conventions(report: ScopesReport) -> tuple[OffConvention, ...]:
    """The document's own off conventions, then the chain's unread files not named already."""
    own = report.facts.conventions
    seen = {(c.setting, c.effect) for c in own}
    return own + tuple(c for c in report.not_read if (c.setting, c.effect) not in seen)


def rule_file_hover(report: ScopesReport, rule: Rule, max_bytes: float) -> str:
    """Hover on a rule file whose rule set is on: what it applies to and how it loads."""
    spec = RULE_SETS[rule.rule_set]
    lines = [f"**{rule.rel_path}** — a {spec.agent} rule (`{rule.rule_set}`)", ""]
    if rule.applies is None:
        state = (
            "outside-project"
            if rule.failure and rule.failure.value == "not-allowed"
            else (
                "oversized" if rule.failure and rule.failure.value == "oversized" else "unreadable"
            )
        )
        detail = f" — {rule.detail}" if rule.detail else ""
        lines.append(f"- State: **{state}**{detail}: not loaded")
    else:
        applies = rule.applies
        lines.append(f"- Applies to: {applies.describe()}")
        if applies.mode == "always":
            lines.append("- Loads with the baseline of every session")
        elif applies.mode == "globs":
            lines.append("- Loads when the agent or the editor touches a matching file")
        else:
            lines.append("- Never loads by itself")
        for problem in applies.problems:
            lines.append(f"- Line {problem.line + 1}: {problem.message}")
    lines.append(f"- Size: {_bytes(rule.size)} against a budget of {max_bytes:,.0f} bytes")
    lines.extend(["", *session_lines(report, rule.scope)])
    return "\n".join(lines)


def conventions_hover(report: ScopesReport, path: str) -> str | None:
    """Hover on a file the sidecar does not read because its convention is off."""
    conventions = _conventions(report)
    if not conventions:
        return None
    name = path.rsplit("/", 1)[-1]
    return "\n".join([f"**{name}** — not read by this sidecar", "", *convention_lines(conventions)])


def session_lines(report: ScopesReport, scope: str) -> list[str]:
    if not report.active:
        return ["No live agent session in this sidecar."]
    out = ["Live sessions:"]
    for session_id, changes in report.active.items():
        # Named as a person knows it; a raw id tells a reader nothing.
        label = report.labels.get(session_id, "a session")
        active = next((c for c in changes if c.scope == scope), None)
        if active is None:
            out.append(f"- {label}: not active")
        else:
            digest = f" (SHA-1 `{active.digest[:12]}`)" if active.digest else ""
            out.append(f"- {label}: active via {active.action}{digest}")
    return out


def chain_hover(report: ScopesReport, max_bytes: float) -> str:
    entries = report.load.entries
    unread = convention_lines(_conventions(report))
    if not entries:
        # Never a silent "nothing applies" over a repository whose instructions go unread.
        none = "No workspace instruction files apply here."
        return "\n".join([none, "", *unread]) if unread else none
    total = sum(e.included_bytes or 0 for e in entries if e.state in ("included", "truncated"))
    files = "1 file" if len(entries) == 1 else f"{len(entries)} files"
    lines = [
        f"**Workspace instructions for this directory** ({files}, {total:,} of {max_bytes:,.0f} budget bytes rendered)",
        "",
        *(entry_line(e) for e in entries),
        *unread,
    ]
    return "\n".join(lines)

"""Hover text: for an instruction file, its place and state in the chain; for any other file,
the instructions an agent would be told about when it touches it."""

from __future__ import annotations

from dsh_sidecar.sessions.service import ScopesReport
from dsh_sidecar.sources.agent_instructions.baseline import ChainEntry
from dsh_sidecar.sources.agent_instructions.paths import split_scope


def _bytes(n: int | None) -> str:
    return f"{n:,} bytes" if n is not None else "size unknown"


def _governs(entry: ChainEntry) -> str:
    directory, _ = split_scope(entry.candidate.scope)
    if directory == "user-global":
        return "every project (user-global)"
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
    lines.extend(["", *session_lines(report, entry.candidate.scope)])
    return "\n".join(lines)


def session_lines(report: ScopesReport, scope: str) -> list[str]:
    if not report.active:
        return ["No live agent session in this sidecar."]
    out = ["Live sessions:"]
    for session_id, changes in report.active.items():
        active = next((c for c in changes if c.scope == scope), None)
        if active is None:
            out.append(f"- `{session_id}`: not active")
        else:
            digest = f" (SHA-1 `{active.digest[:12]}`)" if active.digest else ""
            out.append(f"- `{session_id}`: active via {active.action}{digest}")
    return out


def chain_hover(report: ScopesReport, max_bytes: float) -> str:
    entries = report.load.entries
    if not entries:
        return "No workspace instruction files apply here."
    total = sum(e.included_bytes or 0 for e in entries if e.state in ("included", "truncated"))
    files = "1 file" if len(entries) == 1 else f"{len(entries)} files"
    lines = [
        f"**Workspace instructions for this directory** ({files}, {total:,} of {max_bytes:,.0f} budget bytes rendered)",
        "",
        *(entry_line(e) for e in entries),
    ]
    return "\n".join(lines)

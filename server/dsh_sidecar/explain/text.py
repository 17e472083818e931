"""``dsh-sidecar explain`` without ``--json``: one block for this sidecar, one per agent.

Each file is one line: how it arrives (for the sidecar: baseline or touch; for an agent: start or
after-read), its state, its size in bytes (for an agent, what it sends for that file; ``-`` when it
sends nothing) and its display path, then the reason. Each agent's head names the release its
model was checked against. Differences follow each agent, then the pages its rules follow.
"""

from __future__ import annotations

from .model import AgentExplanation, Explanation, json_number

SIDECAR = "dsh-sidecar"


def render_text(explanation: Explanation) -> str:
    e = explanation
    budget = json_number(e.max_bytes)
    lines = [
        f"file          {e.file}",
        f"project root  {e.project_root}",
        f"session cwd   {e.cwd}",
        "",
        f"{SIDECAR}  (byte budget {budget:,})" if budget is not None else SIDECAR,
    ]
    if not e.sidecar:
        lines.append("  no instruction files")
    for f in e.sidecar:
        via = f.via or "-"
        lines.append(_line(f"{via:<8} {f.state:<10}", f.bytes, f.display_path, f.reason))
    for agent in e.agents:
        lines.append("")
        lines.extend(_agent(agent))
    return "\n".join(lines) + "\n"


def _agent(agent: AgentExplanation) -> list[str]:
    head = f"{agent.name}  ({_verified(agent)}; working directory {agent.working_directory}"
    if agent.size_limit is not None:
        limit = agent.size_limit
        head += f"; {limit.setting} {limit.bytes:,} bytes, filled root first"
    lines = [head + ")"]
    if not agent.files:
        lines.append("  no instruction files")
    for f in agent.files:
        # The size is what the agent sends for the file: nothing for a file it does not send.
        when = f.when or "-"
        lines.append(_line(f"{when:<10} {f.state:<10}", f.sent_bytes, f.display_path, f.reason))
    for title, found in (
        (f"only {agent.name}", agent.only_agent),
        (f"only {SIDECAR}", agent.only_sidecar),
    ):
        if found:
            lines.append(f"  {title}:")
            lines.extend(f"    {d.display_path}  {d.reason}" for d in found)
    lines.extend(f"  documentation: {s.url} (checked {s.checked})" for s in agent.sources)
    if agent.undocumented:
        count = len(agent.undocumented)
        lines.append(
            f"  {count} point{'s' if count != 1 else ''} the documentation leaves open "
            "(listed by --json)"
        )
    return lines


def _verified(agent: AgentExplanation) -> str:
    if agent.verified is None:
        return "documented rules, not run against the agent"
    return f"checked against {agent.verified.package} {agent.verified.version}"


def _line(head: str, size: int | None, path: str, reason: str | None) -> str:
    shown = "-" if size is None else str(size)
    line = f"  {head} {shown:>8}  {path}"
    return f"{line}  {reason}" if reason else line

"""``dsh-sidecar explain`` without ``--json``: one block for this sidecar, one per agent.

Each file is one line: how it arrives (for the sidecar: baseline or touch; for an agent: start or
after-read), its state, its size in bytes (for an agent, what it sends for that file; ``-`` when it
sends nothing) and its display path, then the reason (and, in brackets, why this sidecar does not read a file the agent reads:
its trust boundary). Each agent's head names the release its
model was checked against, and its last line the agent's own documentation.

Every reason is printed once. An agent's block lists the files it considers, then, as
``not-read``, the sidecar's files it does not consider at all (a name it never reads); files that
share a reason share its line. The sidecar's user-global file, which no agent reads, says so on
its own line, and each agent's head names the agent's own user-global files instead. The two
sides' differences are what ``--json`` spells out (``onlyAgent``, ``onlySidecar``): here a file
the agent does not read shows its reason once, and a file only the agent sends shows the
sidecar's reason in the sidecar's block.
"""

from __future__ import annotations

from dsh_sidecar.agents import AGENTS

from .compare import USER_GLOBAL_SCOPE, user_global_files
from .model import AgentExplanation, Explanation, json_number

SIDECAR = "dsh-sidecar"


def render_text(explanation: Explanation) -> str:
    e = explanation
    budget = json_number(e.max_bytes)
    lines = [
        f"{e.file}  (project root {e.project_root}; session cwd {e.cwd})",
        f"{SIDECAR}  (byte budget {budget:,})" if budget is not None else SIDECAR,
    ]
    if not e.sidecar:
        lines.append("  no instruction files")
    # The sidecar's user-global files that no agent reads: said once, on their own lines, where
    # each agent would repeat it (each agent's head names its own user-global files instead).
    unread = {f.path for f in e.sidecar if f.scope.startswith(USER_GLOBAL_SCOPE) and e.agents}
    for agent in e.agents:
        unread &= {d.path for d in agent.only_sidecar}
    for f in e.sidecar:
        via = f.via or "-"
        reason = f.reason
        if f.path in unread:
            note = "read by no agent below (each has its own user-global files, named in its head)"
            reason = f"{reason}; {note}" if reason else note
        lines.append(_line(f"{via:<8} {f.state:<10}", f.bytes, [f.display_path], reason))
    for agent in e.agents:
        lines.extend(_agent(agent, unread))
    return "\n".join(lines) + "\n"


def _agent(agent: AgentExplanation, said: set[str]) -> list[str]:
    head = f"{agent.name}  ({_verified(agent)}; working directory {agent.working_directory}"
    if agent.size_limit is not None:
        limit = agent.size_limit
        head += f"; {limit.setting} {limit.bytes:,} bytes, filled root first"
    rules = next((r for r in AGENTS if r.id == agent.id), None)
    if said and rules is not None:
        own = user_global_files(rules)
        head += f"; user-global {', '.join(own) if own else 'none'}"
    lines = [head + ")"]
    rows: list[tuple[str, int | None, list[str], str | None]] = []
    # A file the agent sends nothing for shares its line with the others of the same state and
    # reason (one reason, printed once, naming every path).
    unsent: dict[tuple[str, str | None], list[str]] = {}

    def add(head: str, size: int | None, path: str, reason: str | None) -> None:
        if size is not None:
            rows.append((head, size, [path], reason))
            return
        shared = unsent.get((head, reason))
        if shared is None:
            shared = unsent[(head, reason)] = []
            rows.append((head, size, shared, reason))
        shared.append(path)

    for f in agent.files:
        # The size is what the agent sends for the file: nothing for a file it does not send.
        # The sidecar's boundary is said beside the agent's reason, never in its place.
        reason = f.reason
        if f.boundary is not None:
            beside = f"[dsh-sidecar: {f.boundary}]"
            reason = f"{reason} {beside}" if reason else beside
        add(f"{f.when or '-':<10} {f.state:<10}", f.sent_bytes, f.display_path, reason)
    considered = {f.path for f in agent.files}
    for d in agent.only_sidecar:
        if d.path not in considered and d.path not in said:  # a file it never looks at
            add(f"{'-':<10} {'not-read':<10}", None, d.display_path, d.reason)
    if not rows:
        lines.append("  no instruction files")
    lines.extend(_line(head, size, paths, reason) for head, size, paths, reason in rows)
    lines.append(_documentation(agent))
    return lines


def _documentation(agent: AgentExplanation) -> str:
    checked = sorted({s.checked for s in agent.sources})
    urls = " ".join(s.url for s in agent.sources)
    line = f"  documentation (checked {', '.join(checked)}): {urls}" if urls else "  documentation:"
    if agent.undocumented:
        count = len(agent.undocumented)
        line += f"; {count} point{'s' if count != 1 else ''} it leaves open (--json)"
    return line


def _verified(agent: AgentExplanation) -> str:
    if agent.verified is None:
        return "documented rules, not run against the agent"
    return f"checked against {agent.verified.package} {agent.verified.version}"


def _line(head: str, size: int | None, paths: list[str], reason: str | None) -> str:
    shown = "-" if size is None else str(size)
    line = f"  {head} {shown:>8}  {', '.join(paths)}"
    return f"{line}  {reason}" if reason else line

"""A short Markdown section for a hover: what each agent would load for this file, next to this
sidecar. The lead wires it into ``textDocument/hover``; it only formats an ``Explanation``."""

from __future__ import annotations

from .model import AgentExplanation, AgentFile, Explanation

MAX_LISTED = 3
TITLE = "**Other agents on this file**"


def hover_section(explanation: Explanation) -> str:
    """One line for this sidecar's files, then one per agent: the files it loads (a cut one with
    its kept bytes) and the files this sidecar loads that it misses."""
    lines = [TITLE, ""]
    mine = [code(f.display_path) for f in explanation.sidecar if f.loaded]
    lines.append("- **dsh-sidecar**: " + (_listed(mine) if mine else "no instruction files"))
    for agent in explanation.agents:
        lines.append(_agent_line(agent))
    return "\n".join(lines)


def _agent_line(agent: AgentExplanation) -> str:
    loaded = [_loaded(f) for f in agent.loaded]
    text = f"- **{agent.name}**: " + (_listed(loaded) if loaded else "no instruction files")
    if agent.only_sidecar:
        text += "; misses " + _listed([code(d.display_path) for d in agent.only_sidecar])
    return text


def _loaded(found: AgentFile) -> str:
    shown = code(found.display_path)
    if found.state == "truncated" and found.kept_bytes is not None and found.bytes is not None:
        return f"{shown} (cut to {found.kept_bytes:,} of {found.bytes:,} bytes)"
    return shown


def _listed(items: list[str]) -> str:
    if len(items) <= MAX_LISTED:
        return ", ".join(items)
    return ", ".join(items[:MAX_LISTED]) + f" and {len(items) - MAX_LISTED} more"


def code(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    longest = 0
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"

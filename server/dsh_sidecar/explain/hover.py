"""A short Markdown section for a hover: what each agent would load for this file, next to this
sidecar. The lead wires it into ``textDocument/hover``; it only formats an ``Explanation``."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from .model import AgentExplanation, AgentFile, Explanation

T = TypeVar("T")
MAX_LISTED = 3
TITLE = "**Other agents on this file**"
_BACKTICKS = re.compile("`+")  # one class, nothing after it: linear on any display path


def hover_section(explanation: Explanation) -> str:
    """One line for this sidecar's files, then one per agent: the files it loads (a cut one with
    its kept bytes) and the files this sidecar loads that it misses."""
    lines = [TITLE, ""]
    mine = [f.display_path for f in explanation.sidecar if f.loaded]
    lines.append("- **dsh-sidecar**: " + (_listed(mine, code) if mine else "no instruction files"))
    for agent in explanation.agents:
        lines.append(_agent_line(agent))
    return "\n".join(lines)


def _agent_line(agent: AgentExplanation) -> str:
    found = agent.loaded
    text = f"- **{agent.name}**: " + (_listed(found, _loaded) if found else "no instruction files")
    if agent.only_sidecar:
        text += "; misses " + _listed(agent.only_sidecar, lambda d: code(d.display_path))
    return text


def _loaded(found: AgentFile) -> str:
    shown = code(found.display_path)
    if found.state == "truncated" and found.kept_bytes is not None and found.bytes is not None:
        return f"{shown} (cut to {found.kept_bytes:,} of {found.bytes:,} bytes)"
    return shown


def _listed(items: Sequence[T], shown: Callable[[T], str]) -> str:
    """The first few of ``items`` as ``shown`` writes them, and how many more there are."""
    listed = ", ".join(shown(item) for item in items[:MAX_LISTED])
    if len(items) <= MAX_LISTED:
        return listed
    return listed + f" and {len(items) - MAX_LISTED} more"


def code(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    # Hover formats this for every listed file on every cursor rest: no per-character loop.
    longest = max(map(len, _BACKTICKS.findall(text)), default=0) if "`" in text else 0
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"

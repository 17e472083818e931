"""Cross-agent explain: for one file, what this sidecar loads and what each agent would load
under its documented rules (``dsh_sidecar.agents``), where size limits cut, and the differences.

Pure code over the filesystem seam; no pygls. Surfaces: ``dsh-sidecar explain``, ``dsh/explain``
and a hover section (``hover.hover_section``).

The names below load on first use: the agent hooks import ``explain.simulate`` alone (what one
agent loads itself), not the engine, the comparison and the sidecar's side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import explain_file
    from .model import AgentExplanation, AgentFile, Difference, Explanation, SidecarFile

__all__ = [
    "AgentExplanation",
    "AgentFile",
    "Difference",
    "Explanation",
    "SidecarFile",
    "explain_file",
]


def __getattr__(name: str) -> Any:
    if name == "explain_file":
        from .engine import explain_file

        return explain_file
    if name in __all__:
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

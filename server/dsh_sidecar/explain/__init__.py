"""Cross-agent explain: for one file, what this sidecar loads and what each agent would load
under its documented rules (``dsh_sidecar.agents``), where size limits cut, and the differences.

Pure code over the filesystem seam; no pygls. Surfaces: ``dsh-sidecar explain``, ``dsh/explain``
and a hover section (``hover.hover_section``).
"""

from __future__ import annotations

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

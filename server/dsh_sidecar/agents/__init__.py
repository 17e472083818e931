"""Every agent the sidecar knows: one module per agent holding its ``RECORD`` (``record.py``),
with its documented rules (``rules.py``: what it loads, the pages they follow and the date those
were checked) and its hook facts; ``registry.py`` lists them, one line each.

``AGENTS`` (every agent's rules, what ``explain`` compares) loads on first use: an agent hook
needs one agent's record, and importing this package must not build the other four.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .rules import AgentRules

    AGENTS: tuple[AgentRules, ...]

__all__ = ["AGENTS", "AgentRules"]


def __getattr__(name: str) -> Any:
    if name == "AGENTS":
        from .registry import all_rules

        return all_rules()
    if name == "AgentRules":
        from .rules import AgentRules

        return AgentRules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""What each agent loads, as data: one module per agent, stating its documented rules with the
pages they follow and the date those were checked (see ``rules.py`` for the vocabulary).

``AGENTS`` (all of them, ``registry.py``) loads on first use: an agent hook needs one agent's
rules, and importing this package must not build the other four.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .registry import AGENTS
    from .rules import AgentRules

__all__ = ["AGENTS", "AgentRules"]


def __getattr__(name: str) -> Any:
    if name == "AGENTS":
        from .registry import AGENTS

        return AGENTS
    if name == "AgentRules":
        from .rules import AgentRules

        return AgentRules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

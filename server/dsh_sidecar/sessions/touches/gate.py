"""Which tool results count as touches and where they wait.

Upstream behaviour: docs/reference/agent-instructions.md, Touches.

Only successful, unaborted first-party ``read``/``write``/``edit`` calls with a non-blank string
``file_path`` touch. A result with a ``parentToken`` stages its touches under the parent until the
parent's own result arrives; children's touches survive a failed parent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from dsh_sidecar.jsutil import js_trim

TOUCH_TOOLS = frozenset({"read", "write", "edit"})


def own_touch(name: Any, arguments: Any, is_error: Any, aborted: Any) -> str | None:
    """The path this execution touched itself, or None when it does not count."""
    if is_error is not False or aborted is True or name not in TOUCH_TOOLS:
        return None
    if not isinstance(arguments, Mapping):
        return None
    path = arguments.get("file_path")
    if not isinstance(path, str):
        return None
    trimmed = js_trim(path)
    return trimmed or None


@attrs.define
class ExecutionTouches:
    """Touches staged under open tool executions (Code Mode style parent tokens)."""

    staged: dict[str, list[str]] = attrs.field(factory=dict)

    def settle(self, token: str, parent: str | None, own: str | None) -> list[str]:
        """Record one result; return the touches to project now (empty while nested)."""
        touches = self.staged.pop(token, [])
        if own is not None:
            touches.append(own)
        if parent is not None:
            self.staged.setdefault(parent, []).extend(touches)
            return []
        return touches

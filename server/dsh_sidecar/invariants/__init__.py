"""Validators of each context source's durable shape (upstream's ``./invariant`` companions).

:func:`validate_event` checks one event about to be appended against the log before it and
raises :class:`InvariantError` when a message claims a context source it does not match. Events
of other kinds, and messages of other sources, pass untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.invariants import agent_instructions, session_reference, time_context, tmux_context
from dsh_sidecar.model import USER_MESSAGE, Event

Check = Callable[[Event, Sequence[Event]], str | None]

PACKAGES = (
    agent_instructions.PACKAGE,
    session_reference.PACKAGE,
    time_context.PACKAGE,
    tmux_context.PACKAGE,
)


class InvariantError(DshError):
    """``invariant violated by "<package>": <message>`` with code ``INVARIANT``."""

    def __init__(self, package: str, message: str) -> None:
        super().__init__(
            errors.INVARIANT,
            f'invariant violated by "{package}": {message}',
            {"package": package, "violation": message},
        )
        self.package = package
        self.violation = message


def validator_for(source: object) -> tuple[str, Check] | None:
    """The package and check that own a message source, or None for sources nobody validates."""
    if not isinstance(source, Mapping):
        return None
    kind = source.get("kind")
    if kind == "agent-instructions":
        return agent_instructions.PACKAGE, agent_instructions.check
    if kind == "session-reference":
        return session_reference.PACKAGE, session_reference.check
    if kind == "plugin":
        plugin = source.get("plugin")
        if plugin == "time-context":
            return time_context.PACKAGE, time_context.check
        if plugin == "tmux-context":
            return tmux_context.PACKAGE, tmux_context.check
    return None


def validate_event(event: Event, history: Sequence[Event]) -> None:
    """Raise :class:`InvariantError` if ``event`` breaks its source's invariant.

    ``history`` is the session's raw log before ``event`` (earlier events of the same batch
    included).
    """
    if event.type != USER_MESSAGE or not isinstance(event.data, Mapping):
        return
    owner = validator_for(event.data.get("source"))
    if owner is None:
        return
    package, check = owner
    violation = check(event, history)
    if violation is not None:
        raise InvariantError(package, violation)


__all__ = ["PACKAGES", "InvariantError", "validate_event", "validator_for"]

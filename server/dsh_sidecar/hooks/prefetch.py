"""What an event reads before it takes the store's write lock, so that no other hook waits on it.

The tmux reading runs a shell command (``tmux display-message``, up to two seconds) at prompt
time. The step decides whether it wants a reading from the session's log, which a read
connection sees without the lock; when it would, the query runs here and the step, inside the
transaction, gets its answer (or its failure, warned about as before). Should the step still
ask when this did not (another process wrote a reading in between), it queries itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from dsh_sidecar.sessions.store import Store

from .config import HookConfig
from .event import HookEvent

if TYPE_CHECKING:
    from dsh_sidecar.sources.tmux_context import TmuxLocation

TmuxQuery = Callable[[], "TmuxLocation | None"]


def tmux_before_lock(
    store: Store, event: HookEvent, config: HookConfig, session_id: str
) -> TmuxQuery | None:
    """The tmux query's answer, asked now; None when the step will not want it."""
    settings = config.settings.tmux_context
    if event.kind != "prompt" or not settings.enabled:
        return None
    from dsh_sidecar.sessions.stepping import tmux_events
    from dsh_sidecar.sources.tmux_context import latest_injected_state

    previous = latest_injected_state(tmux_events(store, session_id))
    interval = settings.refresh_interval_ms
    if interval > 0 and previous is not None and 0 <= config.clock() - previous.time < interval:
        return None
    try:
        location = query_tmux(config.env)
    except Exception as exc:  # the step reports it, as it would its own query's failure
        failure = exc

        def failed() -> TmuxLocation | None:
            raise failure

        return failed
    return lambda: location


def query_tmux(env: Mapping[str, str]) -> TmuxLocation | None:
    from dsh_sidecar.sources.tmux_context import query_tmux as query

    return query(os.getppid(), env=env)

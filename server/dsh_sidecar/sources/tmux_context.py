"""tmux-context: which tmux session, window and pane this agent runs in.

Sampled at step 1 of each turn and PREPENDED to the entering batch when the location differs
from the latest raw reading in the log::

    tmux location (turn 1):
    session 0, window 1 "node", pane 2 %90
    window active=1, pane active=0, layout d517,270x71,0,0{...}

The query is one read-only shell command (docs/reference/tmux-context.md, Query). ``$TMUX_PANE``
alone is not trusted, because a terminal started from a tmux shell inherits it: the pane's
``#{pane_tty}`` must equal the controlling tty of the process whose PID is in the command.

Which PID: upstream uses the agent process. The sidecar is usually spawned by the editor, so by
default we use our own PID; with ``tmuxContext.useClientProcess`` the caller passes the editor
client's ``processId`` from LSP ``initialize`` instead (a terminal editor such as Neovim in a tmux
pane owns the pane's tty, while a sidecar spawned with pipes may have none). :func:`query_tmux`
takes the PID to use; choosing it is the caller's job.

A failed query (timeout, spawn error) is a warning and no reading, never a failed turn; a
missing ``$TMUX_PANE``, a tty mismatch, a nonzero exit or malformed output is silently nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from dsh_sidecar.config import TmuxContextSettings
from dsh_sidecar.errors import Cancelled, DshError
from dsh_sidecar.jsutil import js_json_string
from dsh_sidecar.model import USER_MESSAGE, Event, Message
from dsh_sidecar.sources.snapshot import snapshot_message, snapshot_source

PLUGIN = "tmux-context"

# The eight fields, joined by the literal two characters backslash-t: inside single quotes the
# shell passes them through and tmux does not interpret C escapes, so they come back verbatim.
FIELD_SEPARATOR = "\\t"
FORMAT = FIELD_SEPARATOR.join(
    (
        "#{session_name}",
        "#{window_index}",
        "#{window_name}",
        "#{pane_index}",
        "#{pane_id}",
        "#{window_active}",
        "#{pane_active}",
        "#{window_layout}",
    )
)


def tmux_command(pid: int) -> str:
    """The exact six-line ``sh`` command that prints the location of ``pid``'s pane."""
    return "\n".join(
        (
            '[ -n "$TMUX_PANE" ] || exit 1',
            f"self_tty=$(ps -o tty= -p {int(pid)} | tr -d ' ')",
            '[ -n "$self_tty" ] || exit 1',
            "pane_tty=$(tmux display-message -t \"$TMUX_PANE\" -p '#{pane_tty}') || exit 1",
            '[ "$pane_tty" = "/dev/$self_tty" ] || exit 1',
            f"exec tmux display-message -t \"$TMUX_PANE\" -p '{FORMAT}'",
        )
    )


@attrs.frozen
class TmuxLocation:
    session_name: str
    window_index: str
    window_name: str
    pane_index: str
    pane_id: str
    window_active: str
    pane_active: str
    window_layout: str

    def to_json(self) -> dict[str, str]:
        return {
            "sessionName": self.session_name,
            "windowIndex": self.window_index,
            "windowName": self.window_name,
            "paneIndex": self.pane_index,
            "paneId": self.pane_id,
            "windowActive": self.window_active,
            "paneActive": self.pane_active,
            "windowLayout": self.window_layout,
        }


class TmuxQueryError(Exception):
    """The query could not run (spawn failure, timeout); the turn continues without a reading.

    Never reaches the wire: :func:`tmux_reading` turns it into a warning.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse_tmux_output(stdout: str) -> TmuxLocation | None:
    """The first line split on literal ``\\t``: exactly 8 fields and a non-empty pane id."""
    line = stdout.split("\n", 1)[0]
    parts = line.split(FIELD_SEPARATOR)
    if len(parts) != 8 or not parts[4]:
        return None
    return TmuxLocation(*parts)


def render_tmux_state(location: TmuxLocation) -> str:
    """Lines 2-3 of a reading: the unit compared for change suppression."""
    loc = location
    return (
        f"session {loc.session_name}, window {loc.window_index} "
        f"{js_json_string(loc.window_name)}, pane {loc.pane_index} {loc.pane_id}\n"
        f"window active={loc.window_active}, pane active={loc.pane_active}, "
        f"layout {loc.window_layout}"
    )


def render_tmux_reading(turn: int, location: TmuxLocation) -> str:
    return f"tmux location (turn {turn}):\n{render_tmux_state(location)}"


def reading_source(text: str) -> dict[str, Any]:
    return snapshot_source(PLUGIN, text)


def reading_message(text: str) -> Message:
    return snapshot_message(PLUGIN, text)


def query_tmux(
    pid: int, *, env: Mapping[str, str] | None = None, timeout_s: float = 2.0
) -> TmuxLocation | None:
    """Run the command with ``sh -c`` (no stdin) and parse its output.

    Returns None for every silent no-op (not in a pane, tty mismatch, nonzero exit, malformed
    output). Raises :class:`TmuxQueryError` when ``sh`` cannot be started or times out; the
    process group is killed on timeout. Blocking: run it off the event loop.
    """
    try:
        proc = subprocess.Popen(
            ["sh", "-c", tmux_command(pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ if env is None else env),
            start_new_session=True,
        )
    except OSError as exc:
        raise TmuxQueryError(f"cannot run sh: {exc}") from exc
    try:
        stdout, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        raise TmuxQueryError(f"timed out after {timeout_s:g}s") from exc
    if proc.returncode != 0:
        return None
    return parse_tmux_output(stdout.decode("utf-8", "replace"))


@attrs.frozen
class InjectedState:
    state: str
    time: int


def latest_injected_state(events: Sequence[Event]) -> InjectedState | None:
    """The state and time of the latest raw tmux reading (shadowed ones count).

    A latest reading whose first block is not text counts as never injected; older readings
    are not consulted.
    """
    for event in reversed(events):
        if event.type != USER_MESSAGE or not isinstance(event.data, Mapping):
            continue
        source = event.data.get("source")
        if not isinstance(source, Mapping) or source.get("plugin") != PLUGIN:
            continue
        content = event.data.get("content")
        first = content[0] if isinstance(content, list | tuple) and content else None
        if not isinstance(first, Mapping) or first.get("type") != "text":
            return None
        text = first.get("text")
        if not isinstance(text, str):
            return None
        _, _, state = text.partition("\n")
        return InjectedState(state=state, time=event.time)
    return None


def tmux_reading(
    *,
    events: Sequence[Event],
    turn: int,
    step: int,
    now_ms: int,
    settings: TmuxContextSettings,
    query: Callable[[], TmuxLocation | None],
    warn: Callable[[str], None],
) -> Message | None:
    """The reading to PREPEND to the batch, or None (disabled, not step 1, within the interval,
    no location, query failure, or an unchanged location)."""
    if not settings.enabled or step != 1:
        return None
    previous = latest_injected_state(events)
    interval = settings.refresh_interval_ms
    if interval > 0 and previous is not None and 0 <= now_ms - previous.time < interval:
        return None
    try:
        location = query()
    except Cancelled:
        raise
    except Exception as exc:  # upstream: any failure of the executor is a warning
        message = exc.message if isinstance(exc, DshError | TmuxQueryError) else str(exc)
        message = message or type(exc).__name__
        warn(f"tmux location query failed: {message}; injecting no location this turn")
        return None
    if location is None:
        return None
    if previous is not None and previous.state == render_tmux_state(location):
        return None
    return reading_message(render_tmux_reading(turn, location))

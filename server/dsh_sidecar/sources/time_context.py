"""time-context: the current zoned time, the browser zone and elapsed time (upstream variant D).

A reading is three lines, appended at the END of the entering batch when it is due::

    Time sampled while preparing turn 3, step 1: 2026-07-14T08:00:00+08:00[Asia/Shanghai]
    Browser time zone for this request: Asia/Shanghai. Interpret otherwise-unqualified dates and times in this zone.
    Elapsed since the preceding model-visible message: 1m 5s.

Every decision is made from the raw durable log (shadowed events included), never from process
state, so the schedule survives compaction, restart and resume.

Upstream behaviour: docs/reference/time-context.md.
"""

from __future__ import annotations

import os
import zoneinfo
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC as _UTC
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Literal

import attrs

from dsh_sidecar import errors
from dsh_sidecar.config import TimeContextSettings
from dsh_sidecar.errors import DshError
from dsh_sidecar.jsutil import js_json
from dsh_sidecar.model import (
    ASSISTANT_MESSAGE,
    TOOL_RESULT,
    TURN_START,
    USER_MESSAGE,
    Event,
    Message,
)
from dsh_sidecar.sources.snapshot import snapshot_message, snapshot_source
from dsh_sidecar.zones import CLIENT_TIME_ZONE_PATTERN, UTC, canonical_time_zone

PLUGIN = "time-context"
BASELINE_STEP_1 = "model-visible message"
BASELINE_LATER_STEP = "step context"
UNAVAILABLE = "unavailable"

_BROWSER_PREFIX = "Browser time zone for this request: "
_CLARIFY = "Ask the user to clarify otherwise-unqualified dates and times."


# --- timestamps and durations ---------------------------------------------------------------


@cache
def _zone(name: str) -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo(name)


def format_offset(offset: timedelta) -> str:
    """``±HH:MM`` (``±HH:MM:SS`` for a historical offset with seconds); zero is ``+00:00``."""
    total = int(offset.total_seconds())
    sign = "-" if total < 0 else "+"
    hours, rest = divmod(abs(total), 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}"
    return f"{text}:{seconds:02d}" if seconds else text


def format_timestamp(epoch_ms: int, zone: str) -> str:
    """``YYYY-MM-DDTHH:MM:SS±HH:MM[zone]``: wall time in ``zone``, sub-seconds truncated.

    ``zone`` is written in the brackets as given; pass a canonical name. Raises
    ``zoneinfo.ZoneInfoNotFoundError`` (a ``KeyError``) for a zone the database cannot load.
    """
    seconds = epoch_ms // 1000  # floor, like Intl: -1 ms shows 23:59:59 of the day before
    local = datetime.fromtimestamp(0, _UTC) + timedelta(seconds=seconds)
    local = local.astimezone(_zone(zone))
    offset = local.utcoffset() or timedelta(0)
    return (
        f"{local.year}-{local.month:02d}-{local.day:02d}"
        f"T{local.hour:02d}:{local.minute:02d}:{local.second:02d}"
        f"{format_offset(offset)}[{zone}]"
    )


def format_duration(elapsed_ms: int | float) -> str:
    """``[<d>d ][<h>h ][<m>m ]<s>s`` with zero parts left out except seconds; negatives → 0s."""
    total = int(max(0, elapsed_ms) // 1000)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "m")) if v]
    parts.append(f"{seconds}s")
    return " ".join(parts)


# --- zones ----------------------------------------------------------------------------------


def system_time_zone(env: Mapping[str, str] | None = None, etc: str | Path = "/etc") -> str:
    """The canonical name of this process's zone, honouring ``TZ`` (upstream resolves it once).

    ``TZ`` wins when set (a leading ``:`` is ignored, an empty value means UTC, a path inside a
    zoneinfo directory names that zone); otherwise ``/etc/timezone`` then the ``/etc/localtime``
    link; no ``/etc/localtime`` at all means UTC, as in glibc.
    """
    env = os.environ if env is None else env
    etc = Path(etc)
    tz = env.get("TZ")
    if tz is not None:
        name = tz[1:] if tz.startswith(":") else tz
        if not name:
            return UTC
        return _resolve_system_name(_zone_name_from_path(name))
    try:
        text = (etc / "timezone").read_text(encoding="utf-8").strip()
    except OSError:
        text = ""
    if text and canonical_time_zone(text) is not None:
        return _resolve_system_name(text)
    localtime = etc / "localtime"
    if not localtime.exists() and not localtime.is_symlink():
        return UTC
    try:
        target = os.readlink(localtime)
    except OSError:
        target = ""
    return _resolve_system_name(_zone_name_from_path(target))


def _zone_name_from_path(value: str) -> str:
    marker = "zoneinfo/"
    if value.startswith("/") and marker in value:
        return value.rsplit(marker, 1)[1]
    return value


def _resolve_system_name(name: str) -> str:
    canonical = canonical_time_zone(name) if name else None
    if canonical is None:
        raise DshError(
            errors.INVALID_CONFIG, "time-context: failed to resolve the system time zone"
        )
    return canonical


def display_fallback_zone(settings: TimeContextSettings, fallback_zone: str) -> str:
    """The canonical configured zone, or the canonical ``fallback_zone`` when none is set."""
    if settings.time_zone is not None:
        canonical = canonical_time_zone(settings.time_zone)
        if canonical is None:
            raise DshError(
                errors.INVALID_CONFIG,
                f'time-context: invalid IANA timeZone "{settings.time_zone}"',
                {"key": "timeContext.timeZone"},
            )
        return canonical
    return _resolve_system_name(fallback_zone)


def _zone_error(message: str, value: str) -> DshError:
    return DshError(errors.INVALID_TIME_ZONE, message, {"value": value})


def check_browser_zone(value: str) -> str:
    """Plugin-side check of one contributed zone (upstream's TypeErrors, in their order)."""
    if value != UTC and not CLIENT_TIME_ZONE_PATTERN.fullmatch(value):
        raise _zone_error(
            f'browser time zone must be canonical UTC or IANA Area/Location: "{value}"', value
        )
    canonical = canonical_time_zone(value)
    if canonical is None:
        raise _zone_error(f'browser time zone is unsupported: "{value}"', value)
    if canonical != value:
        raise _zone_error(f'browser time zone must be canonical: "{value}"', value)
    return value


@attrs.frozen
class BrowserZone:
    """The request's browser-zone provenance: none, exactly one, or several distinct zones."""

    status: Literal["missing", "resolved", "mixed"]
    zones: tuple[str, ...] = ()

    @property
    def zone(self) -> str | None:
        return self.zones[0] if self.status == "resolved" else None

    @property
    def line(self) -> str:
        if self.status == "resolved":
            return (
                f"{_BROWSER_PREFIX}{self.zones[0]}. "
                "Interpret otherwise-unqualified dates and times in this zone."
            )
        if self.status == "mixed":
            return f"{_BROWSER_PREFIX}mixed {js_json(list(self.zones))}. {_CLARIFY}"
        return f"{_BROWSER_PREFIX}unavailable. {_CLARIFY}"


def contributed_zone(source: Any) -> str | None:
    """The ``clientTimeZone`` of a user-rpc source, or None for every other source."""
    if not isinstance(source, Mapping) or source.get("kind") != "user":
        return None
    rpc_id, zone = source.get("rpcId"), source.get("clientTimeZone")
    if isinstance(rpc_id, str) and isinstance(zone, str):
        return zone
    return None


def current_turn_sources(events: Sequence[Event], turn: int) -> list[Any]:
    """Sources of the ``user/message`` events after the LAST ``turn/start`` of ``turn``."""
    start = None
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.type == TURN_START and _data_int(event, "turn") == turn:
            start = index
            break
    if start is None:
        return []
    return [e.data.get("source") for e in events[start + 1 :] if e.type == USER_MESSAGE]


def classify_browser_zones(sources: Iterable[Any]) -> BrowserZone:
    """Validate every contributed zone, then classify the sorted unique set."""
    zones = {check_browser_zone(z) for s in sources if (z := contributed_zone(s)) is not None}
    ordered = tuple(sorted(zones))
    if not ordered:
        return BrowserZone("missing")
    if len(ordered) == 1:
        return BrowserZone("resolved", ordered)
    return BrowserZone("mixed", ordered)


def request_browser_zone(
    events: Sequence[Event], batch: Sequence[Message], turn: int
) -> BrowserZone:
    """The browser zone of the open request: this turn's logged messages plus the batch."""
    sources = current_turn_sources(events, turn) + [m.source for m in batch]
    return classify_browser_zones(sources)


# --- schedule and baselines -----------------------------------------------------------------


def _data_int(event: Event, key: str) -> Any:
    return event.data.get(key) if isinstance(event.data, Mapping) else None


def is_time_reading_event(event: Event) -> bool:
    if event.type != USER_MESSAGE or not isinstance(event.data, Mapping):
        return False
    source = event.data.get("source")
    return (
        isinstance(source, Mapping)
        and source.get("kind") == "plugin"
        and source.get("plugin") == PLUGIN
    )


def latest_reading_time(events: Sequence[Event]) -> int | None:
    """``time`` of the latest raw time-context reading (shadowed ones count)."""
    for event in reversed(events):
        if is_time_reading_event(event):
            return event.time
    return None


def is_due(events: Sequence[Event], now_ms: int, refresh_interval_ms: int) -> bool:
    """Interval rule: due without an earlier reading, at/after the threshold, or on a backward
    clock; an interval of 0 makes every entering step due."""
    if refresh_interval_ms <= 0:
        return True
    last = latest_reading_time(events)
    if last is None:
        return True
    return not 0 <= now_ms - last < refresh_interval_ms


_MODEL_VISIBLE_TYPES = frozenset({USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT})


def elapsed_baseline(events: Sequence[Event], turn: int, step: int) -> int | None:
    """The time the elapsed value is measured from, or None for ``unavailable``.

    Step 1: the latest raw model-visible message of any source. Later steps: the latest
    time-context reading, unless this turn's ``turn/start`` comes first.
    """
    for event in reversed(events):
        if step == 1:
            if event.type in _MODEL_VISIBLE_TYPES:
                return event.time
        elif event.type == TURN_START and _data_int(event, "turn") == turn:
            return None
        elif is_time_reading_event(event):
            return event.time
    return None


def render_reading(*, turn: int, step: int, timestamp: str, browser_line: str, elapsed: str) -> str:
    baseline = BASELINE_STEP_1 if step == 1 else BASELINE_LATER_STEP
    return (
        f"Time sampled while preparing turn {turn}, step {step}: {timestamp}\n"
        f"{browser_line}\n"
        f"Elapsed since the preceding {baseline}: {elapsed}."
    )


def reading_source(text: str) -> dict[str, Any]:
    return snapshot_source(PLUGIN, text)


def reading_message(text: str) -> Message:
    return snapshot_message(PLUGIN, text)


def time_reading(
    *,
    events: Sequence[Event],
    batch: Sequence[Message],
    turn: int,
    step: int,
    now_ms: int,
    settings: TimeContextSettings,
    fallback_zone: str,
) -> Message | None:
    """The reading to append at the END of ``batch``, or None when disabled or not due.

    ``events`` is the session's raw log before this step (the batch is not in it yet);
    ``fallback_zone`` is used when ``settings.time_zone`` is None (normally
    :func:`system_time_zone`). Raises ``DshError(INVALID_TIME_ZONE)`` for an invalid browser
    zone in the open request, which fails the step like upstream's TypeError.
    """
    if not settings.enabled or not is_due(events, now_ms, settings.refresh_interval_ms):
        return None
    browser = request_browser_zone(events, batch, turn)
    zone = browser.zone or display_fallback_zone(settings, fallback_zone)
    baseline = elapsed_baseline(events, turn, step)
    elapsed = UNAVAILABLE if baseline is None else format_duration(now_ms - baseline)
    text = render_reading(
        turn=turn,
        step=step,
        timestamp=format_timestamp(now_ms, zone),
        browser_line=browser.line,
        elapsed=elapsed,
    )
    return reading_message(text)

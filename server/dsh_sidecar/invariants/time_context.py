"""Invariant companion of time-context (upstream variant D checks, in order, exact messages).

History is the log before the reading. Not validated, as upstream: the elapsed value, the fallback
zone of a mixed or missing reading, and the interval schedule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from dsh_sidecar.errors import DshError
from dsh_sidecar.invariants._common import (
    MAX_SAFE_INTEGER,
    digits_number,
    is_safe_int,
    single_text_block,
    snapshot_source_matches,
)
from dsh_sidecar.model import STEP_END, STEP_START, TURN_END, TURN_START, Event
from dsh_sidecar.sources.time_context import (
    BASELINE_STEP_1,
    PLUGIN,
    classify_browser_zones,
    current_turn_sources,
    format_timestamp,
)

PACKAGE = "@deepseek-ai/dsh-time-context"
REQUEST_HEADER = "request/header"

# JS ``\d`` is ASCII and JS ``.`` excludes the line terminators; spelled out for Python.
_D = "[0-9]"
_DOT = "[^\n\r\u2028\u2029]"
READING_PATTERN = re.compile(
    rf"Time sampled while preparing turn ({_D}+), step ({_D}+): "
    rf"({_D}{{4}}-{_D}{{2}}-{_D}{{2}}T{_D}{{2}}:{_D}{{2}}:{_D}{{2}}"
    rf"(?:Z|[+-]{_D}{{2}}:{_D}{{2}})\[[^\]]+\])\n"
    rf"(Browser time zone for this request: {_DOT}+)\n"
    rf"Elapsed since the preceding (model-visible message|step context): "
    rf"(?:unavailable|(?:{_D}+d )?(?:{_D}+h )?(?:{_D}+m )?{_D}+s)\."
)


def _position(history: Sequence[Event]) -> tuple[Any, Any, bool] | str:
    """``(open turn, open step, request started)`` or the violation message."""
    open_turn: Any = None
    open_step: Any = None
    requested = False
    for event in history:
        data = event.data if isinstance(event.data, Mapping) else {}
        if event.type == TURN_START:
            open_turn, open_step, requested = data.get("turn"), None, False
        elif event.type == TURN_END:
            open_turn, open_step, requested = None, None, False
        elif event.type == STEP_START:
            open_step, requested = data.get("step"), False
        elif event.type == STEP_END:
            open_step, requested = None, False
        elif event.type == REQUEST_HEADER and open_step is not None:
            requested = True
    if open_turn is None:
        return "time-context reading must be appended inside an open turn"
    if open_step is None:
        return "time-context reading must follow step/start"
    if requested:
        return "time-context reading must precede request/header"
    return open_turn, open_step, requested


def _parse_ms(stamp: str) -> int | None:
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return (parsed - epoch) // timedelta(milliseconds=1)


def check(event: Event, history: Sequence[Event]) -> str | None:
    """The violation message for one time-context reading, or None when it is valid."""
    data = event.data
    text = single_text_block(data)
    if text is None:
        return "time-context messages must contain exactly one text block"
    match = READING_PATTERN.fullmatch(text)
    if match is None:
        return "time-context message does not match the durable reading format"
    turn, step = digits_number(match[1]), digits_number(match[2])
    if not (is_safe_int(turn, 1) and is_safe_int(step, 1)):
        return "time-context turn and step must be positive safe integers"
    position = _position(history)
    if isinstance(position, str):
        return position
    open_turn, open_step, _ = position
    if turn != open_turn or step != open_step:
        return (
            f"time-context reading names turn {turn}/step {step}, "
            f"expected turn {open_turn}/step {open_step}"
        )
    if not snapshot_source_matches(data.get("source"), PLUGIN, text):
        return "time-context source must carry only the exact snapshot text, not request authority"
    try:
        browser = classify_browser_zones(current_turn_sources(history, turn))
    except DshError as exc:
        return exc.message
    if match[4] != browser.line:
        return "time-context browser-zone text does not match current-turn user messages"
    phrase = match[5]
    if (phrase == BASELINE_STEP_1) != (step == 1):
        return f'time-context step {step} uses the wrong elapsed-time baseline "{phrase}"'
    rendered = match[3]
    stamp = rendered[: rendered.index("[")]
    instant = _parse_ms(stamp)
    if instant is None or not is_safe_int(event.time, -MAX_SAFE_INTEGER) or event.time < instant:
        return "time-context rendered timestamp must parse and not postdate its durable event"
    if browser.zone is not None:
        try:
            expected = format_timestamp(instant, browser.zone)
        except Exception as exc:  # any formatter failure is reported, as upstream
            return f"time-context browser zone cannot format its durable timestamp: {exc}"
        if expected != rendered:
            return "time-context rendered timestamp does not match the unique browser zone"
    return None

"""time-context (variant D): timestamps, durations, browser zone, interval rule, baselines.

Goldens are upstream's computed values, written out in full: docs/reference/time-context.md,
Reading text, through Browser zones.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar import errors
from dsh_sidecar.config import TimeContextSettings
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import Event, Message
from dsh_sidecar.sources.time_context import (
    BrowserZone,
    classify_browser_zones,
    format_duration,
    format_timestamp,
    system_time_zone,
    time_reading,
)

BASE = int(datetime(2026, 7, 14, tzinfo=UTC).timestamp() * 1000)
JANUARY = int(datetime(2026, 1, 14, tzinfo=UTC).timestamp() * 1000)
ON = TimeContextSettings(enabled=True)

RESOLVED_SHANGHAI = (
    "Browser time zone for this request: Asia/Shanghai. "
    "Interpret otherwise-unqualified dates and times in this zone."
)
UNAVAILABLE_LINE = (
    "Browser time zone for this request: unavailable. "
    "Ask the user to clarify otherwise-unqualified dates and times."
)


# --- helpers --------------------------------------------------------------------------------


class Log:
    """A raw session log built in order, with contiguous seqs."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, type_: str, time: int, data: dict[str, Any], op: Any = None) -> Event:
        event = Event(seq=len(self.events), type=type_, time=time, data=data, surface_op=op)
        self.events.append(event)
        return event

    def message(
        self, time: int, source: dict[str, Any], text: str = "x", op: Any = "append"
    ) -> Event:
        data = {
            "id": f"m{len(self.events)}",
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": source,
        }
        return self.add("user/message", time, data, op)

    def reading(self, time: int) -> Event:
        return self.message(
            time, {"kind": "plugin", "plugin": "time-context", "form": "snapshot", "sections": []}
        )

    def assistant(self, time: int, turn: int = 1, step: int = 1) -> Event:
        msg = {
            "id": f"a{len(self.events)}",
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "source": {"kind": "model"},
        }
        return self.add(
            "assistant/message", time, {"turn": turn, "step": step, "message": msg}, "append"
        )


def prompt(zone: str | None = None, *, rpc: bool = True, text: str = "hi") -> Message:
    source: dict[str, Any] = {"kind": "user"}
    if rpc:
        source["rpcId"] = "r1"
    if zone is not None:
        source["clientTimeZone"] = zone
    return Message.user([text], source)


def reading_text(**kwargs: Any) -> str:
    kwargs.setdefault("events", [])
    kwargs.setdefault("batch", [])
    kwargs.setdefault("turn", 1)
    kwargs.setdefault("step", 1)
    kwargs.setdefault("now_ms", BASE)
    kwargs.setdefault("settings", ON)
    kwargs.setdefault("fallback_zone", "UTC")
    message = time_reading(**kwargs)
    assert message is not None
    return message.text


# --- timestamps -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "at", "expected"),
    [
        ("UTC", BASE, "2026-07-14T00:00:00+00:00[UTC]"),
        ("UTC", JANUARY, "2026-01-14T00:00:00+00:00[UTC]"),
        ("Asia/Shanghai", BASE, "2026-07-14T08:00:00+08:00[Asia/Shanghai]"),
        ("Asia/Shanghai", JANUARY, "2026-01-14T08:00:00+08:00[Asia/Shanghai]"),
        ("America/New_York", BASE, "2026-07-13T20:00:00-04:00[America/New_York]"),
        ("America/New_York", JANUARY, "2026-01-13T19:00:00-05:00[America/New_York]"),
        ("Europe/London", BASE, "2026-07-14T01:00:00+01:00[Europe/London]"),
        ("Europe/London", JANUARY, "2026-01-14T00:00:00+00:00[Europe/London]"),
        ("Australia/Lord_Howe", BASE, "2026-07-14T10:30:00+10:30[Australia/Lord_Howe]"),
        ("Australia/Lord_Howe", JANUARY, "2026-01-14T11:00:00+11:00[Australia/Lord_Howe]"),
        ("America/St_Johns", BASE, "2026-07-13T21:30:00-02:30[America/St_Johns]"),
        ("Pacific/Chatham", BASE, "2026-07-14T12:45:00+12:45[Pacific/Chatham]"),
        ("Etc/GMT+5", BASE, "2026-07-13T19:00:00-05:00[Etc/GMT+5]"),
        ("Asia/Shanghai", BASE + 90_061_000, "2026-07-15T09:01:01+08:00[Asia/Shanghai]"),
        ("UTC", BASE + 999, "2026-07-14T00:00:00+00:00[UTC]"),  # sub-seconds truncated
        ("UTC", BASE - 1, "2026-07-13T23:59:59+00:00[UTC]"),
        ("UTC", -1, "1969-12-31T23:59:59+00:00[UTC]"),
    ],
)
def test_timestamp_goldens(zone: str, at: int, expected: str) -> None:
    assert format_timestamp(at, zone) == expected


def test_historical_offset_keeps_seconds() -> None:
    at = int(datetime(1900, 1, 1, tzinfo=UTC).timestamp() * 1000)
    assert format_timestamp(at, "Asia/Shanghai") == "1900-01-01T08:05:43+08:05:43[Asia/Shanghai]"


def test_zero_offset_is_never_z() -> None:
    assert "Z" not in format_timestamp(BASE, "Etc/GMT").split("[")[0]


# --- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("elapsed", "expected"),
    [
        (-5000, "0s"),
        (0, "0s"),
        (999, "0s"),
        (1000, "1s"),
        (59_999, "59s"),
        (60_000, "1m 0s"),
        (61_000, "1m 1s"),
        (3_600_000, "1h 0s"),
        (3_661_000, "1h 1m 1s"),
        (86_400_000, "1d 0s"),
        (86_405_000, "1d 5s"),
        (90_061_000, "1d 1h 1m 1s"),
        (180_000_000, "2d 2h 0s"),
    ],
)
def test_duration_goldens(elapsed: int, expected: str) -> None:
    assert format_duration(elapsed) == expected


# --- the exact three lines ------------------------------------------------------------------


def test_resolved_reading_exact_text_and_source() -> None:
    message = time_reading(
        events=[],
        batch=[prompt("Asia/Shanghai")],
        turn=1,
        step=1,
        now_ms=BASE,
        settings=ON,
        fallback_zone="UTC",
    )
    assert message is not None
    text = (
        "Time sampled while preparing turn 1, step 1: 2026-07-14T08:00:00+08:00[Asia/Shanghai]\n"
        "Browser time zone for this request: Asia/Shanghai. Interpret otherwise-unqualified dates and times in this zone.\n"
        "Elapsed since the preceding model-visible message: unavailable."
    )
    assert message.text == text
    assert message.role == "user"
    assert message.content == ({"type": "text", "text": text},)
    assert message.source == {
        "kind": "plugin",
        "plugin": "time-context",
        "form": "snapshot",
        "sections": [{"name": "time-context", "text": text}],
    }


def test_mixed_reading_lists_sorted_zones_and_uses_the_fallback() -> None:
    text = reading_text(
        batch=[prompt("Asia/Shanghai"), prompt("America/New_York"), prompt("Asia/Shanghai")],
        fallback_zone="Europe/London",
    )
    assert text == (
        "Time sampled while preparing turn 1, step 1: 2026-07-14T01:00:00+01:00[Europe/London]\n"
        'Browser time zone for this request: mixed ["America/New_York","Asia/Shanghai"]. '
        "Ask the user to clarify otherwise-unqualified dates and times.\n"
        "Elapsed since the preceding model-visible message: unavailable."
    )


def test_missing_zone_is_unavailable_and_uses_the_configured_zone() -> None:
    settings = TimeContextSettings(enabled=True, time_zone="asia/kolkata")
    text = reading_text(batch=[prompt()], settings=settings, fallback_zone="UTC")
    assert text.splitlines() == [
        "Time sampled while preparing turn 1, step 1: 2026-07-14T05:30:00+05:30[Asia/Calcutta]",
        UNAVAILABLE_LINE,
        "Elapsed since the preceding model-visible message: unavailable.",
    ]


def test_fallback_zone_is_canonicalized() -> None:
    text = reading_text(fallback_zone="Etc/UTC")
    assert text.splitlines()[0].endswith("2026-07-14T00:00:00+00:00[UTC]")


def test_invalid_zone_settings_fail_with_upstream_messages() -> None:
    with pytest.raises(DshError, match=r'^time-context: invalid IANA timeZone "Nope/Zone"$'):
        reading_text(settings=TimeContextSettings(enabled=True, time_zone="Nope/Zone"))
    with pytest.raises(DshError, match=r"^time-context: failed to resolve the system time zone$"):
        reading_text(fallback_zone="Nope/Zone")


def test_disabled_source_injects_nothing() -> None:
    assert (
        time_reading(
            events=[],
            batch=[],
            turn=1,
            step=1,
            now_ms=BASE,
            settings=TimeContextSettings(enabled=False),
            fallback_zone="UTC",
        )
        is None
    )


# --- browser-zone policy --------------------------------------------------------------------


def test_only_user_rpc_sources_of_the_current_turn_contribute() -> None:
    log = Log()
    log.add("turn/start", BASE - 9000, {"turn": 1})
    log.message(BASE - 8000, {"kind": "user", "rpcId": "old", "clientTimeZone": "America/New_York"})
    log.add("turn/end", BASE - 7000, {"turn": 1, "reason": "done"})
    log.add("turn/start", BASE - 6000, {"turn": 2})
    log.message(BASE - 5000, {"kind": "user", "clientTimeZone": "Europe/London"})  # no rpcId
    log.message(
        BASE - 4000,
        {"kind": "plugin", "plugin": "x", "rpcId": "r", "clientTimeZone": "Europe/London"},
    )
    log.message(BASE - 3000, {"kind": "user", "rpcId": "r2", "clientTimeZone": "Asia/Shanghai"})
    log.add("step/start", BASE - 2000, {"turn": 2, "step": 1})
    text = reading_text(events=log.events, batch=[prompt(None)], turn=2, step=2)
    assert text.splitlines()[1] == RESOLVED_SHANGHAI
    assert "[Asia/Shanghai]" in text.splitlines()[0]


def test_the_last_turn_start_of_the_turn_opens_the_request() -> None:
    log = Log()
    log.add("turn/start", 1, {"turn": 3})
    log.message(2, {"kind": "user", "rpcId": "a", "clientTimeZone": "America/New_York"})
    log.add("turn/start", 3, {"turn": 3})
    log.message(4, {"kind": "user", "rpcId": "b", "clientTimeZone": "Asia/Shanghai"})
    assert reading_text(events=log.events, turn=3, step=2).splitlines()[1] == RESOLVED_SHANGHAI


def test_without_the_turn_start_only_the_batch_counts() -> None:
    log = Log()
    log.message(1, {"kind": "user", "rpcId": "a", "clientTimeZone": "America/New_York"})
    text = reading_text(events=log.events, batch=[prompt("Asia/Shanghai")], turn=5)
    assert text.splitlines()[1] == RESOLVED_SHANGHAI


@pytest.mark.parametrize(
    ("zone", "message"),
    [
        ("+08:00", 'browser time zone must be canonical UTC or IANA Area/Location: "+08:00"'),
        ("utc", 'browser time zone must be canonical UTC or IANA Area/Location: "utc"'),
        ("Not/A_Real_Zone", 'browser time zone is unsupported: "Not/A_Real_Zone"'),
        ("Etc/UTC", 'browser time zone must be canonical: "Etc/UTC"'),
        ("Asia/Kolkata", 'browser time zone must be canonical: "Asia/Kolkata"'),
        ("asia/shanghai", 'browser time zone must be canonical: "asia/shanghai"'),
    ],
)
def test_invalid_browser_zone_fails_the_step(zone: str, message: str) -> None:
    with pytest.raises(DshError) as caught:
        reading_text(batch=[prompt(zone)])
    assert caught.value.code == errors.INVALID_TIME_ZONE
    assert caught.value.message == message


def test_invalid_zone_is_not_validated_when_no_reading_is_due() -> None:
    log = Log()
    log.reading(BASE - 10)
    settings = TimeContextSettings(enabled=True, refresh_interval_ms=1000)
    got = time_reading(
        events=log.events,
        batch=[prompt("+08:00")],
        turn=1,
        step=1,
        now_ms=BASE,
        settings=settings,
        fallback_zone="UTC",
    )
    assert got is None


def test_classification() -> None:
    assert classify_browser_zones([]) == BrowserZone("missing")
    one = classify_browser_zones([{"kind": "user", "rpcId": "r", "clientTimeZone": "UTC"}] * 2)
    assert one == BrowserZone("resolved", ("UTC",))
    assert one.line == (
        "Browser time zone for this request: UTC. "
        "Interpret otherwise-unqualified dates and times in this zone."
    )


# --- interval rule --------------------------------------------------------------------------


def _due(log: Log, now: int, interval: int) -> bool:
    settings = TimeContextSettings(enabled=True, refresh_interval_ms=interval)
    got = time_reading(
        events=log.events,
        batch=[],
        turn=1,
        step=1,
        now_ms=now,
        settings=settings,
        fallback_zone="UTC",
    )
    return got is not None


def test_interval_rule() -> None:
    log = Log()
    assert _due(log, BASE, 60_000)  # no earlier reading
    log.reading(BASE)
    assert not _due(log, BASE, 60_000)  # 0 elapsed
    assert not _due(log, BASE + 59_999, 60_000)
    assert _due(log, BASE + 60_000, 60_000)  # the exact threshold injects
    assert _due(log, BASE - 1, 60_000)  # the wall clock went backward
    assert _due(log, BASE, 0)  # no interval: every entering step


def test_latest_reading_decides_and_content_is_not_inspected() -> None:
    log = Log()
    log.reading(BASE - 120_000)
    log.reading(BASE - 1000)
    assert not _due(log, BASE, 60_000)
    other = Log()
    other.message(BASE - 1000, {"kind": "plugin", "plugin": "tmux-context"})
    other.message(BASE - 1000, {"kind": "user"}, text="Time sampled while preparing turn 1")
    assert _due(other, BASE, 60_000)


def test_shadowed_readings_still_count() -> None:
    log = Log()
    log.reading(BASE - 1000)
    log.message(
        BASE - 500,
        {"kind": "plugin", "plugin": "compact", "compactionId": "c"},
        op={"op": "replace", "start": 0, "end": 0},
    )
    assert not _due(log, BASE, 60_000)


# --- elapsed baselines ----------------------------------------------------------------------


def _elapsed_line(log: Log, *, turn: int = 1, step: int = 1, now: int = BASE) -> str:
    return reading_text(events=log.events, turn=turn, step=step, now_ms=now).splitlines()[2]


def test_brand_new_session_is_unavailable() -> None:
    assert _elapsed_line(Log()) == "Elapsed since the preceding model-visible message: unavailable."


def test_step_one_uses_the_latest_raw_model_visible_message() -> None:
    log = Log()
    log.add("turn/start", BASE - 100_000, {"turn": 1})
    log.message(BASE - 90_000, {"kind": "user", "rpcId": "r"})
    log.assistant(BASE - 65_000)
    log.add("step/end", BASE - 64_000, {"turn": 1, "step": 1})
    log.add("turn/end", BASE - 63_000, {"turn": 1, "reason": "done"})
    log.add(
        "agent/inbox/spliced", BASE - 1_000, {"target": "next-step", "start": 0, "inserted": []}
    )
    assert _elapsed_line(log, turn=2) == "Elapsed since the preceding model-visible message: 1m 5s."


def test_step_one_counts_tool_results_plugin_context_and_shadowed_events() -> None:
    log = Log()
    log.add("tool/result", BASE - 3_000, {"turn": 1, "step": 1, "message": {}}, "append")
    assert _elapsed_line(log) == "Elapsed since the preceding model-visible message: 3s."
    log.message(BASE - 2_000, {"kind": "plugin", "plugin": "tmux-context"}, op=None)
    assert _elapsed_line(log) == "Elapsed since the preceding model-visible message: 2s."


def test_step_one_backward_clock_clamps_to_zero() -> None:
    log = Log()
    log.assistant(BASE + 5_000)
    assert _elapsed_line(log) == "Elapsed since the preceding model-visible message: 0s."


def test_later_steps_use_the_latest_reading_of_this_turn() -> None:
    log = Log()
    log.add("turn/start", BASE - 100_000, {"turn": 4})
    log.add("step/start", BASE - 99_000, {"turn": 4, "step": 1})
    log.reading(BASE - 90_061_000 + 0)  # an old time, still after turn/start in log order
    log.assistant(BASE - 10_000, turn=4)
    log.add("step/end", BASE - 9_000, {"turn": 4, "step": 1})
    line = _elapsed_line(log, turn=4, step=2)
    assert line == "Elapsed since the preceding step context: 1d 1h 1m 1s."


def test_later_step_without_a_reading_in_this_turn_is_unavailable() -> None:
    log = Log()
    log.add("turn/start", BASE - 100_000, {"turn": 1})
    log.reading(BASE - 90_000)
    log.add("turn/end", BASE - 80_000, {"turn": 1, "reason": "done"})
    log.add("turn/start", BASE - 70_000, {"turn": 2})
    log.assistant(BASE - 60_000, turn=2)
    line = _elapsed_line(log, turn=2, step=3)
    assert line == "Elapsed since the preceding step context: unavailable."


def test_later_step_scans_past_a_missing_turn_start() -> None:
    log = Log()
    log.reading(BASE - 4_000)
    line = _elapsed_line(log, turn=9, step=2)
    assert line == "Elapsed since the preceding step context: 4s."


def test_reading_header_names_turn_and_step() -> None:
    log = Log()
    log.add("turn/start", BASE, {"turn": 12})
    first = reading_text(events=log.events, turn=12, step=7).splitlines()[0]
    assert first == "Time sampled while preparing turn 12, step 7: 2026-07-14T00:00:00+00:00[UTC]"


# --- system zone ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tz", "expected"),
    [
        ("Asia/Kolkata", "Asia/Calcutta"),
        (":Europe/Kyiv", "Europe/Kiev"),
        ("", "UTC"),
        ("/usr/share/zoneinfo/America/New_York", "America/New_York"),
        ("asia/shanghai", "Asia/Shanghai"),
    ],
)
def test_system_zone_honours_tz(tz: str, expected: str, tmp_path: Path) -> None:
    assert system_time_zone({"TZ": tz}, etc=tmp_path) == expected


def test_system_zone_unresolvable_tz() -> None:
    with pytest.raises(DshError, match=r"^time-context: failed to resolve the system time zone$"):
        system_time_zone({"TZ": "Nope/Zone"})


def test_system_zone_from_etc(tmp_path: Path) -> None:
    assert system_time_zone({}, etc=tmp_path) == "UTC"  # no /etc/localtime at all
    os.symlink("/usr/share/zoneinfo/Europe/Kyiv", tmp_path / "localtime")
    assert system_time_zone({}, etc=tmp_path) == "Europe/Kiev"
    (tmp_path / "timezone").write_text("Asia/Shanghai\n")
    assert system_time_zone({}, etc=tmp_path) == "Asia/Shanghai"

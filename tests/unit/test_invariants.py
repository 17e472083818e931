"""Invariant validators of the four context sources: valid messages pass, each violation fails
with its exact message (written out here, never read from the modules' constants)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from dsh_sidecar import errors
from dsh_sidecar.config import SessionReferenceSettings, TimeContextSettings, TmuxContextSettings
from dsh_sidecar.invariants import InvariantError, validate_event
from dsh_sidecar.model import Event, Message, SessionHeader, SurfaceSnapshot
from dsh_sidecar.sources.session_reference.resolver import prepare
from dsh_sidecar.sources.time_context import time_reading
from dsh_sidecar.sources.tmux_context import TmuxLocation, render_tmux_reading, tmux_reading

BASE = 1_784_000_000_000  # 2026-07-14T03:33:20Z
TIME_PKG = "@deepseek-ai/dsh-time-context"
TMUX_PKG = "@deepseek-ai/dsh-tmux-context"
REF_PKG = "@deepseek-ai/dsh-session-reference"
AI_PKG = "@deepseek-ai/dsh-agent-instructions"


class Log:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, type_: str, data: dict[str, Any], time: int = BASE, op: Any = None) -> Event:
        event = Event(seq=len(self.events), type=type_, time=time, data=data, surface_op=op)
        self.events.append(event)
        return event

    def message(self, message: Message | dict[str, Any], time: int = BASE) -> Event:
        data = message.to_json() if isinstance(message, Message) else message
        return self.add("user/message", data, time, "append")

    def pending(self, message: Message | dict[str, Any], time: int = BASE) -> Event:
        """The event that would be appended next (not added to the history)."""
        data = message.to_json() if isinstance(message, Message) else message
        return Event(
            seq=len(self.events), type="user/message", time=time, data=data, surface_op="append"
        )


def violation(package: str, event: Event, history: list[Event], message: str) -> None:
    with pytest.raises(InvariantError) as caught:
        validate_event(event, history)
    error = caught.value
    assert error.code == errors.INVARIANT == "INVARIANT"
    assert error.message == f'invariant violated by "{package}": {message}'
    assert str(error) == error.message


# --- dispatch -------------------------------------------------------------------------------


def test_other_events_and_sources_pass() -> None:
    log = Log()
    validate_event(log.add("turn/start", {"turn": 1}), [])  # passes: raises nothing
    garbage = {"id": "x", "role": "user", "content": [], "source": {"kind": "user"}}
    validate_event(log.pending(garbage), log.events)
    validate_event(log.pending({**garbage, "source": {"kind": "plugin", "plugin": "compact"}}), [])
    validate_event(log.pending({**garbage, "source": "not a mapping"}), [])
    validate_event(Event(0, "assistant/message", BASE, {"message": garbage}), [])


def test_error_shape() -> None:
    error = InvariantError(TIME_PKG, "boom")
    assert error.message == 'invariant violated by "@deepseek-ai/dsh-time-context": boom'
    assert error.data == {"package": TIME_PKG, "violation": "boom"}


# --- time-context ---------------------------------------------------------------------------


def prompt(zone: str | None) -> Message:
    source: dict[str, Any] = {"kind": "user", "rpcId": "r1"}
    if zone is not None:
        source["clientTimeZone"] = zone
    return Message.user(["hello"], source)


def time_step(zones: list[str | None], *, turn: int = 1, step: int = 1) -> tuple[Log, Message]:
    """A log through step/start and the prompts, and the reading the producer makes for it."""
    log = Log()
    log.add("turn/start", {"turn": turn}, BASE - 5000)
    before = list(log.events)
    for s in range(1, step):
        log.add("step/start", {"turn": turn, "step": s}, BASE - 4000)
        log.add("step/end", {"turn": turn, "step": s}, BASE - 3000)
        before = list(log.events)
    batch = [prompt(z) for z in zones]
    reading = time_reading(
        events=before,
        batch=batch,
        turn=turn,
        step=step,
        now_ms=BASE,
        settings=TimeContextSettings(enabled=True),
        fallback_zone="UTC",
    )
    assert reading is not None
    log.add("step/start", {"turn": turn, "step": step}, BASE)
    for message in batch:
        log.message(message)
    return log, reading


def with_text(message: Message, text: str) -> dict[str, Any]:
    data = message.to_json()
    data["content"] = [{"type": "text", "text": text}]
    data["source"]["sections"] = [{"name": "time-context", "text": text}]
    return data


@pytest.mark.parametrize("zones", [["Asia/Shanghai"], [None], ["UTC", "Asia/Shanghai"], []])
def test_time_valid_readings_pass(zones: list[str | None]) -> None:
    log, reading = time_step(zones)
    validate_event(log.pending(reading), log.events)
    validate_event(log.pending(reading, time=BASE + 86_400_000), log.events)  # a long pause


def test_time_valid_later_step_passes() -> None:
    log, reading = time_step(["Asia/Shanghai"], step=3)
    assert "step 3" in reading.text and "preceding step context" in reading.text
    validate_event(log.pending(reading), log.events)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["content"].append({"type": "text", "text": "x"}),
        lambda d: d["content"][0].update(extra=1),
        lambda d: d["content"][0].update(type="other"),
        lambda d: d["content"][0].update(text=5),
        lambda d: d.update(content=[]),
        lambda d: d.update(content="text"),
    ],
)
def test_time_content_must_be_one_text_block(mutate: Callable[[dict[str, Any]], None]) -> None:
    log, reading = time_step(["Asia/Shanghai"])
    data = reading.to_json()
    mutate(data)
    violation(
        TIME_PKG,
        log.pending(data),
        log.events,
        "time-context messages must contain exactly one text block",
    )


def _replace_line(text: str, index: int, line: str | None) -> str:
    lines = text.split("\n")
    if line is None:
        del lines[index]
    else:
        lines[index] = line
    return "\n".join(lines)


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: _replace_line(t, 1, None),  # upstream T's two-line reading
        lambda t: t + "\n",
        lambda t: t.replace("+08:00[", "+08:00:00["),
        lambda t: t.replace("[Asia/Shanghai]", ""),
        lambda t: t.replace(": unavailable.", ": 1h1s."),
        lambda t: t.replace("turn 1", "turn １"),  # JS \d is ASCII only
        lambda t: _replace_line(t, 1, "Browser time zone for this request: "),
        lambda t: t.replace("for this request: Asia", "for this request: \u2028Asia"),
    ],
)
def test_time_text_must_match_the_reading_format(edit: Callable[[str], str]) -> None:
    log, reading = time_step(["Asia/Shanghai"])
    violation(
        TIME_PKG,
        log.pending(with_text(reading, edit(reading.text))),
        log.events,
        "time-context message does not match the durable reading format",
    )


@pytest.mark.parametrize("turn", ["0", "9007199254740992", "0" * 30 + "1" * 30])
def test_time_turn_and_step_must_be_positive_safe_integers(turn: str) -> None:
    log, reading = time_step(["Asia/Shanghai"])
    text = reading.text.replace("turn 1,", f"turn {turn},")
    violation(
        TIME_PKG,
        log.pending(with_text(reading, text)),
        log.events,
        "time-context turn and step must be positive safe integers",
    )


def test_time_position_checks() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    event = log.pending(reading)
    violation(TIME_PKG, event, [], "time-context reading must be appended inside an open turn")
    closed = [*log.events, Event(99, "turn/end", BASE, {"turn": 1, "reason": "done"})]
    violation(TIME_PKG, event, closed, "time-context reading must be appended inside an open turn")
    violation(TIME_PKG, event, log.events[:1], "time-context reading must follow step/start")
    ended = [*log.events, Event(99, "step/end", BASE, {"turn": 1, "step": 1})]
    violation(TIME_PKG, event, ended, "time-context reading must follow step/start")
    requested = [
        *log.events,
        Event(99, "request/header", BASE, {"header": {}, "reason": "initial"}),
    ]
    violation(TIME_PKG, event, requested, "time-context reading must precede request/header")


def test_time_turn_and_step_must_be_the_open_ones() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    text = reading.text.replace("turn 1, step 1", "turn 2, step 1")
    violation(
        TIME_PKG,
        log.pending(with_text(reading, text)),
        log.events,
        "time-context reading names turn 2/step 1, expected turn 1/step 1",
    )
    text = reading.text.replace("turn 1, step 1", "turn 1, step 4")
    violation(
        TIME_PKG,
        log.pending(with_text(reading, text)),
        log.events,
        "time-context reading names turn 1/step 4, expected turn 1/step 1",
    )


@pytest.mark.parametrize(
    "mutate",
    [
        lambda s: s.update(rpcId="r1"),
        lambda s: s.update(form="notice"),
        lambda s: s.pop("form"),
        lambda s: s.update(sections=[]),
        lambda s: s.update(sections={"0": s["sections"][0]}),
        lambda s: s["sections"].append(dict(s["sections"][0])),
        lambda s: s["sections"][0].update(name="tmux-context"),
        lambda s: s["sections"][0].update(text="other"),
        lambda s: s["sections"][0].update(extra=True),
    ],
)
def test_time_source_must_be_the_exact_snapshot(mutate: Callable[[dict[str, Any]], None]) -> None:
    log, reading = time_step(["Asia/Shanghai"])
    data = reading.to_json()
    data["source"] = copy.deepcopy(data["source"])
    mutate(data["source"])
    violation(
        TIME_PKG,
        log.pending(data),
        log.events,
        "time-context source must carry only the exact snapshot text, not request authority",
    )


def test_time_browser_line_must_match_current_turn_messages() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    log.message(prompt("America/New_York"))  # a second zone makes the request mixed
    violation(
        TIME_PKG,
        log.pending(reading),
        log.events,
        "time-context browser-zone text does not match current-turn user messages",
    )
    missing, _ = time_step([None])
    violation(
        TIME_PKG,
        missing.pending(reading),
        missing.events,
        "time-context browser-zone text does not match current-turn user messages",
    )


def test_time_invalid_zone_in_history_is_a_violation() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    log.message(prompt("Etc/UTC"))
    violation(
        TIME_PKG, log.pending(reading), log.events, 'browser time zone must be canonical: "Etc/UTC"'
    )


def test_time_baseline_phrase_must_match_the_step() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    text = reading.text.replace("preceding model-visible message", "preceding step context")
    violation(
        TIME_PKG,
        log.pending(with_text(reading, text)),
        log.events,
        'time-context step 1 uses the wrong elapsed-time baseline "step context"',
    )
    later, later_reading = time_step(["Asia/Shanghai"], step=2)
    text = later_reading.text.replace("preceding step context", "preceding model-visible message")
    violation(
        TIME_PKG,
        later.pending(with_text(later_reading, text)),
        later.events,
        'time-context step 2 uses the wrong elapsed-time baseline "model-visible message"',
    )


def test_time_timestamp_must_parse_and_not_postdate_the_event() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    message = "time-context rendered timestamp must parse and not postdate its durable event"
    violation(TIME_PKG, log.pending(reading, time=BASE - 1000), log.events, message)
    stamp = reading.text.split(": ", 1)[1].split("\n")[0]
    bad = reading.text.replace(stamp[:10], "2026-13-40")
    violation(TIME_PKG, log.pending(with_text(reading, bad)), log.events, message)


def test_time_timestamp_must_be_formatted_in_the_unique_browser_zone() -> None:
    log, reading = time_step(["Asia/Shanghai"])
    stamp = reading.text.split(": ", 1)[1].split("\n")[0]
    assert stamp == "2026-07-14T11:33:20+08:00[Asia/Shanghai]"
    same_instant_utc = reading.text.replace(stamp, "2026-07-14T03:33:20+00:00[Asia/Shanghai]")
    violation(
        TIME_PKG,
        log.pending(with_text(reading, same_instant_utc)),
        log.events,
        "time-context rendered timestamp does not match the unique browser zone",
    )
    wrong_name = reading.text.replace(stamp, "2026-07-14T11:33:20+08:00[Asia/Chongqing]")
    violation(
        TIME_PKG,
        log.pending(with_text(reading, wrong_name)),
        log.events,
        "time-context rendered timestamp does not match the unique browser zone",
    )


def test_time_fallback_zone_of_mixed_readings_is_not_validated() -> None:
    log, reading = time_step(["UTC", "Asia/Shanghai"])
    stamp = reading.text.split(": ", 1)[1].split("\n")[0]
    other = reading.text.replace(stamp, "2026-07-13T23:33:20-04:00[America/New_York]")
    validate_event(log.pending(with_text(reading, other)), log.events)


# --- tmux-context ---------------------------------------------------------------------------

LOCATION = TmuxLocation("work", "3", 'ed "x"\\y 中', "0", "%5", "1", "0", "aafd,120x40,0,0,0")


def tmux_message(turn: int = 1, location: TmuxLocation = LOCATION) -> Message:
    message = tmux_reading(
        events=[],
        turn=turn,
        step=1,
        now_ms=BASE,
        settings=TmuxContextSettings(enabled=True),
        query=lambda: location,
        warn=lambda _: None,
    )
    assert message is not None
    return message


def tmux_with_text(text: str) -> dict[str, Any]:
    data = tmux_message().to_json()
    data["content"] = [{"type": "text", "text": text}]
    data["source"]["sections"] = [{"name": "tmux-context", "text": text}]
    return data


def test_tmux_valid_readings_pass() -> None:
    log = Log()
    validate_event(log.pending(tmux_message()), [])
    odd = TmuxLocation("", "", "a\tb\u2028\ud800", "", "%1", "", "", "")
    validate_event(log.pending(tmux_message(12, odd)), [])
    upstream = TmuxLocation(
        "0",
        "1",
        "node",
        "2",
        "%90",
        "1",
        "0",
        "d517,270x71,0,0{135x71,0,0,87,134x71,136,0[134x35,136,0,90,134x35,136,36,93]}",
    )
    validate_event(log.pending(tmux_message(1, upstream)), [])


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["content"].append({"type": "text", "text": "x"}),
        lambda d: d["content"][0].update(extra=1),
        lambda d: d.update(content=[{"type": "image"}]),
    ],
)
def test_tmux_content_must_be_one_text_block(mutate: Callable[[dict[str, Any]], None]) -> None:
    data = tmux_message().to_json()
    mutate(data)
    violation(
        TMUX_PKG,
        Log().pending(data),
        [],
        "tmux-context messages must contain exactly one text block",
    )


@pytest.mark.parametrize(
    "text",
    [
        'tmux location (turn 1):\nsession work, window 3 "ed", pane 0 %5',  # two lines
        render_tmux_reading(1, LOCATION) + "\n",
        render_tmux_reading(1, LOCATION).replace('"ed \\"x\\"\\\\y 中"', "ed"),  # unquoted name
        render_tmux_reading(1, LOCATION).replace('\\"x\\"', '"x"'),  # invalid JSON string
        render_tmux_reading(1, LOCATION).replace(" %5", " "),  # empty pane id
        render_tmux_reading(1, LOCATION).replace("tmux location", "Tmux location"),
        render_tmux_reading(1, LOCATION).replace("window 3", "window three"),
    ],
)
def test_tmux_text_must_match_the_three_line_format(text: str) -> None:
    violation(
        TMUX_PKG,
        Log().pending(tmux_with_text(text)),
        [],
        "tmux-context message does not match the location reading format",
    )


def test_tmux_turn_must_be_positive() -> None:
    text = render_tmux_reading(0, LOCATION)
    violation(
        TMUX_PKG,
        Log().pending(tmux_with_text(text)),
        [],
        "tmux-context turn must be a positive safe integer",
    )


@pytest.mark.parametrize(
    "mutate",
    [
        lambda s: (s.pop("form"), s.pop("sections")),  # upstream README's shape
        lambda s: s.update(form="notice"),
        lambda s: s["sections"][0].update(text="other"),
        lambda s: s["sections"][0].update(name="time-context"),
        lambda s: s.update(extra=1),
    ],
)
def test_tmux_source_must_be_the_exact_snapshot(mutate: Callable[[dict[str, Any]], None]) -> None:
    data = tmux_message().to_json()
    data["source"] = copy.deepcopy(data["source"])
    mutate(data["source"])
    violation(
        TMUX_PKG,
        Log().pending(data),
        [],
        "tmux-context source must carry only the exact snapshot text",
    )


# --- session-reference ----------------------------------------------------------------------


def recall_message() -> Message:
    def read(session_id: str) -> SurfaceSnapshot:
        data = {
            "id": "u",
            "role": "user",
            "content": [{"type": "text", "text": f"hi <{session_id}>"}],
            "source": {"kind": "user"},
        }
        event = Event(0, "user/message", 1, data, "append")
        return SurfaceSnapshot(SessionHeader(session_id, 1, "/w"), 4, (event,))

    _, context = prepare(
        target_id="t",
        content=[],
        references=[{"sessionId": "a", "label": "A"}, {"sessionId": "b"}],
        read_surface=read,
        settings=SessionReferenceSettings(),
    )
    assert context is not None
    return context


def recall_data() -> dict[str, Any]:
    return copy.deepcopy(recall_message().to_json())


def test_recall_valid_passes() -> None:
    validate_event(Log().pending(recall_message()), [])


REFERENCE_FIELDS_MESSAGE = (
    "must have exactly the fields sessionId, label, capturedThroughSeq, compacted, "
    "originalMessages, retainedMessages, omittedMessages, omittedBytes, truncated, inputIndex "
    "in this order"
)


def _reorder(ref: dict[str, Any]) -> None:
    items = list(ref.items())
    ref.clear()
    ref.update(dict(items[1:] + items[:1]))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda s: s.pop("form"),
            "session-reference source must be exactly {kind, form: 'recall', version: 1, references}",
        ),
        (
            lambda s: s.update(form="snapshot"),
            "session-reference source must be exactly {kind, form: 'recall', version: 1, references}",
        ),
        (
            lambda s: s.update(version=2),
            "session-reference source must be exactly {kind, form: 'recall', version: 1, references}",
        ),
        (
            lambda s: s.update(version=True),
            "session-reference source must be exactly {kind, form: 'recall', version: 1, references}",
        ),
        (
            lambda s: s.update(extra=1),
            "session-reference source must be exactly {kind, form: 'recall', version: 1, references}",
        ),
        (
            lambda s: s.update(references=[]),
            "session-reference references must be a non-empty array of at most 3 distinct sessions",
        ),
        (
            lambda s: s.update(references=s["references"] * 2),
            "session-reference references must be a non-empty array of at most 3 distinct sessions",
        ),
        (
            lambda s: s["references"][1].update(sessionId="a"),
            "session-reference references must be a non-empty array of at most 3 distinct sessions",
        ),
        (
            lambda s: _reorder(s["references"][0]),
            "session-reference reference 0 " + REFERENCE_FIELDS_MESSAGE,
        ),
        (
            lambda s: s["references"][1].update(inputIndex=0),
            "session-reference reference 1 " + REFERENCE_FIELDS_MESSAGE,
        ),
        (
            lambda s: s["references"][0].pop("truncated"),
            "session-reference reference 0 " + REFERENCE_FIELDS_MESSAGE,
        ),
        (
            lambda s: s["references"][0].update(omittedBytes=-1),
            "session-reference reference 0 " + REFERENCE_FIELDS_MESSAGE,
        ),
        (
            lambda s: s["references"][0].update(compacted=1),
            "session-reference reference 0 " + REFERENCE_FIELDS_MESSAGE,
        ),
        (
            lambda s: s["references"][0].update(omittedMessages=1),
            "session-reference reference 0 has inconsistent retention statistics",
        ),
        (
            lambda s: s["references"][1].update(truncated=True),
            "session-reference reference 1 has inconsistent retention statistics",
        ),
    ],
)
def test_recall_source_violations(mutate: Callable[[dict[str, Any]], Any], message: str) -> None:
    data = recall_data()
    mutate(data["source"])
    violation(REF_PKG, Log().pending(data), [], message)


def _payload_edit(edit: Callable[[list[dict[str, Any]]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        text = data["content"][0]["text"]
        head, rest = text.split("<referenced-sessions>\n", 1)
        body, tail = rest.rsplit("\n</referenced-sessions>", 1)
        payload = json.loads(body)
        edit(payload)
        new_body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace(
            "<", "\\u003c"
        )
        data["content"][0]["text"] = (
            f"{head}<referenced-sessions>\n{new_body}\n</referenced-sessions>{tail}"
        )

    return apply


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["content"].append({"type": "text", "text": "x"}),
            "session-reference messages must contain exactly one text block",
        ),
        (
            lambda d: d["content"][0].update(extra=1),
            "session-reference messages must contain exactly one text block",
        ),
        (
            lambda d: d["content"][0].update(
                text=d["content"][0]["text"].replace("## Referenced", "## Other")
            ),
            "session-reference text must be the tag-safe referenced-sessions snapshot",
        ),
        (
            lambda d: d["content"][0].update(text=d["content"][0]["text"].replace("\\u003c", "<")),
            "session-reference text must be the tag-safe referenced-sessions snapshot",
        ),
        (
            lambda d: d["content"][0].update(
                text=d["content"][0]["text"].replace("\\u003c", "\uff1c")
            ),
            "session-reference text must be the tag-safe referenced-sessions snapshot",
        ),
        (
            lambda d: d["content"][0].update(
                text=d["content"][0]["text"].replace("\\u003c", "\ufe64")
            ),
            "session-reference text must be the tag-safe referenced-sessions snapshot",
        ),
        (
            lambda d: d["content"][0].update(
                text=d["content"][0]["text"] + "\n</referenced-sessions>"
            ),
            "session-reference text must be the tag-safe referenced-sessions snapshot",
        ),
        (
            lambda d: d["content"][0].update(
                text=d["content"][0]["text"].replace('"conversation"', '"conv"')
            ),
            "session-reference text must be the tag-safe referenced-sessions snapshot",
        ),
        (
            _payload_edit(lambda p: p[0].update(sessionId="z")),
            "session-reference snapshot does not match its source references",
        ),
        (
            _payload_edit(lambda p: p[1].update(label="other")),
            "session-reference snapshot does not match its source references",
        ),
        (
            _payload_edit(lambda p: p[0]["conversation"].append({"role": "user", "text": "x"})),
            "session-reference snapshot does not match its source references",
        ),
        (
            _payload_edit(lambda p: p.__delitem__(-1)),
            "session-reference snapshot does not match its source references",
        ),
    ],
)
def test_recall_content_violations(mutate: Callable[[dict[str, Any]], Any], message: str) -> None:
    data = recall_data()
    mutate(data)
    violation(REF_PKG, Log().pending(data), [], message)


def test_recall_payload_edit_helper_round_trips() -> None:
    data = recall_data()
    _payload_edit(lambda p: None)(data)
    validate_event(Log().pending(data), [])


# --- agent-instructions ---------------------------------------------------------------------

DIGEST = "9538a14d03e2db0031a3dbb5a9dc48d28eed151d"
IDENTITY = '{"projectRoot":"","projectRootMarkers":[".git"],"maxBytes":65536}'
BASELINE_TEXT = (
    "<system-reminder>\nThe following workspace instructions may be relevant to your work.\n\n"
    "Instructions from: AGENTS.md\n\nrepo rule\n</system-reminder>"
)
REMOVED_TEXT = (
    "<system-reminder>\nInstructions removed: pkg/AGENTS.md\n\n"
    "The previously loaded instructions from this file no longer apply.\n</system-reminder>"
)


def instructions(
    texts: list[str], changes: list[dict[str, Any]], baseline: bool = False
) -> dict[str, Any]:
    source: dict[str, Any] = {"kind": "agent-instructions", "form": "instructions"}
    if baseline:
        source.update(baseline=True, baselineIdentity=IDENTITY)
    source["changes"] = changes
    return {
        "id": "i1",
        "role": "user",
        "content": [{"type": "text", "text": t} for t in texts],
        "source": source,
    }


SET = {"action": "set", "scope": ".\u0000AGENTS.md", "path": "AGENTS.md", "digest": DIGEST}
REMOVE = {"action": "remove", "scope": "pkg\u0000AGENTS.md", "path": "pkg/AGENTS.md"}


@pytest.mark.parametrize(
    "data",
    [
        instructions([BASELINE_TEXT], [SET], baseline=True),
        instructions([BASELINE_TEXT, REMOVED_TEXT], [SET, REMOVE], baseline=True),
        instructions([BASELINE_TEXT], [], baseline=True),  # only a budget diagnostic
        instructions([REMOVED_TEXT], [REMOVE]),
        instructions(
            [
                "Workspace instruction budget 100 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes"
            ],
            [SET],
        ),
        instructions(["Workspace instructio"], [SET]),  # a notice cut to the budget
        instructions(["<system-reminder>\nx <\\/system-reminder> y\n</system-reminder>"], [SET]),
    ],
)
def test_instructions_valid_pass(data: dict[str, Any]) -> None:
    validate_event(Log().pending(data), [])


SOURCE_MESSAGE = (
    "agent-instructions source must be {kind, form: 'instructions', changes} with an optional "
    "baseline: true carried together with a string baselineIdentity"
)


def change_message(index: int) -> str:
    return (
        f"agent-instructions change {index} must be {{action, scope, path, digest?}} with a known "
        "action, a scope holding one NUL, and a 40-hex digest exactly when the action is not remove"
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.update(form="snapshot"), SOURCE_MESSAGE),
        (lambda s: s.update(kind="workspace-instructions"), None),  # not ours: passes
        (lambda s: s.update(baseline=False), SOURCE_MESSAGE),
        (lambda s: s.pop("baselineIdentity"), SOURCE_MESSAGE),
        (lambda s: s.pop("baseline"), SOURCE_MESSAGE),
        (lambda s: s.update(baselineIdentity=5), SOURCE_MESSAGE),
        (lambda s: s.update(version=1), SOURCE_MESSAGE),
        (lambda s: s.update(changes={"0": SET}), SOURCE_MESSAGE),
        (lambda s: s["changes"][0].update(action="add"), change_message(0)),
        (lambda s: s["changes"][0].update(scope="AGENTS.md"), change_message(0)),
        (lambda s: s["changes"][0].update(scope="a\u0000b\u0000c"), change_message(0)),
        (lambda s: s["changes"][0].update(path=None), change_message(0)),
        (lambda s: s["changes"][0].update(digest=DIGEST.upper()), change_message(0)),
        (lambda s: s["changes"][0].update(digest=DIGEST[:39]), change_message(0)),
        (lambda s: s["changes"][0].pop("digest"), change_message(0)),
        (lambda s: s["changes"][0].update(extra=1), change_message(0)),
        (lambda s: s["changes"].append({**REMOVE, "digest": DIGEST}), change_message(1)),
        (lambda s: s["changes"].append("remove"), change_message(1)),
    ],
)
def test_instructions_source_violations(
    mutate: Callable[[dict[str, Any]], Any], message: str | None
) -> None:
    data = instructions([BASELINE_TEXT], [dict(SET)], baseline=True)
    mutate(data["source"])
    event = Log().pending(data)
    if message is None:
        validate_event(event, [])
    else:
        violation(AI_PKG, event, [], message)


BLOCKS_MESSAGE = (
    "agent-instructions messages must contain one text block, or two when they carry a baseline"
)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (instructions([REMOVED_TEXT, REMOVED_TEXT], [REMOVE]), BLOCKS_MESSAGE),
        (instructions([BASELINE_TEXT] * 3, [SET], baseline=True), BLOCKS_MESSAGE),
        (instructions([], [REMOVE]), BLOCKS_MESSAGE),
        (
            {**instructions([REMOVED_TEXT], [REMOVE]), "content": [{"type": "image"}]},
            BLOCKS_MESSAGE,
        ),
        (
            instructions(["repo rule"], [SET]),
            "agent-instructions text block 0 must be one <system-reminder> frame or an unframed budget notice",
        ),
        (
            instructions([""], [SET]),
            "agent-instructions text block 0 must be one <system-reminder> frame or an unframed budget notice",
        ),
        (
            instructions(
                [BASELINE_TEXT, "<system-reminder>\nx</system-reminder>\n</system-reminder>"],
                [SET],
                baseline=True,
            ),
            "agent-instructions text block 1 must be one <system-reminder> frame or an unframed budget notice",
        ),
        (
            instructions(["<system-reminder>\nopen only"], [SET]),
            "agent-instructions text block 0 must be one <system-reminder> frame or an unframed budget notice",
        ),
        (
            instructions(["Workspace instruction budget 9 bytes </system-reminder>"], [SET]),
            "agent-instructions text block 0 must be one <system-reminder> frame or an unframed budget notice",
        ),
    ],
)
def test_instructions_content_violations(data: dict[str, Any], message: str) -> None:
    violation(AI_PKG, Log().pending(data), [], message)

"""The exact strings of docs/reference are the ones the code produces.

The unit tests of each source assert the code against literal upstream text; this file asserts
the reference pages against the code, so neither can drift from the other unnoticed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dsh_sidecar.sources import tmux_context
from dsh_sidecar.sources.agent_instructions import render as r
from dsh_sidecar.sources.session_reference.prompt import PREFIX, SUFFIX, render_prompt
from dsh_sidecar.sources.time_context import format_duration, format_timestamp, render_reading

REFERENCE = Path(__file__).resolve().parent.parent.parent / "docs" / "reference"
FENCED = re.compile(r"^```[a-z]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SPAN = re.compile(r"`([^`\n]+)`")


def page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def section_of(name: str, heading: str) -> str:
    """The text of one ``## heading`` section of a page (a ``##`` inside a code block is text)."""
    kept: list[str] = []
    inside = fenced = False
    for line in page(name).splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            inside = line == f"## {heading}"
        if inside:
            kept.append(line)
    assert kept, f"{name} has no section {heading!r}"
    return "\n".join(kept) + "\n"


def blocks(text: str) -> list[str]:
    """Fenced code blocks, without their final newline."""
    return [b[:-1] if b.endswith("\n") else b for b in FENCED.findall(text)]


def spans(text: str) -> list[str]:
    return SPAN.findall(text)


def unmark(text: str) -> str:
    return text.replace("⏎", "\n")


def baseline(path: str, content: str) -> r.RenderItem:
    return r.RenderItem("baseline", path, content)


# --- agent-instructions ---------------------------------------------------------------------------


def test_templates_are_what_the_renderer_writes() -> None:
    templates = blocks(section_of("agent-instructions.md", "Templates"))
    t1 = r.render(
        [baseline("AGENTS.md", "root rules"), baseline("pkg/CLAUDE.md", "package rules")],
        65536,
        r.BASELINE_INTRO,
    ).text
    assert t1 in templates
    assert r.REPLACEMENT_INTRO in templates
    assert r.EMPTY_REPLACEMENT_BASELINE in templates
    assert len(r.EMPTY_REPLACEMENT_BASELINE.encode()) == 183
    assert (
        r.frame(r.section(r.RenderItem("set", "{file.displayPath}", "{content}", "{scopeDir}")))
        in templates
    )
    assert r.frame(r.section(r.RenderItem("replace", "{change.path}", "{content}"))) in templates
    assert r.frame(r.section(r.RenderItem("remove", "{change.path}"))) in templates
    assert r.COMPACT_INTRO in templates
    assert r.render([baseline("pkg/AGENTS.md", "")], 300, r.BASELINE_INTRO).text in templates


def test_frameless_fallbacks_are_what_the_renderer_writes() -> None:
    t9 = [unmark(s) for s in spans(section_of("agent-instructions.md", "Templates"))]
    big = baseline("pkg/AGENTS.md", "x" * 1000)
    for budget in (100, 120, 20):
        assert r.render([big], budget, r.BASELINE_INTRO).text in t9, budget
    assert len(r.render([big], 120, r.BASELINE_INTRO).text.encode()) == 120
    marker = r.budget_marker(300, ["{p1}", "{p2}"], [r.Truncation("{p}", 1, 2)])
    shown = marker.replace(" 1 ", " {orig} ").replace(" 2 bytes", " {incl} bytes")
    assert shown.replace("300", "{maxBytes}") in blocks(
        section_of("agent-instructions.md", "Templates")
    )


def test_identity_example_is_what_discovery_writes() -> None:
    from dsh_sidecar.config import InstructionSettings
    from dsh_sidecar.sources.agent_instructions.discovery import baseline_identity

    identity = baseline_identity("/p", "/p", InstructionSettings())
    assert identity in blocks(section_of("agent-instructions.md", "Baseline identity"))


# --- session-reference ----------------------------------------------------------------------------


def test_prompt_prefix_suffix_and_golden() -> None:
    prompt = section_of("session-reference.md", "Prompt")
    assert PREFIX in [b + "\n" for b in blocks(prompt)]
    assert f'`"{SUFFIX.encode("unicode_escape").decode()}"`' in prompt
    golden = render_prompt(
        [
            {
                "sessionId": "source",
                "label": "Research",
                "cwd": "/source",
                "capturedThroughSeq": 3,
                "conversation": [
                    {"role": "user", "text": "hello <b>"},
                    {"role": "assistant", "text": 'hi "there"\nline2'},
                ],
            }
        ]
    )
    assert json.dumps(golden, ensure_ascii=False) in blocks(prompt)


# --- time-context ---------------------------------------------------------------------------------


def test_reading_lines_durations_and_timestamps() -> None:
    reading = section_of("time-context.md", "Reading text")
    assert (
        render_reading(turn=0, step=1, timestamp="T", browser_line="B", elapsed="E")
        .replace("turn 0, step 1: T", "turn <turn>, step <step>: <timestamp>")
        .replace("\nB\n", "\n<browser-zone line>\n")
        .replace("model-visible message: E", "<baseline>: <elapsed>")
    ) in blocks(reading)
    durations = section_of("time-context.md", "Duration format")
    rows = re.findall(r"^\| (−?[\d ]+) \| `([^`]+)` \|$", durations, re.MULTILINE)
    assert len(rows) == 13
    for ms, shown in rows:
        assert format_duration(int(ms.replace(" ", "").replace("−", "-"))) == shown
    stamps = section_of("time-context.md", "Timestamp format")
    base = 1_783_987_200_000  # 2026-07-14T00:00:00Z
    for zone in ("UTC", "Asia/Shanghai", "America/New_York", "Europe/London", "Etc/GMT+5"):
        assert f"`{format_timestamp(base, zone)}`" in stamps, zone
    assert format_timestamp(base + 90_061_000, "Asia/Shanghai") in stamps


# --- tmux-context ---------------------------------------------------------------------------------


def test_query_command_and_reading_golden() -> None:
    command = tmux_context.tmux_command(4242).replace("4242", "<PID>")
    assert command.replace(tmux_context.FORMAT, "<FORMAT>") in blocks(
        section_of("tmux-context.md", "Query")
    )
    text = section_of("tmux-context.md", "Reading text")
    line = "0\\t1\\tnode\\t2\\t%90\\t1\\t0\\td517,270x71,0,0{135x71,0,0,87,134x71,136,0[134x35,136,0,90,134x35,136,36,93]}"
    location = tmux_context.parse_tmux_output(line)
    assert location is not None
    golden = tmux_context.render_tmux_reading(1, location)
    assert "\n".join("  " + row for row in golden.splitlines()) in text

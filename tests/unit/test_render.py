"""Byte-exact tests for the agent-instructions renderer.

Upstream behaviour: docs/reference/agent-instructions.md, Rendering and budget; and Templates.

Expected strings are written out from the reference, never taken from the module's own constants,
so a drifted template fails here. Budgets that sit on a boundary are derived with explicit
arithmetic on the literal pieces of the expected text.
"""

from __future__ import annotations

import math

import attrs
import pytest
from tests.support.instrkit import COMPACT, INTRO, REPLACES

from dsh_sidecar.jsutil import utf8_len
from dsh_sidecar.sources.agent_instructions.render import (
    BASELINE_INTRO,
    COMPACT_INTRO,
    EMPTY_REPLACEMENT_BASELINE,
    REPLACEMENT_INTRO,
    RenderItem,
    RenderResult,
    Truncation,
    budget_marker,
    cut_utf8,
    escape,
    frame,
    render,
    section,
)

PKG_SET_GUIDANCE = (
    "These instructions apply to work under `pkg`. Use them as guidance when relevant; more "
    "specific instructions take precedence. They do not override system, developer, or direct "
    "user instructions."
)
REPLACE_GUIDANCE = (
    "This file changed after it was loaded. Use the following content instead of the previously "
    "loaded instructions from this file."
)
REMOVE_GUIDANCE = "The previously loaded instructions from this file no longer apply."

OPEN = "<system-reminder>"
CLOSE = "</system-reminder>"
ESCAPED = "<\\/system-reminder>"
PKG = "pkg/AGENTS.md"
X1000 = "x" * 1000


def lines(*parts: str) -> str:
    return "\n".join(parts)


def baseline(path: str, content: str) -> RenderItem:
    return RenderItem("baseline", path, content)


# --- constants and templates --------------------------------------------------------------


def test_intro_constants_are_the_reference_text() -> None:
    assert BASELINE_INTRO == INTRO
    assert REPLACEMENT_INTRO == REPLACES + " " + INTRO
    assert COMPACT_INTRO == COMPACT


def test_empty_replacement_baseline_is_t3() -> None:
    t3 = lines(
        "<system-reminder>",
        "This complete workspace instruction baseline replaces all earlier workspace instruction "
        "baselines. No workspace instructions are currently active.",
        "</system-reminder>",
    )
    assert t3 == EMPTY_REPLACEMENT_BASELINE


def test_t1_two_file_baseline() -> None:
    items = [baseline("AGENTS.md", "root rules"), baseline("pkg/CLAUDE.md", "package rules")]

    result = render(items, 65536, BASELINE_INTRO)

    assert result.text == lines(
        "<system-reminder>",
        "The following workspace instructions may be relevant to your work. Use them as guidance "
        "when applicable. More specific instructions take precedence over broader ones. They do "
        "not override system, developer, or direct user instructions.",
        "",
        "Instructions from: AGENTS.md",
        "",
        "root rules",
        "",
        "Instructions from: pkg/CLAUDE.md",
        "",
        "package rules",
        "</system-reminder>",
    )
    assert result == RenderResult(result.text, (), (), frozenset({0, 1}))


def test_replacement_intro_replaces_the_normal_intro() -> None:
    result = render([baseline("AGENTS.md", "root rules")], 65536, REPLACEMENT_INTRO)

    assert result.text == lines(
        OPEN,
        REPLACES + " " + INTRO,
        "",
        "Instructions from: AGENTS.md",
        "",
        "root rules",
        CLOSE,
    )


def test_t4_set_for_a_root_file_renders_dot_scope() -> None:
    item = RenderItem("set", "AGENTS.md", "root rules", scope_dir=".")

    assert render([item], 65536, None).text == lines(
        "<system-reminder>",
        "Additional instructions from: AGENTS.md",
        "",
        "These instructions apply to work under `.`. Use them as guidance when relevant; more "
        "specific instructions take precedence. They do not override system, developer, or "
        "direct user instructions.",
        "",
        "root rules",
        "</system-reminder>",
    )


def test_t4_set_for_the_user_global_file_renders_user_global_scope() -> None:
    item = RenderItem("set", "~/.dsh/AGENTS.md", "global rules", scope_dir="user-global")

    assert render([item], 65536, None).text == lines(
        "<system-reminder>",
        "Additional instructions from: ~/.dsh/AGENTS.md",
        "",
        "These instructions apply to work under `user-global`. Use them as guidance when "
        "relevant; more specific instructions take precedence. They do not override system, "
        "developer, or direct user instructions.",
        "",
        "global rules",
        "</system-reminder>",
    )


def test_t5_replace() -> None:
    item = RenderItem("replace", PKG, "new rules")

    assert render([item], 65536, None).text == lines(
        "<system-reminder>",
        "Updated instructions from: pkg/AGENTS.md",
        "",
        "This file changed after it was loaded. Use the following content instead of the "
        "previously loaded instructions from this file.",
        "",
        "new rules",
        "</system-reminder>",
    )


def test_t6_remove_ignores_content() -> None:
    item = RenderItem("remove", PKG, "stale text that must not appear")

    result = render([item], 65536, None)

    assert result.text == lines(
        "<system-reminder>",
        "Instructions removed: pkg/AGENTS.md",
        "",
        "The previously loaded instructions from this file no longer apply.",
        "</system-reminder>",
    )
    assert result.represented == frozenset({0})


def test_dynamic_batch_is_one_frame_in_item_order_without_intro() -> None:
    items = [
        RenderItem("set", PKG, "a", scope_dir="pkg"),
        RenderItem("replace", "AGENTS.md", "b"),
        RenderItem("remove", "old/AGENTS.md"),
    ]

    assert render(items, 65536, None).text == lines(
        OPEN,
        "Additional instructions from: pkg/AGENTS.md",
        "",
        PKG_SET_GUIDANCE,
        "",
        "a",
        "",
        "Updated instructions from: AGENTS.md",
        "",
        REPLACE_GUIDANCE,
        "",
        "b",
        "",
        "Instructions removed: old/AGENTS.md",
        "",
        REMOVE_GUIDANCE,
        CLOSE,
    )


def test_content_is_inserted_verbatim_with_its_trailing_newlines() -> None:
    items = [baseline("AGENTS.md", "rule\n"), baseline(PKG, "leaf\n")]

    text = render(items, 65536, BASELINE_INTRO).text

    # "rule⏎" then the ⏎⏎ separator gives two blank lines; at the end one blank line.
    assert "rule\n\n\nInstructions from: pkg/AGENTS.md" in text
    assert text.endswith("leaf\n\n</system-reminder>")


def test_section_uses_the_override_content_and_keeps_the_trailing_blank_line() -> None:
    item = baseline(PKG, "rules")

    assert section(item) == "Instructions from: pkg/AGENTS.md\n\nrules"
    assert section(item, "") == "Instructions from: pkg/AGENTS.md\n\n"
    assert section(RenderItem("remove", PKG, "x"), "y") == (
        "Instructions removed: pkg/AGENTS.md\n\n" + REMOVE_GUIDANCE
    )


def test_render_item_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError):
        RenderItem("delete", PKG)  # type: ignore[arg-type]


# --- T7 marker ----------------------------------------------------------------------------


def test_marker_omitted_only() -> None:
    assert budget_marker(65536, ["AGENTS.md", "CLAUDE.md"], []) == (
        "Workspace instruction budget 65536 bytes: omitted AGENTS.md, CLAUDE.md"
    )


def test_marker_truncated_only() -> None:
    assert budget_marker(260, [], [Truncation(PKG, 500, 12)]) == (
        "Workspace instruction budget 260 bytes: truncated pkg/AGENTS.md from 500 to 12 bytes"
    )


def test_marker_both_parts_joined_by_semicolon() -> None:
    marker = budget_marker(260, ["AGENTS.md"], [Truncation(PKG, 500, 12), Truncation("b", 3, 0)])

    assert marker == (
        "Workspace instruction budget 260 bytes: omitted AGENTS.md; "
        "truncated pkg/AGENTS.md from 500 to 12 bytes, b from 3 to 0 bytes"
    )


def test_marker_is_empty_when_nothing_was_dropped() -> None:
    assert budget_marker(260, [], []) == ""


@pytest.mark.parametrize(
    ("max_bytes", "shown"),
    [(65536, "65536"), (65536.0, "65536"), (300.5, "300.5"), (1e21, "1e+21"), (0.5, "0.5")],
)
def test_marker_formats_the_budget_like_javascript(max_bytes: float, shown: str) -> None:
    assert (
        budget_marker(max_bytes, ["a"], [])
        == f"Workspace instruction budget {shown} bytes: omitted a"
    )


def test_marker_is_returned_unescaped() -> None:
    assert CLOSE in budget_marker(10, [f"x{CLOSE}"], [])


# --- disabled budgets and empty input -----------------------------------------------------


@pytest.mark.parametrize("max_bytes", [0, -1, -0.5, math.inf, -math.inf, math.nan])
def test_non_positive_or_non_finite_budget_renders_nothing(max_bytes: float) -> None:
    items = [baseline("AGENTS.md", "a"), baseline(PKG, "b")]

    assert render(items, max_bytes, BASELINE_INTRO) == RenderResult(
        "", ("AGENTS.md", PKG), (), frozenset()
    )


def test_no_items_and_no_intro_renders_nothing() -> None:
    assert render([], 65536, None) == RenderResult("", (), (), frozenset())


def test_no_items_with_an_intro_frames_the_intro_only_when_it_fits() -> None:
    t3_intro = REPLACES + " No workspace instructions are currently active."
    t3 = lines(OPEN, t3_intro, CLOSE)

    assert render([], utf8_len(t3), t3_intro).text == t3
    assert render([], utf8_len(t3) - 1, t3_intro).text == ""


# --- step 2 and 3: whole files ------------------------------------------------------------


def test_full_build_fits_exactly_at_its_own_length() -> None:
    items = [baseline("AGENTS.md", "root rules"), baseline("pkg/CLAUDE.md", "package rules")]
    # open line 18, intro 235, sep 2, "Instructions from: AGENTS.md⏎⏎" 30, "root rules" 10, sep 2,
    # "Instructions from: pkg/CLAUDE.md⏎⏎" 34, "package rules" 13, close line 19.
    t1_bytes = 18 + len(INTRO) + 2 + 30 + 10 + 2 + 34 + 13 + 19
    assert t1_bytes == 363

    at_limit = render(items, t1_bytes, BASELINE_INTRO)

    assert utf8_len(at_limit.text) == 363
    assert at_limit.omitted == ()
    assert at_limit.represented == frozenset({0, 1})


def test_one_byte_short_of_full_reports_an_untruncated_last_file_as_truncated() -> None:
    # At 362, dropping AGENTS.md saves 42 bytes but adds a 57-byte marker and its separator, so
    # step 3 needs 380. The normal intro needs 425 with the truncation marker; the compact intro
    # (152 bytes shorter) fits the whole content in 273. Upstream still reports that as
    # "from 13 to 13 bytes", and so do we.
    items = [baseline("AGENTS.md", "root rules"), baseline("pkg/CLAUDE.md", "package rules")]

    result = render(items, 362, BASELINE_INTRO)

    assert result.text == lines(
        OPEN,
        "Workspace instruction budget 362 bytes: omitted AGENTS.md; "
        "truncated pkg/CLAUDE.md from 13 to 13 bytes",
        "",
        COMPACT,
        "",
        "Instructions from: pkg/CLAUDE.md",
        "",
        "package rules",
        CLOSE,
    )
    assert result.omitted == ("AGENTS.md",)
    assert result.truncated == (Truncation("pkg/CLAUDE.md", 13, 13),)
    assert result.represented == frozenset({1})


def test_longest_fitting_suffix_is_kept_whole() -> None:
    items = [
        baseline("AGENTS.md", "root " * 200),
        baseline(PKG, "package rule"),
        baseline("pkg/app/AGENTS.md", "app rule"),
    ]

    result = render(items, 760, BASELINE_INTRO)

    assert result.text == lines(
        OPEN,
        "Workspace instruction budget 760 bytes: omitted AGENTS.md",
        "",
        INTRO,
        "",
        "Instructions from: pkg/AGENTS.md",
        "",
        "package rule",
        "",
        "Instructions from: pkg/app/AGENTS.md",
        "",
        "app rule",
        CLOSE,
    )
    assert result.omitted == ("AGENTS.md",)
    assert result.truncated == ()
    assert result.represented == frozenset({1, 2})


def test_broader_files_are_dropped_first_even_when_small() -> None:
    # Dropping only the big middle file would fit, but precedence drops broadest first: the
    # small root file goes too, and the specific file is kept whole.
    items = [baseline("AGENTS.md", "tiny"), baseline(PKG, "y" * 500), baseline("pkg/app/A.md", "z")]
    expected = lines(
        OPEN,
        "Workspace instruction budget 400 bytes: omitted AGENTS.md, pkg/AGENTS.md",
        "",
        INTRO,
        "",
        "Instructions from: pkg/app/A.md",
        "",
        "z",
        CLOSE,
    )
    # open 18 + marker 72 + 2 + intro 235 + 2 + "Instructions from: pkg/app/A.md⏎⏎" 33 + 1 + close 19
    assert utf8_len(expected) == 18 + 72 + 2 + len(INTRO) + 2 + 33 + 1 + 19 == 382

    result = render(items, 400, BASELINE_INTRO)

    assert result.text == expected
    assert result.omitted == ("AGENTS.md", PKG)
    assert result.represented == frozenset({2})


def test_float_budget_of_65536_is_shown_without_decimal_point() -> None:
    items = [baseline("AGENTS.md", "a" * 70000), baseline(PKG, "leaf")]

    result = render(items, 65536.0, BASELINE_INTRO)

    assert result.text == lines(
        OPEN,
        "Workspace instruction budget 65536 bytes: omitted AGENTS.md",
        "",
        INTRO,
        "",
        "Instructions from: pkg/AGENTS.md",
        "",
        "leaf",
        CLOSE,
    )


# --- step 4: truncation of the last file --------------------------------------------------


def _largest_slice(budget_text: str, max_bytes: int) -> int:
    """Content bytes that fit beside the fixed parts, assuming a 3-digit included count."""
    marker = f"Workspace instruction budget {budget_text} bytes: truncated AGENTS.md from 1000 to "
    fixed = (
        len(OPEN + "\n")
        + len(marker)
        + 3
        + len(" bytes")
        + 2
        + len(INTRO)
        + 2
        + len("Instructions from: AGENTS.md\n\n")
        + len("\n" + CLOSE)
    )
    return max_bytes - fixed


def test_single_file_truncated_to_the_largest_slice_that_fits() -> None:
    kept = _largest_slice("700", 700)
    assert 100 <= kept <= 999 and kept == 312

    result = render([baseline("AGENTS.md", X1000)], 700, BASELINE_INTRO)

    assert result.text == lines(
        OPEN,
        f"Workspace instruction budget 700 bytes: truncated AGENTS.md from 1000 to {kept} bytes",
        "",
        INTRO,
        "",
        "Instructions from: AGENTS.md",
        "",
        "x" * kept,
        CLOSE,
    )
    assert utf8_len(result.text) == 700
    assert result.truncated == (Truncation("AGENTS.md", 1000, kept),)
    assert result.represented == frozenset({0})


def test_fractional_budget_cuts_to_the_integer_below_and_prints_the_fraction() -> None:
    # "700.5" is two bytes longer than "700" and 700.5 still only admits 700 whole bytes.
    kept = _largest_slice("700.5", 700)
    assert kept == 310

    result = render([baseline("AGENTS.md", X1000)], 700.5, BASELINE_INTRO)

    assert result.truncated == (Truncation("AGENTS.md", 1000, kept),)
    assert result.text.startswith(
        f"{OPEN}\nWorkspace instruction budget 700.5 bytes: truncated AGENTS.md from 1000 to 310 "
    )
    assert utf8_len(result.text) == 700


def test_spec_260_case_fits_exactly_with_zero_content_bytes() -> None:
    items = [baseline("AGENTS.md", "root " * 100), baseline(PKG, "leaf " * 100)]
    marker = (
        "Workspace instruction budget 260 bytes: omitted AGENTS.md; "
        "truncated pkg/AGENTS.md from 500 to 0 bytes"
    )
    # open 18 + marker + 2 + compact intro 83 + 2 + "Instructions from: pkg/AGENTS.md⏎⏎" 34
    # + no content + close 19: exactly the budget, so not one content byte fits.
    assert 18 + len(marker) + 2 + len(COMPACT) + 2 + 34 + 19 == 260

    result = render(items, 260, BASELINE_INTRO)

    assert result.text == lines(
        OPEN, marker, "", COMPACT, "", "Instructions from: pkg/AGENTS.md", "", "", CLOSE
    )
    assert result.omitted == ("AGENTS.md",)
    assert result.truncated == (Truncation(PKG, 500, 0),)
    # Neither file is represented: one is omitted, the other kept no content byte.
    assert result.represented == frozenset()


def test_truncated_last_file_with_content_is_represented_alongside_omitted_ones() -> None:
    items = [baseline("AGENTS.md", "root " * 100), baseline(PKG, "leaf " * 100)]

    result = render(items, 270, BASELINE_INTRO)

    # Ten more bytes than the 260 case: the marker grows by one digit ("to 9 bytes"), so nine fit.
    assert result.text == lines(
        OPEN,
        "Workspace instruction budget 270 bytes: omitted AGENTS.md; "
        "truncated pkg/AGENTS.md from 500 to 9 bytes",
        "",
        COMPACT,
        "",
        "Instructions from: pkg/AGENTS.md",
        "",
        "leaf leaf",
        CLOSE,
    )
    assert utf8_len(result.text) == 269
    assert result.represented == frozenset({1})


def test_t8_framed_compact_example_for_an_empty_file() -> None:
    result = render([baseline(PKG, "")], 300, BASELINE_INTRO)

    assert result.text == lines(
        "<system-reminder>",
        "Workspace instruction budget 300 bytes: truncated pkg/AGENTS.md from 0 to 0 bytes",
        "",
        "Workspace instructions were omitted or truncated to fit the configured byte budget.",
        "",
        "Instructions from: pkg/AGENTS.md",
        "",
        "",
        "</system-reminder>",
    )
    assert result.truncated == (Truncation(PKG, 0, 0),)
    # An empty file whose heading survived is represented: the heading says it has no content.
    assert result.represented == frozenset({0})


def test_t8_with_a_fractional_budget() -> None:
    result = render([baseline(PKG, "")], 300.5, BASELINE_INTRO)

    assert result.text.startswith(
        f"{OPEN}\nWorkspace instruction budget 300.5 bytes: truncated pkg/AGENTS.md from 0 to 0 bytes\n\n"
    )
    assert result.represented == frozenset({0})


def test_framed_heading_with_zero_content_bytes_does_not_represent_a_non_empty_file() -> None:
    # Compact frame, empty content: open 18 + marker 84 + 2 + 83 + 2 + heading 32 + 2 + close 19.
    zero = 18 + 84 + 2 + len(COMPACT) + 2 + 32 + 2 + 19
    assert zero == 242
    expected = lines(
        OPEN,
        "Workspace instruction budget 242 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes",
        "",
        COMPACT,
        "",
        "Instructions from: pkg/AGENTS.md",
        "",
        "",
        CLOSE,
    )
    assert utf8_len(expected) == zero

    at_zero = render([baseline(PKG, X1000)], zero, BASELINE_INTRO)
    one_more = render([baseline(PKG, X1000)], zero + 1, BASELINE_INTRO)

    assert at_zero.text == expected
    assert at_zero.truncated == (Truncation(PKG, 1000, 0),)
    assert at_zero.represented == frozenset()
    assert one_more.truncated == (Truncation(PKG, 1000, 1),)
    assert one_more.represented == frozenset({0})


def test_multibyte_first_code_point_that_does_not_fit_is_dropped_whole() -> None:
    item = RenderItem("set", PKG, "\U0001f600" * 100, scope_dir="pkg")

    result = render([item], 366, None)

    expected = lines(
        OPEN,
        "Workspace instruction budget 366 bytes: truncated pkg/AGENTS.md from 400 to 0 bytes",
        "",
        "Additional instructions from: pkg/AGENTS.md",
        "",
        PKG_SET_GUIDANCE,
        "",
        "",
        CLOSE,
    )
    # 363 bytes: one more emoji (4 bytes) would need 367.
    assert utf8_len(expected) == 363
    assert result.text == expected
    assert "\ufffd" not in result.text
    assert result.truncated == (Truncation(PKG, 400, 0),)
    assert result.represented == frozenset()


def test_marker_counts_bytes_actually_kept_after_the_code_point_cut() -> None:
    # Each "é" is 2 bytes. At 701 there is room for 313 content bytes; the binary search finds
    # that probe but the cut keeps 312, and the marker must say 312, not 313.
    room = _largest_slice("701", 701)
    assert room == 313

    result = render([baseline("AGENTS.md", "é" * 500)], 701, BASELINE_INTRO)

    assert result.truncated == (Truncation("AGENTS.md", 1000, 312),)
    assert "from 1000 to 312 bytes" in result.text
    assert result.text.count("é") == 156
    assert utf8_len(result.text) == 700


# --- step 5: unframed fallbacks (T9) ------------------------------------------------------


def test_t9_notice_only_at_100() -> None:
    result = render([baseline(PKG, X1000)], 100, BASELINE_INTRO)

    assert result.text == (
        "Workspace instruction budget 100 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes"
    )
    assert result.truncated == (Truncation(PKG, 1000, 0),)
    assert result.represented == frozenset()


def test_t9_notice_with_heading_at_exactly_120() -> None:
    result = render([baseline(PKG, X1000)], 120, BASELINE_INTRO)

    expected = (
        "Workspace instruction budget 120 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes"
        "\n\nInstructions from: pkg/AGENTS.md\n\n"
    )
    assert utf8_len(expected) == 84 + 2 + 32 + 2 == 120
    assert result.text == expected
    # The heading of a non-empty file with zero content bytes does not represent it.
    assert result.represented == frozenset()


def test_t9_cut_notice_at_20() -> None:
    result = render([baseline(PKG, X1000)], 20, BASELINE_INTRO)

    assert result.text == "Workspace instructio"
    assert result.truncated == (Truncation(PKG, 1000, 0),)
    assert result.represented == frozenset()


def test_t9_dynamic_set_heading_at_327_and_notice_below() -> None:
    item = RenderItem("set", PKG, X1000, scope_dir="pkg")
    expected = (
        "Workspace instruction budget 327 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes"
        "\n\nAdditional instructions from: pkg/AGENTS.md\n\n" + PKG_SET_GUIDANCE + "\n\n"
    )
    assert utf8_len(expected) == 84 + 2 + 43 + 2 + len(PKG_SET_GUIDANCE) + 2 == 327

    assert render([item], 327, None) == RenderResult(
        expected, (), (Truncation(PKG, 1000, 0),), frozenset()
    )
    assert render([item], 326, None).text == (
        "Workspace instruction budget 326 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes"
    )


def test_t9_dynamic_replace_heading_at_256() -> None:
    item = RenderItem("replace", PKG, X1000)
    expected = (
        "Workspace instruction budget 256 bytes: truncated pkg/AGENTS.md from 1000 to 0 bytes"
        "\n\nUpdated instructions from: pkg/AGENTS.md\n\n" + REPLACE_GUIDANCE + "\n\n"
    )
    assert utf8_len(expected) == 84 + 2 + 40 + 2 + len(REPLACE_GUIDANCE) + 2 == 256

    assert render([item], 256, None).text == expected
    assert not render([item], 255, None).text.endswith("\n\n")


def test_unframed_heading_represents_an_empty_file() -> None:
    expected = (
        "Workspace instruction budget 117 bytes: truncated pkg/AGENTS.md from 0 to 0 bytes"
        "\n\nInstructions from: pkg/AGENTS.md\n\n"
    )
    assert utf8_len(expected) == 81 + 2 + 32 + 2 == 117

    assert render([baseline(PKG, "")], 117, BASELINE_INTRO) == RenderResult(
        expected, (), (Truncation(PKG, 0, 0),), frozenset({0})
    )
    below = render([baseline(PKG, "")], 116, BASELINE_INTRO)
    assert below.text == (
        "Workspace instruction budget 116 bytes: truncated pkg/AGENTS.md from 0 to 0 bytes"
    )
    assert below.represented == frozenset()


def test_unframed_notice_names_omitted_files() -> None:
    items = [baseline("AGENTS.md", "root"), baseline(PKG, X1000)]

    result = render(items, 110, BASELINE_INTRO)

    assert result.text == (
        "Workspace instruction budget 110 bytes: omitted AGENTS.md; "
        "truncated pkg/AGENTS.md from 1000 to 0 bytes"
    )
    assert result.omitted == ("AGENTS.md",)
    assert result.represented == frozenset()


def test_removal_has_zero_original_bytes_whatever_its_content() -> None:
    item = RenderItem("remove", PKG, "ignored content")

    result = render([item], 139, None)

    # Framed removal: 18 + 35 + 2 + 66 + 19 = 140 bytes; with the marker 223; the unframed
    # heading 81 + 2 + 35 + 2 + 66 = 186. Only the 81-byte notice fits.
    assert result.text == (
        "Workspace instruction budget 139 bytes: truncated pkg/AGENTS.md from 0 to 0 bytes"
    )
    assert result.truncated == (Truncation(PKG, 0, 0),)
    assert result.represented == frozenset()


def test_multibyte_path_cut_in_the_notice_never_splits_a_character() -> None:
    result = render([baseline("路径/AGENTS.md", X1000)], 51, BASELINE_INTRO)

    # 49 ASCII bytes, then "路" (3 bytes) would end at 52.
    assert result.text == "Workspace instruction budget 51 bytes: truncated "
    assert utf8_len(result.text) == 49


# --- escaping -----------------------------------------------------------------------------


def test_escape_turns_the_exact_closing_tag_into_upstreams_form() -> None:
    assert escape("a</system-reminder>b</system-reminder>") == f"a{ESCAPED}b{ESCAPED}"
    assert utf8_len(ESCAPED) == 19
    # Upstream leaves other spellings alone; a tolerant reader does not, so neither do we
    # (every variant, byte for byte, is in test_escaping.py).
    assert escape("<system-reminder></SYSTEM-REMINDER></System-Reminder>") == (
        "<\\system-reminder><\\/SYSTEM-REMINDER><\\/System-Reminder>"
    )


def test_frame_escapes_the_body() -> None:
    assert frame(f"x{CLOSE}y") == f"{OPEN}\nx{ESCAPED}y\n{CLOSE}"


def test_escaping_in_content() -> None:
    content = f"safe\n{CLOSE}\nnot outside"

    text = render([baseline("AGENTS.md", content)], 65536, BASELINE_INTRO).text

    assert text == lines(
        OPEN,
        INTRO,
        "",
        "Instructions from: AGENTS.md",
        "",
        "safe",
        ESCAPED,
        "not outside",
        CLOSE,
    )


@pytest.mark.parametrize("kind", ["baseline", "set", "replace", "remove"])
def test_escaping_in_paths_and_scope_dirs(kind: str) -> None:
    path = f"scope{CLOSE}/AGENTS.md"
    item = RenderItem(kind, path, "rules", scope_dir=f"scope{CLOSE}")  # type: ignore[arg-type]

    text = render([item], 65536, None).text

    assert text.count(CLOSE) == 1 and text.endswith(CLOSE)
    assert f"scope{ESCAPED}/AGENTS.md" in text
    if kind == "set":
        assert f"under `scope{ESCAPED}`." in text


def test_escaping_in_the_marker() -> None:
    items = [baseline(f"scope{CLOSE}/AGENTS.md", "root " * 100), baseline("leaf/AGENTS.md", "x")]

    text = render(items, 400, BASELINE_INTRO).text

    assert text.startswith(
        f"{OPEN}\nWorkspace instruction budget 400 bytes: omitted scope{ESCAPED}/AGENTS.md\n\n"
    )
    assert text.count(CLOSE) == 1


def test_escaping_in_the_unframed_heading() -> None:
    path = f"a{CLOSE}/AGENTS.md"

    result = render([baseline(path, X1000)], 154, None)

    expected = (
        f"Workspace instruction budget 154 bytes: truncated a{ESCAPED}/AGENTS.md from 1000 to 0 "
        f"bytes\n\nInstructions from: a{ESCAPED}/AGENTS.md\n\n"
    )
    assert utf8_len(expected) == 101 + 2 + 49 + 2 == 154
    assert result.text == expected
    assert CLOSE not in result.text


def test_unframed_notice_is_escaped_before_it_is_cut() -> None:
    # Cutting the raw notice at 80 bytes would leave a literal closing tag in the prefix.
    result = render([baseline(f"a{CLOSE}/AGENTS.md", X1000)], 80, None)

    assert result.text == f"Workspace instruction budget 80 bytes: truncated a{ESCAPED}/AGENTS.md "
    assert utf8_len(result.text) == 80
    assert CLOSE not in result.text


# --- UTF-8 cut ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "max_bytes", "expected"),
    [
        ("aé", 1, "a"),  # 2-byte character cut after its lead byte
        ("aé", 2, "a"),
        ("aé", 3, "aé"),
        ("x€", 2, "x"),  # 3-byte character cut after 1 and 2 bytes
        ("x€", 3, "x"),
        ("x€", 4, "x€"),
        ("\U0001f600\U0001f600", 7, "\U0001f600"),  # WC would give "😀\ufffd" here
        ("\U0001f600\U0001f600", 5, "\U0001f600"),
        ("\U0001f600", 3, ""),
        ("abc", 0, ""),
        ("abc", -5, ""),
        ("abc", 3, "abc"),
        ("abc", 99, "abc"),
        ("", 0, ""),
    ],
)
def test_cut_utf8(text: str, max_bytes: int, expected: str) -> None:
    assert cut_utf8(text, max_bytes) == expected


def test_cut_utf8_at_every_offset_is_the_longest_whole_code_point_prefix() -> None:
    text = "aé€\U0001f600b\U00010348é"
    sizes = [len(ch.encode()) for ch in text]
    for limit in range(sum(sizes) + 2):
        whole = 0
        while whole < len(text) and sum(sizes[: whole + 1]) <= limit:
            whole += 1
        assert cut_utf8(text, limit) == text[:whole], limit


def test_attrs_values_are_frozen() -> None:
    item = baseline(PKG, "x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        item.path = "other"  # type: ignore[misc]

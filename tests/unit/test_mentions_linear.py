"""Session-reference mentions found in linear time, exactly where the upstream regex finds them.

``MENTION_PATTERN`` (the upstream regex) backtracks over every ``@[`` without a ``]``: 16 KB of
them cost seconds. ``mentions`` is a scanner that must return the same matches, groups and all,
on any text; the regex stays as its definition and is run here only, on small texts."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.sources.session_reference.uri import (
    MENTION_PATTERN,
    encode_session_reference_uri,
    mentions,
    parse_session_reference_text,
)

PIECES = st.sampled_from(
    ["@[", "@", "[", "]", "(", ")", "\\", "\n", "\u2028", "dsh-session:", "ImFiYyI", "a", " ", "-"]
)


def by_regex(text: str) -> list[tuple[int, int, str | None, str | None, str | None]]:
    return [(m.start(), m.end(), m[1], m[2], m[3]) for m in MENTION_PATTERN.finditer(text)]


@settings(max_examples=examples(1000))
@given(st.lists(PIECES, max_size=25).map("".join))
def test_the_scanner_finds_what_the_regex_finds(text: str) -> None:
    assert mentions(text) == by_regex(text)


def test_real_mentions() -> None:
    uri = encode_session_reference_uri("abc")
    text = f"see @[my \\] label]({uri}) and {uri}, not @[x](other:y) nor @[a\\\nb]({uri})"
    assert mentions(text) == by_regex(text)
    parsed = parse_session_reference_text(text)
    assert [r.session_id for r in parsed.references] == ["abc", "abc", "abc"]


def test_thousands_of_unclosed_openers_cost_linear_time() -> None:
    def cost(n: int) -> float:
        text = "@[" * n + " " + encode_session_reference_uri("abc")  # no "]": each "@[" fails
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            mentions(text)
            best = min(best, time.perf_counter() - started)
        return best

    cost(1000)
    ratios = [cost(80_000) / max(cost(20_000), 1e-6) for _ in range(2)]
    assert min(ratios) < 10, ratios  # 4x the text: linear about 4, the regex about 16

"""Property tests for the renderer: invariants that must hold for every input and budget."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.jsutil import utf8_len
from dsh_sidecar.sources.agent_instructions.render import (
    BASELINE_INTRO,
    REPLACEMENT_INTRO,
    RenderItem,
    cut_utf8,
    render,
)

OPEN = "<system-reminder>"
CLOSE = "</system-reminder>"

# Fragments that stress the interesting paths: the closing tag (and near misses), multi-byte
# characters of every width, and newlines that sit next to the "\n\n" separators.
_FRAGMENTS = st.sampled_from(
    [CLOSE, "</system-reminder", "<system-reminder>", "é", "€", "\U0001f600", "路径", "\n", "x"]
)
_TEXT = st.lists(st.one_of(_FRAGMENTS, st.text(max_size=12)), max_size=8).map("".join)
_BIG_TEXT = st.one_of(_TEXT, st.builds(lambda c, n: c * n, _FRAGMENTS, st.integers(0, 400)))

_ITEMS = st.lists(
    st.builds(
        RenderItem,
        kind=st.sampled_from(["baseline", "set", "replace", "remove"]),
        path=_TEXT,
        content=_BIG_TEXT,
        scope_dir=_TEXT,
    ),
    min_size=1,
    max_size=4,
)
_BUDGETS = st.one_of(
    st.integers(-5, 1500),
    st.integers(80, 700),  # where steps 4 and 5 happen for short paths
    st.floats(-5, 1500, allow_nan=False),
    st.sampled_from([math.inf, -math.inf, math.nan, 65536]),
)
_INTROS = st.sampled_from([BASELINE_INTRO, REPLACEMENT_INTRO, None])


def _inputs_contain(items: list[RenderItem], needle: str) -> bool:
    return any(needle in f"{i.path}{i.content}{i.scope_dir}" for i in items)


@settings(max_examples=examples(400), deadline=None)
@given(items=_ITEMS, max_bytes=_BUDGETS, intro=_INTROS)
def test_rendered_block_respects_budget_and_frame_invariants(
    items: list[RenderItem], max_bytes: float, intro: str | None
) -> None:
    result = render(items, max_bytes, intro)
    text = result.text

    if not math.isfinite(max_bytes) or max_bytes <= 0:
        assert text == ""
        assert result.omitted == tuple(i.path for i in items)
        return
    assert utf8_len(text) <= max_bytes
    if text.startswith(OPEN):
        assert text.count(CLOSE) == 1
        assert text.endswith("\n" + CLOSE)
    else:
        assert CLOSE not in text
    if "\ufffd" not in "".join(f"{i.path}{i.content}{i.scope_dir}" for i in items):
        assert "\ufffd" not in text


@settings(max_examples=examples(300), deadline=None)
@given(items=_ITEMS, max_bytes=st.integers(1, 1500), intro=_INTROS)
def test_drop_bookkeeping_is_consistent(
    items: list[RenderItem], max_bytes: int, intro: str | None
) -> None:
    result = render(items, max_bytes, intro)
    paths = tuple(i.path for i in items)
    n = len(items)

    # Omitted files are always a broadest-first prefix, and at most one file is truncated: the last.
    assert result.omitted == paths[: len(result.omitted)]
    assert len(result.truncated) <= 1
    if result.truncated:
        cut = result.truncated[0]
        assert result.omitted == paths[:-1]
        assert cut.path == paths[-1]
        assert 0 <= cut.included_bytes <= cut.original_bytes
    # Represented files form a suffix, never overlap the omitted ones, and a truncated file is
    # represented only when it kept a byte or had none to keep.
    assert result.represented <= frozenset(range(len(result.omitted), n))
    assert result.represented in (frozenset(), frozenset(range(n - len(result.represented), n)))
    if result.truncated:
        cut = result.truncated[0]
        if cut.included_bytes == 0 and cut.original_bytes > 0:
            assert result.represented == frozenset()
    if not result.omitted and not result.truncated:
        assert result.represented == frozenset(range(n))


@given(text=st.text(), max_bytes=st.integers(-3, 200))
def test_cut_utf8_is_the_longest_fitting_code_point_prefix(text: str, max_bytes: int) -> None:
    cut = cut_utf8(text, max_bytes)

    assert text.startswith(cut)
    assert utf8_len(cut) <= max(max_bytes, 0)
    if cut != text:
        assert utf8_len(text[: len(cut) + 1]) > max_bytes
    if "\ufffd" not in text:
        assert "\ufffd" not in cut

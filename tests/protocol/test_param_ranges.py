"""Params are parsed once, at the wire: types and ranges the service relies on.

The session service takes typed values and checks none of these itself, so every case here must be
refused by the converter (and reported naming the field) before a handler runs: a bad turn or step
never opens a step, a negative compaction range never reaches the store.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_sidecar.lsp.rpc.converter import describe_structure_error, make_converter
from dsh_sidecar.protocol import types as wt

CONVERTER = make_converter()
SID = {"sessionId": "s"}

REFUSED: list[tuple[type, dict[str, Any], str, str]] = [
    *[
        (cls, {**SID, "turn": turn, "step": step}, field, message)
        for cls in (wt.StepPrepareParams, wt.StepEndParams)
        for turn, step, field, message in [
            (0, 1, "turn", "must be a positive integer, got 0"),
            (1, 0, "step", "must be a positive integer, got 0"),
            (-1, 1, "turn", "must be a positive integer, got -1"),
            (True, 1, "turn", "expected int"),
            (1, "2", "step", "expected int"),
            (1, 2.0, "step", "expected int"),
        ]
    ],
    (wt.TurnEndParams, {**SID, "turn": 0, "reason": "done"}, "turn", "must be a positive integer"),
    (wt.TurnEndParams, {**SID, "turn": 1}, "reason", "required field missing"),
    *[
        (wt.SessionCompactParams, {**SID, "start": 0, "end": 1, "summary": "s", **bad}, field, msg)
        for bad, field, msg in [
            ({"start": -1}, "start", "must be a non-negative integer, got -1"),
            ({"end": -3}, "end", "must be a non-negative integer, got -3"),
            ({"end": True}, "end", "expected int"),
            ({"start": 0.0}, "start", "expected int"),
            ({"summary": None}, "summary", "expected str"),
            ({"compactionId": 5}, "compactionId", "expected str"),
        ]
    ],
    (wt.SessionEventsParams, {**SID, "afterSeq": "1"}, "afterSeq", "expected int"),
    (wt.SessionEventsParams, {**SID, "afterSeq": True}, "afterSeq", "expected int"),
    (wt.SessionEventsParams, {**SID, "limit": 0}, "limit", "must be a positive integer, got 0"),
    (wt.SessionEventsParams, {**SID, "limit": 2.5}, "limit", "expected int"),
    (wt.SessionListParams, {"limit": 0}, "limit", "must be a positive integer, got 0"),
    (wt.SessionListParams, {"limit": True}, "limit", "expected int"),
    (wt.SessionListParams, {"query": 3}, "query", "expected str"),
    (wt.SessionOpenParams, {"cwd": 7}, "cwd", "expected str"),
    (
        wt.SessionOpenParams,
        {"cwd": "/", "sessionId": ""},
        "sessionId",
        "must be a non-empty string",
    ),
    (
        wt.ToolResultParams,
        {**SID, "token": 7, "name": "read", "arguments": {}, "isError": False},
        "token",
        "expected str",
    ),
    (
        wt.StepPrepareParams,
        {**SID, "turn": 1, "step": 1, "prompt": {"text": 5}},
        "prompt.text",
        "expected str",
    ),
]


@pytest.mark.parametrize(
    ("cls", "raw", "field", "message"),
    REFUSED,
    ids=[f"{c.__name__}:{f}={r.get(f.split('.')[0])!r}" for c, r, f, _ in REFUSED],
)
def test_out_of_range_or_mistyped_params_are_refused_naming_the_field(
    cls: type, raw: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(Exception) as caught:
        CONVERTER.structure(raw, cls)
    described = describe_structure_error(caught.value)
    assert f"@ params.{field}" in described, described
    assert message in described, described


@pytest.mark.parametrize(
    ("cls", "raw"),
    [
        (wt.StepPrepareParams, {**SID, "turn": 1, "step": 1}),
        (wt.SessionCompactParams, {**SID, "start": 0, "end": 0, "summary": ""}),
        (wt.SessionEventsParams, {**SID, "afterSeq": -5, "limit": 1}),  # below 0: from the start
        (wt.SessionListParams, {"limit": 1}),
        (wt.SessionOpenParams, {"cwd": "/", "sessionId": "x"}),
    ],
)
def test_the_smallest_valid_values_pass(cls: type, raw: dict[str, Any]) -> None:
    assert CONVERTER.unstructure(CONVERTER.structure(raw, cls)) == raw

"""The pure surface fold that defines what the model sees (and that the store must match)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_sidecar.model import (
    ASSISTANT_MESSAGE,
    INBOX_SPLICED,
    STEP_START,
    TOOL_RESULT,
    USER_MESSAGE,
    Event,
)
from dsh_sidecar.sessions.surface import SurfaceOpError, apply_op, fold_surface, replace_range


def ev(seq: int, kind: str = USER_MESSAGE, op: Any = "append") -> Event:
    return Event(seq, kind, 0, {}, op)


def test_append_adds_at_the_end_and_replace_takes_the_first_place() -> None:
    assert apply_op([], 0, "append") == [0]
    assert apply_op([0, 1, 2, 3], 9, {"op": "replace", "start": 1, "end": 2}) == [0, 9, 3]
    assert apply_op([0, 1], 9, {"op": "replace", "start": 0, "end": 1}) == [9]
    assert apply_op([0, 1], 9, {"op": "replace", "start": 1, "end": 1}) == [0, 9]


def test_fold_counts_only_surface_types_that_carry_an_op() -> None:
    log = [
        ev(0),
        ev(1, STEP_START, None),
        ev(2, ASSISTANT_MESSAGE),
        ev(3, INBOX_SPLICED, None),
        ev(4, TOOL_RESULT),
        ev(5, USER_MESSAGE, None),  # a user/message without an op never reaches the model
        ev(6, INBOX_SPLICED, "append"),  # not a surface type, so its op means nothing
        ev(7, USER_MESSAGE, {"op": "replace", "start": 0, "end": 1}),
        ev(8),
    ]
    assert fold_surface(log) == [7, 4, 8]


def test_a_replace_can_shadow_an_earlier_checkpoint() -> None:
    log = [ev(0), ev(1), ev(2, op={"op": "replace", "start": 0, "end": 1}), ev(3)]
    log.append(ev(4, op={"op": "replace", "start": 0, "end": 1}))
    assert fold_surface(log) == [4]


@pytest.mark.parametrize(
    ("nodes", "op"),
    [
        ([0], {"op": "replace", "start": 0, "end": 1}),
        ([0, 1], {"op": "replace", "start": 1, "end": 0}),
        ([0, 1], {"op": "replace", "start": -1, "end": 0}),
        ([], {"op": "replace", "start": 0, "end": 0}),
    ],
)
def test_out_of_range_replace_is_an_error(nodes: list[int], op: dict[str, Any]) -> None:
    with pytest.raises(SurfaceOpError, match="outside the surface"):
        apply_op(nodes, 9, op)


@pytest.mark.parametrize(
    "op",
    [
        "prepend",
        None,
        {"op": "replace", "start": 0},
        {"op": "replace", "start": 0, "end": 0, "extra": 1},
        {"op": "remove", "start": 0, "end": 0},
        {"op": "replace", "start": False, "end": 0},
        {"op": "replace", "start": 0, "end": 1.0},
        {"op": "replace", "start": "0", "end": 0},
        ["replace", 0, 0],
    ],
)
def test_malformed_ops_are_errors(op: Any) -> None:
    with pytest.raises(SurfaceOpError):
        replace_range(op)


def test_replace_range_reads_well_formed_ops() -> None:
    assert replace_range("append") is None
    assert replace_range({"op": "replace", "start": 2, "end": 5}) == (2, 5)

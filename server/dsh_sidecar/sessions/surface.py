"""The surface fold: which logged messages the model currently sees, in model order.

``append`` adds a node at the end; ``{op: "replace", start, end}`` replaces surface positions
``start..end`` (inclusive) by the new node, shadowing them. The store keeps this fold materialized
in the same transaction as each append; this pure version defines it and checks the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dsh_sidecar.model import Event


class SurfaceOpError(ValueError):
    """A surface op that does not fit the current surface."""


def replace_range(op: Any) -> tuple[int, int] | None:
    """``(start, end)`` for a well-formed replace op, None for ``"append"``; raise otherwise."""
    if op == "append":
        return None
    if (
        not isinstance(op, Mapping)
        or op.get("op") != "replace"
        or set(op) != {"op", "start", "end"}
    ):
        raise SurfaceOpError('surfaceOp must be "append" or {op: "replace", start, end}')
    start, end = op["start"], op["end"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise SurfaceOpError("surfaceOp start and end must be integers")
    return start, end


def apply_op(nodes: list[int], seq: int, op: Any) -> list[int]:
    span = replace_range(op)
    if span is None:
        return [*nodes, seq]
    start, end = span
    if not 0 <= start <= end < len(nodes):
        raise SurfaceOpError(f"replace {start}..{end} is outside the surface of {len(nodes)} nodes")
    return [*nodes[:start], seq, *nodes[end + 1 :]]


def fold_surface(events: Iterable[Event]) -> list[int]:
    """The seqs of the current surface, in model order."""
    nodes: list[int] = []
    for event in events:
        if event.is_surface:
            nodes = apply_op(nodes, event.seq, event.surface_op)
    return nodes

"""Which tool results touch a file, and how nested executions stage under their parent
(docs/reference/agent-instructions.md, Touches)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_sidecar.sessions.touches.gate import ExecutionTouches, own_touch

OK: dict[str, Any] = {
    "name": "edit",
    "arguments": {"file_path": "src/a.ts"},
    "is_error": False,
    "aborted": False,
}


def touch(**overrides: Any) -> str | None:
    call = {**OK, **overrides}
    return own_touch(call["name"], call["arguments"], call["is_error"], call["aborted"])


@pytest.mark.parametrize("name", ["read", "write", "edit"])
def test_first_party_file_tools_touch(name: str) -> None:
    assert touch(name=name) == "src/a.ts"


def test_the_trimmed_path_is_used() -> None:
    assert touch(arguments={"file_path": " \u00a0src/a.ts\ufeff\n"}) == "src/a.ts"


@pytest.mark.parametrize(
    "overrides",
    [
        {"is_error": True},
        {"is_error": None},  # only an explicit success counts
        {"is_error": 0},
        {"aborted": True},
        {"name": "Read"},
        {"name": "bash"},
        {"name": "multi_edit"},
        {"arguments": None},
        {"arguments": ["src/a.ts"]},
        {"arguments": {}},
        {"arguments": {"path": "src/a.ts"}},
        {"arguments": {"file_path": ""}},
        {"arguments": {"file_path": " \t\u3000\n"}},
        {"arguments": {"file_path": 7}},
        {"arguments": {"file_path": None}},
        {"arguments": {"file_path": ["src/a.ts"]}},
    ],
)
def test_everything_else_does_not(overrides: dict[str, Any]) -> None:
    assert touch(**overrides) is None


def test_children_stage_under_the_parent_and_survive_its_failure() -> None:
    staged = ExecutionTouches()
    assert staged.settle("c1", "p", "a.md") == []
    assert staged.settle("c2", "p", None) == []
    assert staged.settle("c3", "p", "b.md") == []
    # The parent's own touch is gated (None here: it failed) but its children still count.
    assert staged.settle("p", None, None) == ["a.md", "b.md"]
    assert staged.staged == {}


def test_grandchildren_travel_up_through_every_parent() -> None:
    staged = ExecutionTouches()
    staged.settle("g", "c", "deep.md")
    assert staged.settle("c", "p", "mid.md") == []
    assert staged.settle("p", None, "top.md") == ["deep.md", "mid.md", "top.md"]


def test_a_top_level_result_projects_its_own_touch_at_once() -> None:
    staged = ExecutionTouches()
    assert staged.settle("t", None, "x.md") == ["x.md"]
    assert staged.settle("u", None, None) == []

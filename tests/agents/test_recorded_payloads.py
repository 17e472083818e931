"""The recorded hook payloads (tests/fixtures/agent_hooks/) still match what the pinned CLIs
send: the same events, in the same number, with the same shape (keys and value types).
When this fails after a version bump, rerun ``python -m tests.support.record_hooks`` and read
the diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_cli import AGENTS, Agent
from tests.support.record_hooks import FIXTURES, record, scenarios

pytestmark = pytest.mark.agent_clis


def shape(value: Any) -> Any:
    """Keys and value types, lists by their first item."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


@pytest.mark.parametrize("agent", AGENTS)
def test_the_read_payloads_are_current(agent: Agent, tmp_path: Path) -> None:
    (read,) = [s for s in scenarios(agent) if s.case == "read"]
    fresh = sorted(record(agent, read, tmp_path))
    kept = sorted(p.name for p in (FIXTURES / agent).glob("*-read*.json"))
    assert fresh == kept
    for name in fresh:
        now = json.loads((tmp_path / agent / name).read_text())
        then = json.loads((FIXTURES / agent / name).read_text())
        assert shape(now) == shape(then), name

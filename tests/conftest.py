"""Suite-wide checks.

Every test that leaves a session store in its temp directory has every logged message checked
by the invariant validators (upstream's ``./invariant`` companions) against the log before it,
so a message the sidecar writes with a counterfeit or malformed source fails the test loudly.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_sidecar.invariants import InvariantError, validate_event
from dsh_sidecar.model import Event

# Stores that tests corrupt or fill on purpose are not the sidecar's own writes.
UNCHECKED_MARK = "no_invariant_check"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{UNCHECKED_MARK}: skip the store invariant sweep")


def stored_events(db: Path) -> dict[str, list[Event]]:
    if not db.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "SELECT session_id, seq, type, time, data, surface_op FROM events"
                " ORDER BY session_id, seq"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}  # not a session store
    logs: dict[str, list[Event]] = {}
    for sid, seq, kind, time, data, op in rows:
        logs.setdefault(sid, []).append(
            Event(seq, kind, time, json.loads(data), json.loads(op) if op else None)
        )
    return logs


def check_store(db: Path) -> list[str]:
    failures = []
    for sid, events in stored_events(db).items():
        for index, event in enumerate(events):
            try:
                validate_event(event, events[:index])
            except InvariantError as exc:
                failures.append(f"{db.name} session {sid} seq {event.seq}: {exc.message}")
    return failures


@pytest.fixture(autouse=True)
def _invariant_sweep(request: pytest.FixtureRequest) -> Iterator[None]:
    checked = "tmp_path" in request.fixturenames and not request.node.get_closest_marker(
        UNCHECKED_MARK
    )
    # Fetched before the test: the tmp_path fixture is torn down before this one.
    tmp_path: Path | None = request.getfixturevalue("tmp_path") if checked else None
    yield
    if tmp_path is None:
        return
    failures = [f for db in tmp_path.rglob("*.sqlite3") for f in check_store(db)]
    assert not failures, "invariant violations in the stores this test wrote:\n" + "\n".join(
        failures
    )

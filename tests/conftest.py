"""Suite-wide settings and checks.

- A test that needs a real editor or its toolchain (Neovim, code-server with Chromium, the
  extension's Node toolchain) gets the ``editors`` marker from the fixture that provides it
  (``tool_fixture``, tests/support/tools.py), wherever it lives; ``-m "not editors"`` runs
  everything else, the drift checks that only read files included (README, Development).
- A test that runs the real agent CLIs says so with the ``agent_clis`` marker (each module of
  tests/agents and tests/conformance does, as ``pytestmark``), wherever it lives; such a test
  fails, never skips, when the pinned agent CLIs are not installed.
- ``DSH_TEST_FORKED_SERVERS=1`` (the dev loop only) starts the e2e and golden-example servers
  by forking them from one process that imported the server once (tests/support/forked_servers.py).
- ``DSH_HYPOTHESIS_PROFILE`` picks the Hypothesis profile: ``full`` (the default, what CI runs)
  or ``dev`` (a tenth of the examples; see tests/support/property_budget.py).
- Every test that leaves a session store in its temp directory has every logged message checked
  by the invariant validators (docs/reference/invariants.md) against the log before it, so a
  message the sidecar writes with a counterfeit or malformed source fails the test loudly.
- A hook process a test runs may start a resident hook engine (detached, so it outlives the
  hook): after each test, the residents of ``$DSH_HOME``s under this session's temp directory
  are stopped, so none outlives its test or the run.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from dsh_sidecar.invariants import InvariantError, validate_event
from dsh_sidecar.model import Event
from tests.support import agent_cli, forked_servers, resident
from tests.support.agent_cli import missing_clis, not_installed_message
from tests.support.property_budget import FULL_MAX_EXAMPLES

# The fixtures that need real editors or their toolchains, for every test directory.
pytest_plugins = ["tests.support.tools"]

# Stores that tests corrupt or fill on purpose are not the sidecar's own writes.
UNCHECKED_MARK = "no_invariant_check"
EDITORS_MARK = "editors"
AGENT_CLIS_MARK = "agent_clis"
HYPOTHESIS_PROFILE_ENV = "DSH_HYPOTHESIS_PROFILE"

# No per-example deadline: Hypothesis's default (200 ms) is a timing threshold, which a busy
# machine trips (a 64-alternative glob property failed so under load); speed lives in bench/.
settings.register_profile("full", max_examples=FULL_MAX_EXAMPLES, deadline=None)
settings.register_profile("dev", max_examples=FULL_MAX_EXAMPLES // 10, deadline=None)
settings.load_profile(os.environ.get(HYPOTHESIS_PROFILE_ENV) or "full")


_zygote: forked_servers.Zygote | None = None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{UNCHECKED_MARK}: skip the store invariant sweep")
    global _zygote
    # Under pytest-xdist only the workers run tests; the controller needs no zygote.
    distributing = bool(getattr(config.option, "numprocesses", None))
    runs_tests = os.environ.get("PYTEST_XDIST_WORKER") is not None or not distributing
    if forked_servers.enabled() and runs_tests and _zygote is None:
        # Before the test modules are imported: their server commands read the socket's path.
        _zygote = forked_servers.Zygote()
        _zygote.wait_ready()
        os.environ[forked_servers.SOCKET_ENV] = _zygote.socket_path


def pytest_unconfigure(config: pytest.Config) -> None:
    global _zygote
    if _zygote is not None:
        _zygote.stop()
        _zygote = None
        os.environ.pop(forked_servers.SOCKET_ENV, None)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Imported here, not at the top: pytest must import the plugin itself to rewrite its asserts.
    from tests.support.tools import needs_tools

    for item in items:
        if needs_tools(getattr(item, "fixturenames", [])):
            item.add_marker(EDITORS_MARK)


@pytest.fixture(autouse=True)
def _agent_clis_installed(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker(AGENT_CLIS_MARK) is None:
        return
    missing = missing_clis()
    if missing:
        pytest.fail(not_installed_message(missing), pytrace=False)


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


@pytest.fixture(autouse=True)
def _residents_stopped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    # Under this session's (this xdist worker's) temp directory, or a throwaway HOME one of its
    # agent runs made, only: another run's, or another worker's test still running, is not ours
    # to stop.
    bases = [tmp_path_factory.getbasetemp(), *agent_cli.THROWAWAY_HOMES]
    agent_cli.THROWAWAY_HOMES.clear()
    for base in bases:
        for pid in resident.started_under(base):
            resident.stop_pid(pid)

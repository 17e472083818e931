"""The TCP port serves its owner while another local user floods it (docs/protocol.md, "Who may
connect", "Connections waiting at the door").

The attacker is the real uid ``nobody`` running ``tcp_flooder.py`` with the system Python; the
server runs with ``ulimit -n`` set to 1024, so that 2,000 held connections would run it out of
descriptors if it kept them. Memory is measured as the server's VmRSS, with a generous bound
(see each test): the point is the order of magnitude (before the door: 600 partial bodies of
1 MiB took it from 49 to 796 MiB, bench/tcp_flood.py), not a figure.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from tests.support.flood import Flood, limited_server, owner_touch_is_delivered
from tests.support.listening import NOBODY_PYTHON
from tests.support.reliability_rpc import HANG_GUARD, ServerGone

MIB = 1024 * 1024
# The long variant holds 10,000 (the flooder's own descriptor limit is this process's).
HOSTILE_CONNECTIONS = 10_000 if os.environ.get("DSH_LONG_TESTS") == "1" else 2000


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule: keep the flood out\n")
    (root / "pkg" / "x.py").write_text("x = 1\n")
    return root


def test_the_owner_is_served_while_another_user_holds_2000_connections(
    tmp_path: Path, project: Path
) -> None:
    with limited_server(tmp_path) as server:
        flood = Flood(server.info["port"], HOSTILE_CONNECTIONS, 0, as_nobody=True)
        try:
            # The flood goes on (every refused connection is opened again) while the owner works.
            owner_touch_is_delivered(server, tmp_path, project)
            owner_touch_is_delivered(server, tmp_path, project)
        finally:
            totals = flood.stop()
        assert totals["done"]["connects"] >= HOSTILE_CONNECTIONS, totals
        assert totals["done"]["refusals_read"] > 0, totals
        # A wave of refusals is a line and a summary per 10 s, never a line per connection.
        log = server.stderr()
        assert log.count("refused") <= 2 + log.count("more connection(s)"), log
        assert log.count("\n") < 50, log
        assert "Too many open files" not in log and "Traceback" not in log


@pytest.mark.parametrize(
    ("as_nobody", "body"),
    [(True, MIB - 1), (False, 60 * 1024)],
    ids=["another-user-1MiB", "own-user-60KiB"],
)
def test_600_partial_bodies_do_not_swell_the_server(
    tmp_path: Path, project: Path, as_nobody: bool, body: int
) -> None:
    """Another user's 600 partial bodies of 1 MiB are refused unread. The owner's own processes
    get further (the token is the check), but only 32 wait at a time, each held to 64 KiB: 600
    partial bodies of 60 KiB keep at most about 32 x (64 KiB parsed + 128 KiB in the stream's
    buffer), some 6 MiB. The bound of 100 MiB is that plus ample room for the interpreter's
    own growth; the unguarded server grew by about 760 MiB."""
    with limited_server(tmp_path) as server:
        before = server.rss_mib()
        flood = Flood(server.info["port"], 600, body, as_nobody=as_nobody)
        try:
            during = server.rss_mib()
            if as_nobody:
                owner_touch_is_delivered(server, tmp_path, project)
        finally:
            totals = flood.stop()
        # The owner's own processes can always crowd its door (they can read the token too);
        # once they stop and the server has seen them go, it is open again.
        deadline = time.monotonic() + HANG_GUARD
        while True:
            try:
                owner_touch_is_delivered(server, tmp_path, project)
                break
            except ServerGone:
                assert time.monotonic() < deadline, "the door never opened again"
                time.sleep(0.2)
        assert totals["done"]["connects"] >= 600, totals
        assert during - before < 100, (before, during)
        assert "Traceback" not in server.stderr()
        print(f"RSS {before:.0f} -> {during:.0f} MiB with 600 partial bodies of {body} bytes")


def test_flood_helpers_use_a_real_second_uid() -> None:
    """The attack is from another uid only if setpriv can switch to nobody here."""
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            NOBODY_PYTHON,
            "-c",
            "import os; print(os.getuid())",
        ],
        capture_output=True,
        check=True,
        timeout=HANG_GUARD,
    )
    assert int(done.stdout) != os.geteuid()

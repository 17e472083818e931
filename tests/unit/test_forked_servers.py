"""The dev loop's forked servers (tests/support/forked_servers.py) behave as the real command does: the
same output on the same pipes, the same exit status, the launcher's environment and directory."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.forked_servers import LAUNCHER, REAL_COMMAND, Zygote


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    z = Zygote()
    z.wait_ready()
    yield z
    z.stop()


def run_both(
    zygote: Zygote, args: list[str], **kwargs: Any
) -> tuple[tuple[int, bytes, bytes], tuple[int, bytes, bytes]]:
    forked = [sys.executable, "-I", "-S", LAUNCHER, zygote.socket_path, *args]
    results: list[tuple[int, bytes, bytes]] = []
    for command in ([*REAL_COMMAND, *args], forked):
        done = subprocess.run(command, capture_output=True, timeout=60, **kwargs)
        results.append((done.returncode, done.stdout, done.stderr))
    return results[0], results[1]


def test_output_and_status_are_the_real_commands(zygote: Zygote) -> None:
    real, forked = run_both(zygote, ["--version"])
    assert forked == real and real[0] == 0
    real, forked = run_both(zygote, ["no-such-command"])
    assert forked == real and real[0] == 2


def test_the_launchers_directory_environment_and_stdin_are_the_servers(
    zygote: Zygote, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "AGENTS.md").write_text("project rules\n")
    (tmp_path / "dsh").mkdir()
    (tmp_path / "dsh" / "AGENTS.md").write_text("rules of this environment's DSH_HOME\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DSH_HOME": str(tmp_path / "dsh")}
    real, forked = run_both(zygote, ["preview", "."], cwd=project, env=env, input=b"")
    assert forked == real
    out = real[1]
    assert b"project rules" in out and b"rules of this environment's DSH_HOME" in out

"""The VS Code extension's unit tests (vitest, mocked `vscode` module) and its type check.

Run from pytest so CI counts them; both fail, never skip, when the toolchain is missing
(scripts/bootstrap.d/vscode.sh installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

EXT = Path(__file__).resolve().parents[2] / "vscode-extension"


def _npx() -> str:
    npx = shutil.which("npx")
    assert npx, "npx is not on PATH (Node 20 + npm are needed; see scripts/bootstrap.d/vscode.sh)"
    assert (EXT / "node_modules" / "vitest").is_dir(), (
        "vscode-extension/node_modules is missing: run scripts/bootstrap (bootstrap.d/vscode.sh)"
    )
    return npx


def _run(args: list[str], timeout: int) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CI="true", NO_COLOR="1", FORCE_COLOR="0")
    return subprocess.run(
        args, cwd=EXT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_vitest_unit_tests_pass(node_toolchain: str) -> None:
    proc = _run([_npx(), "--no-install", "vitest", "run", "--reporter=default"], timeout=240)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"vitest failed (exit {proc.returncode}):\n{output[-6000:]}"
    summary = [line for line in output.splitlines() if re.match(r"\s*Tests\s", line)]
    assert summary, f"no vitest summary in the output:\n{output[-3000:]}"
    m = re.search(r"(\d+) passed", summary[-1])
    assert m, summary[-1]
    assert int(m.group(1)) >= 50, f"suspiciously few tests ran: {summary[-1]}"
    # A skipped or todo test must not pass as green.
    assert not re.search(r"skipped|todo|failed", summary[-1]), summary[-1]
    print(summary[-1].strip())


def test_typescript_is_strict_and_clean(node_toolchain: str) -> None:
    npx = _npx()
    for project in (".", "src/webview"):
        proc = _run([npx, "--no-install", "tsc", "--noEmit", "-p", project], timeout=240)
        assert proc.returncode == 0, f"tsc -p {project} failed:\n{proc.stdout}{proc.stderr}"

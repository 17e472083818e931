"""The two client recipes of docs/protocol.md ("Who may connect") run for real against
``serve --tcp`` and ``serve --socket``: a Node client built the way vscode-languageclient builds
one from a ``serverOptions`` function (the extension's own vscode-jsonrpc over ``net.connect``),
and Neovim 0.12 with ``vim.lsp.rpc.connect`` and ``init_options.authToken``.

The client scripts are in tests/editors/recipes/. A missing Node, node_modules or Neovim fails
the test (scripts/bootstrap installs them); skipping would let CI pass without the recipes.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.tools import tool_fixture

REPO = Path(__file__).resolve().parents[2]
RECIPES = Path(__file__).resolve().parent / "recipes"
EXTENSION = REPO / "vscode-extension"
NVIM = REPO / ".tools" / "nvim-venv" / "bin" / "nvim"
TIMEOUT = 120  # seconds; only against a hang


class Served:
    def __init__(self, tmp: Path, *flags: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env.update(DSH_HOME=str(tmp / "home"), HOME=str(tmp / "home"))
        self.stderr_path = tmp / "serve.log"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dsh_sidecar", "serve", *flags],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        line = self.proc.stdout.readline() if ready else b""
        assert line, self.stderr_path.read_text()
        self.info: dict[str, Any] = json.loads(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=TIMEOUT)
        assert "Traceback" not in self.stderr_path.read_text()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Recipe rules\n\nUse the socket.\n")
    return root


@pytest.fixture(params=["tcp", "unix"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    flags = (
        ["--tcp", "--port", "0"]
        if request.param == "tcp"
        else ["--socket", str(tmp_path / "run" / "dsh.sock")]
    )
    server = Served(tmp_path, *flags)
    try:
        yield server
    finally:
        server.stop()


def target(served: Served) -> tuple[str, str, str]:
    """(mode, port or path, token file or "")."""
    if served.info["transport"] == "tcp":
        return "tcp", str(served.info["port"]), served.info["tokenFile"]
    return "unix", served.info["path"], ""


def run_node(served: Served, tmp_path: Path, project: Path, **env: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not (EXTENSION / "node_modules" / "vscode-jsonrpc").is_dir():
        pytest.fail("node and vscode-extension/node_modules are needed: run scripts/bootstrap")
    mode, where, token_file = target(served)
    done = subprocess.run(
        [
            node,
            str(RECIPES / "vscode_socket_client.js"),
            mode,
            where,
            token_file,
            str(tmp_path / "store.sqlite3"),
            str(project),
        ],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
        env={**os.environ, "DSH_EXTENSION_DIR": str(EXTENSION), **env},
    )
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_vscode_language_client_recipe(
    served: Served, tmp_path: Path, project: Path, node_toolchain: str
) -> None:
    out = run_node(served, tmp_path, project)
    mode = served.info["transport"]
    assert out["protocolVersion"] == 1
    assert out["sessionId"] == f"vscode-{mode}"
    assert "Use the socket." in out["preview"]
    assert out["closedByServer"] is True  # exit ended this connection...
    assert served.proc.poll() is None  # ...and not the server


def test_vscode_recipe_with_a_wrong_token_is_refused(
    tmp_path: Path, project: Path, node_toolchain: str
) -> None:
    server = Served(tmp_path, "--tcp", "--port", "0")
    try:
        out = run_node(server, tmp_path, project, DSH_WRONG_TOKEN="0" * 64)
        assert out["initializeError"] == {
            "code": -32600,
            "message": "Unauthorized: initializationOptions.authToken does not match",
            "data": {"code": "unauthorized"},
        }
        assert out["closedByServer"] is True
    finally:
        server.stop()


@tool_fixture()
def nvim_012() -> Path:
    if not NVIM.exists():
        pytest.fail(f"{NVIM} is missing: run scripts/bootstrap (it installs Neovim 0.12)")
    return NVIM


def test_neovim_recipe(served: Served, tmp_path: Path, project: Path, nvim_012: Path) -> None:
    mode, where, token_file = target(served)
    env = {
        **os.environ,
        "DSH_MODE": mode,
        "DSH_TARGET": where,
        "DSH_TOKEN_FILE": token_file,
        "DSH_STORE": str(tmp_path / "store.sqlite3"),
        "DSH_CWD": str(project),
        "XDG_STATE_HOME": str(tmp_path / "xdg"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
    }
    done = subprocess.run(
        [str(nvim_012), "--headless", "--clean", "-l", str(RECIPES / "nvim_socket_client.lua")],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    out = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert done.returncode == 0 and "error" not in out, (out, done.stderr.decode())
    assert out["protocolVersion"] == 1
    assert out["sessionId"] == f"nvim-{mode}"
    assert "Use the socket." in out["preview"]
    assert out["stopped"] is True
    assert served.proc.poll() is None

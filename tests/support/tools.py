"""Fixtures for the real programs a test needs besides Python: the ``editors`` marker follows them.

A test that needs Neovim, code-server with Chromium, or the extension's Node toolchain asks for
one of the fixtures declared here with ``tool_fixture`` (directly, or through a fixture of its
own that does). tests/conftest.py gives every such test the ``editors`` marker, wherever the
test lives, so ``-m "not editors"`` leaves out exactly the tests that start a real editor or its
toolchain, and a drift check that only reads files runs in the fast loop. Each fixture fails
(never skips) when its program is missing: scripts/bootstrap installs them all.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-extension"

# The names of the fixtures that need a real editor or its toolchain (filled by tool_fixture).
TOOL_FIXTURES: set[str] = set()

F = TypeVar("F", bound=Callable[..., Any])


def tool_fixture(**options: Any) -> Callable[[F], F]:
    """``pytest.fixture(**options)`` that also marks every test using it as ``editors``."""

    def register(function: F) -> F:
        TOOL_FIXTURES.add(function.__name__)
        fixture: F = pytest.fixture(**options)(function)
        return fixture

    return register


def needs_tools(fixturenames: list[str]) -> bool:
    return not TOOL_FIXTURES.isdisjoint(fixturenames)


@tool_fixture()
def node_toolchain() -> str:
    """Node on PATH and the extension's installed npm dependencies; the path of ``node``."""
    node = shutil.which("node")
    if node is None or not (EXTENSION / "node_modules").is_dir():
        pytest.fail(
            "node and vscode-extension/node_modules are needed: run scripts/bootstrap"
            " (bootstrap.d/vscode.sh)",
            pytrace=False,
        )
    return node


@tool_fixture()
def code_server_tools(node_toolchain: str) -> None:
    """code-server, playwright-core, Chromium, the built extension and the sidecar's venv."""
    from tests.support.vscode_harness import require_tools

    require_tools()

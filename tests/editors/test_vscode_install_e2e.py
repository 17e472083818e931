"""The packaged .vsix installed into real VS Code (code-server + Chromium) on a machine where
the user has done nothing else: no virtualenv on PATH, no sidecar installed anywhere.

It starts with dsh.pythonPath naming an interpreter that does not exist. The user must get one
notification (naming the setting, with a button that opens it), not a cascade; after clearing the
setting in the settings editor the sidecar must start by itself with the libraries bundled in the
.vsix, and answer: the status bar and the inspector show the chain. Run twice: in a light theme
with python3 from PATH, and in a dark theme with the Python extension installed, whose selected
interpreter must then be the one used. (The Python extension cannot be installed offline; a
stand-in with its id offers the part of its API that is read, see python-extension-standin/.)
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.tools import tool_fixture
from tests.support.vscode_harness import (
    THEMES,
    CodeServer,
    code_server,
    package_python_extension_standin,
    package_vsix,
    path_without_virtualenvs,
    require_tools,
    rerun_if_a_webview_never_showed,
    run_runner,
)

MISSING = "/nonexistent/dsh-e2e/python3"


@tool_fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return package_vsix(tmp_path_factory.mktemp("vsix") / "dsh-sidecar.vsix")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "pkg" / "src").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Root rules.\n", encoding="utf-8")
    (ws / "pkg" / "AGENTS.md").write_text("Package rules.\n", encoding="utf-8")
    (ws / "pkg" / "src" / "x.txt").write_text("hello\n", encoding="utf-8")
    return ws


# The interpreter the Python extension stand-in selects: this machine's base Python (3.11+,
# without the sidecar installed), named by its absolute path so it cannot be mistaken for PATH's.
SELECTED = str(Path(sys.base_prefix) / "bin" / "python3")


@pytest.fixture(
    params=[("light", "path"), ("dark", "python-extension")],
    ids=["light-path", "dark-python-extension"],
)
def case(request: pytest.FixtureRequest) -> tuple[str, str]:
    return (str(request.param[0]), str(request.param[1]))


@tool_fixture()
def cs(tmp_path: Path, workspace: Path, vsix: Path, case: tuple[str, str]) -> Iterator[CodeServer]:
    require_tools(sidecar_in_venv=False)
    theme, source = case
    vsixes = [vsix]
    if source == "python-extension":
        vsixes.append(package_python_extension_standin(tmp_path / "python-standin.vsix"))
    with code_server(
        tmp_path,
        workspace,
        user_settings={"workbench.colorTheme": THEMES[theme], "dsh.pythonPath": MISSING},
        install_vsix=vsixes,
        env={
            "PATH": path_without_virtualenvs(),
            "VIRTUAL_ENV": "",
            "DSH_E2E_SELECTED_PYTHON": SELECTED,
        },
    ) as server:
        yield server


@rerun_if_a_webview_never_showed
def test_vsix_starts_the_bundled_sidecar_after_one_actionable_message(
    cs: CodeServer, workspace: Path, case: tuple[str, str]
) -> None:
    theme, source = case
    code, details = run_runner("install-runner.js", cs, workspace, 200, THEME_KIND=theme)
    assert code == 0, details
    ui = json.loads((cs.home / "e2e" / "install-done").read_text())

    # One notification, naming the setting and what is wrong with it.
    assert ui["toastText"] == (
        f'DSH Sidecar: dsh.pythonPath is "{MISSING}": not found. '
        "Set dsh.pythonPath to a Python 3.11+ interpreter."
    )
    assert ui["toastButtons"] == ["Open Setting", "Retry", "Show Output"]
    # Every notification the page showed (recorded as they appeared): just that one.
    assert ui["notifications"] == [ui["toastText"]], ui["notifications"]
    assert ui["settingShown"].startswith("Dsh: Python Path\n"), ui["settingShown"]

    # The sidecar then ran: the status bar and the inspector answer from it.
    assert "2 instruction files apply to x.txt" in ui["statusLabel"]
    assert "pkg/AGENTS.md" in ui["inspectorText"] and "AGENTS.md" in ui["inspectorText"]
    assert f"vscode-{theme}" in ui["bodyClass"].split(), ui["bodyClass"]

    # ... with python3 from PATH, or the Python extension's interpreter, and the sidecar from the
    # installed extension's bundled/libs.
    logs = list(cs.home.glob("data/logs/**/*DSH Sidecar*.log"))
    assert logs, "no log file of the DSH Sidecar output channel"
    log = "\n".join(p.read_text(errors="replace") for p in logs)
    origin = "PATH" if source == "path" else "the Python extension"
    started = re.search(
        rf"starting (\S+) \(Python (3\.\d+)\.\d+ from {origin}\) with the sidecar \S+ from (\S+)",
        log,
    )
    assert started, log[-3000:]
    assert started.group(1) == ("python3" if source == "path" else SELECTED)
    assert int(started.group(2).split(".")[1]) >= 11
    assert "/exts/dsh-sidecar.dsh-sidecar-" in started.group(3)
    assert started.group(3).endswith("/bundled/libs/dsh_sidecar")

"""The packaged .vsix installed into real VS Code (code-server + Chromium) on a machine where
the user has done nothing else: no virtualenv on PATH, no sidecar installed anywhere.

It starts with dsh.pythonPath naming an interpreter that does not exist. The user must get one
notification (naming the setting, with a button that opens it), not a cascade; after clearing the
setting in the settings editor the sidecar must start by itself with python3 from PATH and the
libraries bundled in the .vsix, and answer: the status bar and the inspector show the chain.
Run in a light and a dark theme.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from vscode_harness import (
    THEMES,
    CodeServer,
    code_server,
    package_vsix,
    path_without_virtualenvs,
    require_tools,
    run_runner,
)

MISSING = "/nonexistent/dsh-e2e/python3"


@pytest.fixture(scope="module")
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


@pytest.fixture(params=sorted(THEMES))
def theme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cs(tmp_path: Path, workspace: Path, vsix: Path, theme: str) -> Iterator[CodeServer]:
    require_tools(sidecar_in_venv=False)
    path = path_without_virtualenvs()
    with code_server(
        tmp_path,
        workspace,
        user_settings={"workbench.colorTheme": THEMES[theme], "dsh.pythonPath": MISSING},
        install_vsix=vsix,
        env={"PATH": path, "VIRTUAL_ENV": ""},
    ) as server:
        yield server


def test_vsix_starts_the_bundled_sidecar_after_one_actionable_message(
    cs: CodeServer, workspace: Path, theme: str
) -> None:
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

    # ... with python3 from PATH and the sidecar from the installed extension's bundled/libs.
    logs = list(cs.home.glob("data/logs/**/*DSH Sidecar*.log"))
    assert logs, "no log file of the DSH Sidecar output channel"
    log = "\n".join(p.read_text(errors="replace") for p in logs)
    started = re.search(
        r"starting (\S+) \(Python (3\.\d+)\.\d+ from PATH\) with the sidecar \S+ from (\S+)", log
    )
    assert started, log[-3000:]
    assert started.group(1) == "python3"
    assert int(started.group(2).split(".")[1]) >= 11
    assert "/exts/dsh-sidecar.dsh-sidecar-" in started.group(3)
    assert started.group(3).endswith("/bundled/libs/dsh_sidecar")

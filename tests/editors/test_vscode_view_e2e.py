"""The chat as a view, refused settings and the time zone, in real VS Code (code-server) and
Chromium (issue 22, items 1-3).

The User settings start with `dsh.timeContext.timeZone: "Mars/Olympus"` and the browser runs in
America/New_York. The sidecar runs anyway, with one notification naming the key, the value and the
expected form and a link that opens the setting; the chat answers with the browser's zone. Fixing
the setting applies it without a restart (the next reading is in Asia/Tokyo) and takes the
notification down; a later bad value is told again and goes away when cleared. The chat is a
webview view: no editor tab, it survives "Close All Editors", keeps its messages while hidden,
Ctrl+Alt+D shows it, Ctrl+Alt+Shift+D starts a new session, and neither key is bound by the
editor's defaults; "Open Agent Chat in Editor" still gives a tab. The runner is
vscode-extension/test/e2e/view-runner.js; it saves a screenshot of the view per theme.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from vscode_harness import (
    PYTHON,
    THEMES,
    CodeServer,
    FakeModel,
    Reply,
    code_server,
    model_settings,
    require_tools,
    run_runner,
    text_reply,
    texts,
)


def script(n: int, body: dict[str, Any]) -> Reply:
    return text_reply(n, f"Answer {n}: it is noted.")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Root rules.\n", encoding="utf-8")
    return ws


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel(script) as model:
        yield model


@pytest.fixture(params=sorted(THEMES))
def theme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cs(tmp_path: Path, workspace: Path, fake_model: FakeModel, theme: str) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": THEMES[theme],
        "dsh.timeContext.enabled": True,
        "dsh.timeContext.timeZone": "Mars/Olympus",
        **model_settings(fake_model),
    }
    with code_server(tmp_path, workspace, user_settings=settings) as server:
        yield server


def readings(body: dict[str, Any]) -> list[str]:
    return [
        t for m in body["messages"] for t in texts(m) if "Time sampled while preparing turn" in t
    ]


def test_chat_view_settings_and_time_zone(
    cs: CodeServer, fake_model: FakeModel, workspace: Path, theme: str, tmp_path: Path
) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    code, details = run_runner(
        "view-runner.js", cs, workspace, 300, THEME_KIND=theme, SCREENSHOTS=str(shots)
    )
    found = json.loads((cs.home / "e2e" / "view-done").read_text())
    keep = os.environ.get("DSH_KEEP_SCREENSHOTS")  # a folder to keep the screenshots in
    if keep:
        for shot in shots.iterdir():
            shutil.copyfile(shot, Path(keep) / shot.name)
    assert code == 0, f"{details}\n--- found ---\n{json.dumps(found, indent=1)}"

    # 1. One notification names the key, the bad value and the expected form, with the link.
    text = found["refusalText"]
    assert "dsh.timeContext.timeZone" in text and '"Mars/Olympus"' in text
    assert 'such as "Europe/Paris"' in text
    assert found["refusalLinks"] == ["Open Setting"]
    assert "Time Zone" in " ".join(found["settingsRows"]), found["settingsRows"]
    assert found["refusalGone"] is True
    assert "Nowhere/Land" in found["laterText"]
    refusals = [n for n in found["notifications"] if "was refused" in n]
    assert len(refusals) == 2, found["notifications"]  # one per problem, never repeated
    assert not any("sidecar" in n and "not" in n and "running" in n for n in found["notifications"])

    # 2. The zones the model was told: the browser's while the setting was refused, then the
    # setting's, then (a later bad value keeps the previous one) still the setting's.
    bodies = fake_model.bodies()
    assert len(bodies) == 3
    first, second, third = (readings(b)[-1] for b in bodies)
    assert "[America/New_York]" in first, first
    assert "+09:00[Asia/Tokyo]" in second, second
    assert "[America/New_York]" in third, third  # refused again: the editor's zone

    # 3. A view, not a tab; it survives Close All Editors and keeps its state when hidden.
    assert found["viewHeader"] >= 1 and found["chatTabsAtStart"] == 0
    assert found["afterCloseAll"] == {"frame": True, "messages": 3}
    assert found["hiddenWhileExplorer"] is True
    assert found["afterShow"] == {"messages": 3}
    assert found["titleVisible"] is True  # the header wraps in a narrow side bar
    assert found["afterNewSession"] == {"messages": 0}
    assert found["defaultsSize"] > 10000 and found["defaultsListOurs"] is True
    assert found["conflicts"] == []
    assert found["editorTab"] is True

    assert (shots / f"chat-view-{theme}.png").stat().st_size > 10000

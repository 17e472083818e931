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
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.tools import tool_fixture
from tests.support.vscode_harness import (
    PYTHON,
    THEMES,
    CodeServer,
    FakeModel,
    Reply,
    code_server,
    model_settings,
    require_tools,
    rerun_if_a_webview_never_showed,
    run_runner,
    text_reply,
    texts,
    tool_reply,
)

REASON = "put it under lib/ instead"
MOD = (
    "class Greeter:\n"
    "    def greet(self, name):\n"
    '        return "hi " + name\n'
    "\n"
    "\n"
    "def greet(name):\n"
    '    return "hello " + name\n'
)
LIB_RULE = "LIB-RULE-77: tabs in lib."
DEEP = "packages/a-rather-long-package-name/src/components/deeply/nested/module"
BLOCK = 'def greet(name):\n    return f"good day {name}"\n'
APPLIED = MOD.replace('def greet(name):\n    return "hello " + name\n', BLOCK)


def script(n: int, body: dict[str, Any]) -> Reply:
    """Answers by the marker word of the latest prompt: TIME, TOOLS or CODE."""
    messages = body["messages"]
    marked = [
        (i, t.split()[0])
        for i, m in enumerate(messages)
        if m["role"] == "user"
        for t in texts(m)
        if t.split()[:1] and t.split()[0] in ("TIME", "TOOLS", "CODE", "DEEPEDIT")
    ]
    at, marker = marked[-1]
    if marker == "CODE":
        return text_reply(n, f"Use this:\n\n```python src/mod.py\n{BLOCK}```\n", pieces=1)
    if marker == "TIME":
        return text_reply(n, f"Answer {n}: it is noted.")
    calls = [m for m in messages[at + 1 :] if m["role"] == "assistant" and m.get("tool_calls")]
    if marker == "DEEPEDIT":  # the same write twice: held for lib/AGENTS.md first, then asked
        if len(calls) < 2:
            args = {"file_path": "lib/notes.txt", "content": "tabs\n"}
            return tool_reply(n, f"call_deep_{len(calls) + 1}", "write", args)
        return text_reply(n, "Written after reading the lib rules.")
    if not calls:
        return tool_reply(n, "call_read_1", "read", {"file_path": "AGENTS.md"})
    if len(calls) == 1:
        return tool_reply(
            n, "call_write_1", "write", {"file_path": "src/new.txt", "content": "x\n"}
        )
    return text_reply(n, "Understood, not written.")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Root rules.\n", encoding="utf-8")
    (ws / "src").mkdir()
    (ws / "src" / "mod.py").write_text(MOD, encoding="utf-8")
    (ws / "lib").mkdir()
    (ws / "lib" / "AGENTS.md").write_text(f"{LIB_RULE}\n", encoding="utf-8")
    deep = ws / DEEP
    deep.mkdir(parents=True)
    (deep / "AGENTS.md").write_text("Deep rules.\n", encoding="utf-8")
    (deep / "x.txt").write_text("x\n", encoding="utf-8")
    return ws


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel(script) as model:
        yield model


# The high-contrast themes too: every control must meet WCAG AA there as well.
VIEW_THEMES = {**THEMES, "hc": "Default High Contrast", "hc-light": "Default High Contrast Light"}


@pytest.fixture(params=sorted(VIEW_THEMES))
def theme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@tool_fixture()
def cs(tmp_path: Path, workspace: Path, fake_model: FakeModel, theme: str) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": VIEW_THEMES[theme],
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


@rerun_if_a_webview_never_showed
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
    # three prompts, a turn with two tool calls, one with a held and a re-issued write, a block,
    # its retry, and the edited prompt
    assert len(bodies) == 12
    first, second, third = (readings(b)[-1] for b in bodies[:3])
    assert "[America/New_York]" in first, first
    assert "+09:00[Asia/Tokyo]" in second, second
    assert "[America/New_York]" in third, third  # refused again: the editor's zone

    # 6. Tool calls as cards: the tool, the file as a link, the status, the result folded.
    read, write = found["readCard"], found["writeCard"]
    assert (read["tool"], read["file"], read["href"]) == ("read", "AGENTS.md", "AGENTS.md")
    assert read["status"] == "✓ done" or read["status"] == "done", read
    assert read["resultOpen"] is False and "Root rules." in read["result"]
    assert read["separateResults"] == 0  # the result is in the card, not a second item
    assert (write["tool"], write["file"]) == ("write", "src/new.txt")
    assert write["statusWhilePending"] == "running…"
    assert write["status"] == "rejected" and REASON in write["result"]
    assert found["openedFromCard"] == "AGENTS.md"
    # Reject's reason went back to the model as the tool result; nothing was written.
    tool_results = [m["content"] for m in bodies[5]["messages"] if m["role"] == "tool"]
    assert tool_results[-1] == (
        "Error: the user rejected the write of src/new.txt; the file was not changed. "
        f"The user's reason: {REASON}"
    )
    assert not (workspace / "src" / "new.txt").exists()

    # 5. Copy a message; history: search, rename, delete (asked first, gone from the store).
    assert found["copiedAnswer"] == "Answer 1: it is noted."
    assert "TIME first" in found["sessionsBefore"] and len(found["sessionsBefore"]) == 2
    assert found["searchVisible"] == ["TIME first"]
    assert "Renamed history" in found["renamedList"]
    assert found["renamedHiddenBySearch"] is True  # the search still says "time"
    first_id = found["firstSessionId"]
    titles = {s["id"]: s.get("title") for s in found["renamedInStore"]["sessions"]}
    assert titles[first_id] == "Renamed history"
    assert 'Delete the session "Renamed history"?' in found["deleteQuestion"]
    assert first_id not in {s["id"] for s in found["afterDelete"]["sessions"]}
    store = sqlite3.connect(cs.dsh_home / "sessions.sqlite3")
    try:
        for table, column in (
            ("sessions", "id"),
            ("events", "session_id"),
            ("surface", "session_id"),
        ):
            count = store.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (first_id,))
            assert count.fetchone()[0] == 0, table
    finally:
        store.close()

    # 7. Instructions before the first edit: the write into lib/ was held, lib/AGENTS.md came as
    # a `set` right after the result in the same turn, the re-issued write was asked and written.
    held, reissued, closing = bodies[6], bodies[7], bodies[8]
    after_hold = reissued["messages"]
    tool_at = max(i for i, m in enumerate(after_hold) if m["role"] == "tool")
    assert after_hold[tool_at]["content"].startswith(
        "Not applied yet: workspace instructions you have not seen apply to lib/notes.txt "
        "(lib/AGENTS.md)."
    )
    later = "\n".join(t for m in after_hold[tool_at + 1 :] for t in texts(m))
    assert "Additional instructions from: lib/AGENTS.md" in later and LIB_RULE in later
    assert LIB_RULE not in "\n".join(t for m in held["messages"] for t in texts(m))
    assert [m["content"] for m in closing["messages"] if m["role"] == "tool"][-1].startswith(
        "Wrote"
    )
    assert (workspace / "lib" / "notes.txt").read_text() == "tabs\n"
    assert found["preEdit"] == {"approvals": 1, "firstStatus": "held: new instructions first"}

    # 5. Retry and edit: the old attempt left the model's view (the log keeps it), so the
    # prompt is there once and the discarded answer not at all.
    retried, edited = bodies[10], bodies[11]

    def prompts(body: dict[str, Any], start: str) -> int:
        return sum(
            t.startswith(start) for m in body["messages"] if m["role"] == "user" for t in texts(m)
        )

    def said(body: dict[str, Any], text: str) -> bool:
        return any(
            text in t for m in body["messages"] if m["role"] == "assistant" for t in texts(m)
        )

    assert prompts(retried, "CODE improve greet") == 1 and not said(retried, "Use this")
    # The attempt wrote nothing (Apply of its code block is the user's, not a tool call), so the
    # model is told nothing about it (issue 34, item 4).
    assert not any("discard" in t for m in retried["messages"] for t in texts(m))
    assert prompts(edited, "TIME edited prompt") == 1 and prompts(edited, "CODE improve greet") == 0
    assert not said(edited, "Use this")
    redo = found["redo"]
    assert redo["usersBefore"] == redo["usersAfterRetry"] == redo["usersAfterEdit"]
    assert redo["lastPrompt"] == "TIME edited prompt"
    assert redo["editButtons"] == 1 and redo["retryButtons"] == 1  # the last ones only

    # 4. Apply: the module-level greet replaced (not pasted into the class), shown in a diff,
    # written only on Accept.
    apply = found["apply"]
    assert apply["card"].startswith("Apply the code block: edit src/mod.py")
    assert apply["diffTab"] is True and apply["onDiskBeforeAccept"] == MOD
    assert (workspace / "src" / "mod.py").read_text() == APPLIED
    assert 'return "hi " + name' in APPLIED  # the method is untouched

    # 3. A view, not a tab; it survives Close All Editors and keeps its state when hidden.
    assert found["viewHeader"] >= 1 and found["chatTabsAtStart"] == 0
    assert found["afterCloseAll"] == {"frame": True, "messages": 6}
    assert found["hiddenWhileExplorer"] is True
    assert found["afterShow"] == {"messages": 6}
    assert found["titleVisible"] is True  # the header wraps in a narrow side bar
    assert found["afterNewSession"] == {"messages": 0}
    assert found["defaultsSize"] > 10000 and found["defaultsListOurs"] is True
    assert found["conflicts"] == []
    assert found["editorTab"] is True

    # 4. The inspector's long pending title wraps at "/", Drop in view; WCAG AA everywhere.
    ins = found["inspector"]
    assert DEEP in ins["title"] and ins["wbr"] >= DEEP.count("/")
    assert ins["titleLines"] >= 2 and ins["dropInView"] is True and ins["scrollsSideways"] is False
    assert found["contrast"] == []

    for name in ("chat-view", "tool-card", "apply-diff", "inspector-pending"):
        assert (shots / f"{name}-{theme}.png").stat().st_size > 5000

"""The chat panel in real VS Code (code-server) and Chromium, in a light and a dark theme, against
a scripted OpenAI-compatible model: Markdown with highlighted code, incremental streaming, Copy,
Insert into New File and links, an edit accepted in a diff, a write rejected, Stop keeping the partial answer,
queued prompts, a provider error with Retry, a prompt that fails before the model kept in the
box, ↑ recall, compaction that asks first, and switching sessions. The runner
(vscode-extension/test/e2e/chat-runner.js) asserts on the page as it goes; this test checks what
it found, the files on disk and what the model was sent.
"""

from __future__ import annotations

import json
import threading
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

APP = 'def greet(name):\n    return "hello " + name\n'
EDITED = 'def greet(name):\n    return "good day " + name\n'
CODE = 'def greet(name):\n    return f"hello {name}"  # friendly\n'
MARKDOWN = (
    "# Plan\n\n"
    "First a paragraph with `inline code`, [the docs](https://example.com/docs), "
    "[the app](src/app.py#L1) and [bad](javascript:alert(1)).\n\n"
    "- one\n- two\n\n"
    f"```python\n{CODE}```\n\n"
    "Done.\n"
)
RATE_LIMIT = b'{"error":{"message":"Rate limit reached for fake-model","type":"requests","code":"rate_limit_exceeded"}}'
PKG_RULE = "PKG-RULE-51: tabs in pkg."
LIB_RULE = "LIB-RULE-52: spaces in lib."
MARKERS = ("MARKDOWN", "FOLLOWUP", "EDIT", "WRITE", "STOP", "FAILONCE")


class Script:
    """Answers by the marker word that starts the turn's prompt."""

    def __init__(self) -> None:
        self.failed_once = False
        self.lock = threading.Lock()

    def __call__(self, n: int, body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if "tools" not in body:
            return text_reply(n, "Summary: markdown, an edit, a refused write, a stop.", pieces=1)
        at, marker = next(
            (i, t.split()[0])
            for i in range(len(messages) - 1, -1, -1)
            if messages[i]["role"] == "user"
            for t in texts(messages[i])
            if t.split()[:1] and t.split()[0] in MARKERS
        )
        called = any(m["role"] == "assistant" and m.get("tool_calls") for m in messages[at + 1 :])
        if marker == "MARKDOWN":
            return text_reply(n, MARKDOWN, pieces=14, pace=0.25)
        if marker == "FOLLOWUP":
            return text_reply(n, "Follow-up answered.")
        if marker == "EDIT":
            if called:
                return text_reply(n, "Edit done.")
            args = {
                "file_path": "src/app.py",
                "old_string": '"hello "',
                "new_string": '"good day "',
            }
            return tool_reply(n, "call_edit_1", "edit", args)
        if marker == "WRITE":
            if called:
                return text_reply(n, "Noted, not written.")
            return tool_reply(
                n, "call_write_1", "write", {"file_path": "src/new.txt", "content": "x\n"}
            )
        if marker == "STOP":
            return text_reply(n, "Partial answer that goes on", pieces=2, hold=True)
        with self.lock:
            first, self.failed_once = not self.failed_once, True
        if first:
            return Reply(status=429, error_body=RATE_LIMIT)
        return text_reply(n, "Recovered after retry.")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "AGENTS.md").write_text("Root rules.\n", encoding="utf-8")
    (ws / "src" / "app.py").write_text(APP, encoding="utf-8")
    for pkg, rule in (("pkg", PKG_RULE), ("lib", LIB_RULE)):
        (ws / pkg).mkdir()
        (ws / pkg / "AGENTS.md").write_text(f"{rule}\n", encoding="utf-8")
    (ws / "pkg" / "x.txt").write_text("x\n", encoding="utf-8")
    (ws / "lib" / "y.txt").write_text("y\n", encoding="utf-8")
    return ws


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel(Script()) as model:
        yield model


@pytest.fixture(params=sorted(THEMES))
def theme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@tool_fixture()
def cs(tmp_path: Path, workspace: Path, fake_model: FakeModel, theme: str) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": THEMES[theme],
        **model_settings(fake_model),
    }
    with code_server(tmp_path, workspace, user_settings=settings) as server:
        yield server


@rerun_if_a_webview_never_showed
def test_chat_panel(cs: CodeServer, fake_model: FakeModel, workspace: Path, theme: str) -> None:
    code, details = run_runner(
        "chat-runner.js", cs, workspace, 300, THEME_KIND=theme, MODEL_BASE_URL=fake_model.base_url
    )
    assert code == 0, details
    found = json.loads((cs.home / "e2e" / "chat-done").read_text())

    # The theme reached the webview; the empty panel named the model.
    assert f"vscode-{theme}" in found["bodyClass"].split()
    assert f"Model: fake-model at {fake_model.base_url}" in found["empty"]

    # Markdown: structure, a highlighted fenced block (not backticks), theme colours, editor font.
    md = found["markdown"]
    assert md["h1"] == "Plan" and md["items"] == ["one", "two"]
    assert md["lang"] == "python" and md["keyword"] == "def"
    assert "```" not in md["text"] and "[bad](javascript:alert(1))" in md["text"]
    assert md["keywordColor"] == {"light": "rgb(0, 0, 255)", "dark": "rgb(86, 156, 214)"}[theme]
    assert md["keywordColor"] != md["codeColor"]
    assert md["editorFont"] and md["codeFont"].split(",")[0].strip(" \"'") in md["editorFont"]
    assert md["buttons"] == ["Copy", "Apply", "Insert into New File"]
    assert {"href": None, "dataHref": "https://example.com/docs"} in md["links"]
    assert {"href": None, "dataHref": "src/app.py#L1"} in md["links"]
    assert all(not (link["dataHref"] or "").startswith("javascript") for link in md["links"])
    assert found["streamKeptFirstBlock"] is True, "finished blocks are not re-rendered per delta"
    # A prompt typed meanwhile was queued (the button said so) and sent after the turn.
    assert found["sendLabelWhileBusy"] == "Queue"
    assert "FOLLOWUP and then?" in found["queued"] and found["queueAfter"] is True
    assert found["clipboard"] == CODE
    # Insert into New File: an untitled editor in the block's language; no file changed.
    assert found["inserted"]["untitled"] is True and found["inserted"]["text"] == CODE
    assert found["inserted"]["languageId"] == "python"
    assert found["appOnDiskAfterInsert"] == APP
    assert found["reverted"] == {"text": APP, "dirty": False}

    # "Show Workspace Instructions for This File" on src/app.py: the chain, in agreeing words.
    assert found["scopesTitle"] == "1 instruction file applies to app.py"
    assert len(found["scopesRows"]) == 1 and found["scopesRows"][0].startswith("AGENTS.md")
    assert "included · 12 bytes" in found["scopesRows"][0]

    # dsh.hover.otherFiles: off by default (no instruction hover on code), then on.
    assert not any("AGENTS.md" in h for h in found["hoverOff"]), found["hoverOff"]
    assert any("AGENTS.md" in h for h in found["hoverAlways"]), found["hoverAlways"]

    # The edit waited in a diff; the file changed only on Accept.
    assert 'return "good day " + name' in found["diffLines"].replace("\xa0", " ")
    assert found["beforeAccept"] == APP
    assert found["afterAccept"] == EDITED == (workspace / "src" / "app.py").read_text()
    assert found["diffClosed"] is True

    # The write was rejected: no file, and the model read a rejection as the tool result.
    assert "create" in found["newFileCard"] and found["newFileExists"] is False
    assert not (workspace / "src" / "new.txt").exists()
    bodies = fake_model.bodies()
    tool_results = [m["content"] for b in bodies for m in b["messages"] if m["role"] == "tool"]
    assert (
        "Error: the user rejected the write of src/new.txt; the file was not changed."
        in tool_results
    )
    assert "Edited src/app.py" in tool_results

    # Stop kept what had streamed, in the panel and in the session's log.
    assert "Partial answer that goes on" in found["stopped"] and "stopped" in found["stopped"]
    assert found["stoppedLabel"] == "The agent (stopped)"
    assert found["restored"] == "QUEUED after stop"
    assert found["status"] == (
        "Stopped. What the agent had said so far is kept. 1 queued message put back into the box."
    )
    last = found["lastSurface"]
    assert last["type"] == "assistant/message"
    assert last["data"]["message"]["content"] == [
        {"type": "text", "text": "Partial answer that goes on"}
    ]
    assert last["data"]["message"]["source"]["stopped"] is True
    assert not any(
        "QUEUED after stop" in t for b in bodies for m in b["messages"] for t in texts(m)
    )

    # The provider's words, not its JSON; Retry asked again without a second copy of the prompt.
    assert found["error"] == (
        "the model endpoint answered 429 Too Many Requests: Rate limit reached for fake-model"
    )
    assert found["errorButtons"][0] == "Retry" and found["failOncePrompts"] == 1

    # No model: the prompt stayed in the box, the reason in view, nothing sent.
    assert found["noModel"] == "Set dsh.model.baseUrl to an OpenAI-compatible endpoint."
    assert "Set up the model" in found["noModelButtons"]
    assert found["keptPrompt"] == "NOMODEL keep me" and found["noModelSent"] == 0
    assert (found["recall1"], found["recall2"]) == ("NOMODEL keep me", "FAILONCE now")

    # Compaction asked first; then the history was one summary.
    assert found["confirm"].startswith("Replace the ") and "by a summary" in found["confirm"]
    assert found["afterCompactUsers"] == 0

    # Sessions: titled by the first prompt; a new one; back to the earlier one from the list.
    assert found["titled"] == "MARKDOWN show me the plan"
    assert found["newTitle"] == "New session"
    assert any(s.startswith("MARKDOWN show me the plan") for s in found["sessionList"])
    assert found["switchedTitle"] == "MARKDOWN show me the plan" and found["switchedTo"] is True

    # Pending context: both new AGENTS.md were queued by opening files; one change was dropped in
    # the panel, the rest in the inspector; nothing was left, and the next request carried neither.
    assert "pkg/AGENTS.md" in found["pendingBefore"] and "lib/AGENTS.md" in found["pendingBefore"]
    assert "pkg/AGENTS.md" in found["pendingAfterOne"]
    assert "lib/AGENTS.md" not in found["pendingAfterOne"]
    assert "pkg/AGENTS.md" in found["inspectorPending"]  # the rest went from the inspector
    assert found["pendingLeft"] == []
    last_body = bodies[-1]
    assert any("FOLLOWUP after dropping" in t for m in last_body["messages"] for t in texts(m))
    sent = "\n".join(t for m in last_body["messages"] for t in texts(m))
    assert PKG_RULE not in sent and LIB_RULE not in sent

    assert found["a11y"] == {
        "log": ["log", "off"],
        "status": "polite",
        "prompt": ["combobox", "mentions"],
    }

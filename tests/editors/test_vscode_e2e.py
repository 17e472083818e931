"""End to end in real VS Code: code-server 4.100.3 + the extension (extensionDevelopmentPath) +
the real sidecar + a scripted OpenAI-compatible model, driven by Debian's Chromium through
playwright-core.

The model's first reply calls `read` on pkg/src/x.txt, whose package holds an AGENTS.md the
session has not seen; its second reply answers; a third request, without tools, is the
summary that "DSH: Compact Chat Session" asks for. The second model request must carry that
AGENTS.md as a `<system-reminder>` user message right after the tool result, the inspector must
show it, and a screenshot is saved under this test's tmp dir.

Everything is bounded: code-server must answer within 30 s, the browser run within 150 s, and
code-server's whole process group is killed in teardown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.tools import tool_fixture
from tests.support.vscode_harness import (
    PYTHON,
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

NESTED_RULE = "PKG-RULE-7f3a: in pkg, indent with tabs."
ROOT_RULE = "ROOT-RULE-19c2: be concise."
FILE_TEXT = "hello from x"
REMINDER = "<system-reminder>\nAdditional instructions from: pkg/AGENTS.md"


def script(n: int, body: dict[str, Any]) -> Reply:
    """First a `read` of pkg/src/x.txt, then an answer quoting the tool result; a request
    without tools is the summary that "DSH: Compact Chat Session" asks for."""
    if n == 1:
        return tool_reply(n, "call_read_1", "read", {"file_path": "pkg/src/x.txt"})
    if "tools" not in body:
        return text_reply(n, "Summary: read pkg/src/x.txt.", pieces=1)
    tool_text = next(
        (m.get("content") for m in reversed(body.get("messages", [])) if m.get("role") == "tool"),
        "(no tool result)",
    )
    return text_reply(n, f"The file says: {str(tool_text).strip()}", pieces=2)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)  # the project root marker
    (ws / "pkg" / "src").mkdir(parents=True)
    (ws / "AGENTS.md").write_text(f"{ROOT_RULE}\n", encoding="utf-8")
    (ws / "pkg" / "AGENTS.md").write_text(f"{NESTED_RULE}\n", encoding="utf-8")
    (ws / "pkg" / "src" / "x.txt").write_text(f"{FILE_TEXT}\n", encoding="utf-8")
    return ws


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel(script) as model:
        yield model


@tool_fixture()
def cs(tmp_path: Path, workspace: Path, fake_model: FakeModel) -> Iterator[CodeServer]:
    require_tools()
    # dsh.pythonPath in the User settings: a code-server window is a remote window, where VS Code
    # ignores User values of machine-scoped settings; the setting is window-scoped so this works.
    with code_server(
        tmp_path,
        workspace,
        user_settings={"dsh.pythonPath": str(PYTHON), **model_settings(fake_model)},
    ) as server:
        yield server


# --- the test -------------------------------------------------------------------------------------


@rerun_if_a_webview_never_showed
def test_chat_turn_gets_nested_instructions_after_tool_result(
    cs: CodeServer, fake_model: FakeModel, workspace: Path
) -> None:
    e2e_dir = cs.home / "e2e"
    code, details = run_runner(
        "runner.js", cs, workspace, 170, EXPECTED_ANSWER=f"The file says: {FILE_TEXT}"
    )
    assert code == 0, details

    # The model saw the tool call request, the answer request, the compaction summary, then the
    # prompt of the new session that mentions the first one.
    assert len(fake_model.requests) == 4, details
    first, second, summary, mentioning = (r["body"] for r in fake_model.requests)
    assert "tools" not in summary
    assert summary["messages"][-1]["role"] == "user"
    assert summary["messages"][-1]["content"].startswith("Summarize the conversation so far")
    assert all(
        r["headers"].get("authorization") == "Bearer test-key-e2e" for r in fake_model.requests
    )
    assert first["model"] == "fake-model" and first["stream"] is True
    assert {t["function"]["name"] for t in first["tools"]} == {"read", "write", "edit"}

    def flat(body: dict[str, Any]) -> list[tuple[str, str]]:
        return [(m["role"], "\n".join(texts(m))) for m in body["messages"]]

    first_msgs, second_msgs = flat(first), flat(second)
    # The root AGENTS.md came with the first step (baseline); the nested one did not.
    assert any(role == "user" and ROOT_RULE in text for role, text in first_msgs), first_msgs
    assert not any(NESTED_RULE in text for _, text in first_msgs), first_msgs

    tool_at = next(i for i, (role, _) in enumerate(second_msgs) if role == "tool")
    assert FILE_TEXT in second_msgs[tool_at][1]
    assert second["messages"][tool_at - 1]["tool_calls"][0]["function"]["name"] == "read"
    nested = [
        i
        for i, m in enumerate(second["messages"])
        if m["role"] == "user" and any(t.startswith(REMINDER) for t in texts(m))
    ]
    assert nested, f"no nested instructions in the second request: {second_msgs}"
    assert nested[0] > tool_at, f"nested instructions at {nested[0]}, tool result at {tool_at}"
    assert nested[0] == tool_at + 1, "the instructions come right after the tool result"
    assert NESTED_RULE in second_msgs[nested[0]][1]

    # The UI: the answer in the chat, the nested file in the inspector, the count in the status bar.
    ui = json.loads((e2e_dir / "ui-done").read_text())
    assert f"The file says: {FILE_TEXT}" in ui["chatText"]
    assert "pkg/AGENTS.md" in ui["inspectorText"] and NESTED_RULE in ui["inspectorText"]
    assert "2 instruction files apply to x.txt" in ui["statusLabel"]

    # `@` completion put a chip with the first session's title (its first prompt) in the box; the
    # suite checked the markup behind it names that session. Sent, the mention reached the model
    # as the referenced session's snapshot right after the prompt.
    mention = json.loads((e2e_dir / "mention-done").read_text())
    title = "Please read pkg/src/x.txt and tell me what it says."
    assert mention["chipText"] == f"@{title}", mention
    assert mention["prompt"] == f"Compare with @{title} ", mention
    assert any(c.startswith(title) for c in mention["candidates"]), mention["candidates"]
    prompt_at = next(
        i
        for i, m in enumerate(mentioning["messages"])
        if m["role"] == "user" and any(t.startswith("Compare with @") for t in texts(m))
    )
    assert texts(mentioning["messages"][prompt_at]) == [f"Compare with @{title}"]
    snapshot = "\n".join(texts(mentioning["messages"][prompt_at + 1]))
    assert "Summary: read pkg/src/x.txt." in snapshot, snapshot

    shot = e2e_dir / "vscode-e2e.png"
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000, "the screenshot looks empty"
    print(f"screenshot: {shot}")

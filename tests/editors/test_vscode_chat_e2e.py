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
import os
import re
import shutil
import subprocess
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


# --- issue 34: focus, contrast, the time note's place, the history search -----------------------
# One code-server each, in Light Modern (the contrast part switches the theme itself), with the
# time context on; the runner is vscode-extension/test/e2e/chat-parts-runner.js.

TIME_NOTE = re.compile(
    r"Time sampled while preparing turn \d+, step 1: "
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d(?::\d\d)?\[[^\]\n]+\]\n"
    r"Browser time zone for this request: [^\n]+\n"
    r"Elapsed since the preceding model-visible message: [^\n]+"
)
# WCAG 2.1 AA for normal-size text: the actions are words ("Copy", "Apply", ...).
AA_TEXT = 4.5


@tool_fixture()
def cs_parts(tmp_path: Path, workspace: Path, fake_model: FakeModel) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": THEMES["light"],
        "dsh.timeContext.enabled": True,
        **model_settings(fake_model),
    }
    with code_server(tmp_path, workspace, user_settings=settings) as server:
        yield server


def run_part(cs: CodeServer, workspace: Path, part: str) -> dict[str, Any]:
    shots = cs.home / "shots"
    shots.mkdir()
    code, details = run_runner(
        "chat-parts-runner.js", cs, workspace, 240, PART=part, SCREENSHOTS=str(shots)
    )
    keep = os.environ.get("DSH_KEEP_SCREENSHOTS")  # a folder to keep the screenshots in
    if keep:
        for shot in shots.iterdir():
            shutil.copyfile(shot, Path(keep) / shot.name)
    found: dict[str, Any] = json.loads((cs.home / "e2e" / "parts-done").read_text())
    assert code == 0, f"{details}\n--- found ---\n{json.dumps(found, indent=1)}"
    return found


@rerun_if_a_webview_never_showed
def test_focus_stays_off_accept_and_ctrl_alt_d_focuses_the_prompt(
    cs_parts: CodeServer, workspace: Path
) -> None:
    found = run_part(cs_parts, workspace, "focus")

    # The card came while the user was in the prompt box: the focus stayed there, not on Accept.
    assert found["afterCard"]["id"] == "prompt", found["afterCard"]
    assert not found["afterCard"]["inCard"]
    # A Space and an Enter then went into the box; the edit still waits and nothing was written.
    after = found["afterKeys"]
    assert after["prompt"] == " " and after["focus"]["id"] == "prompt", after
    assert after["pending"] == 1 and after["onDisk"] == APP
    # The card is announced by the status line (a live region) and reached with Shift+Tab.
    assert found["status"]["live"] == "polite" and "src/app.py" in found["status"]["text"]
    assert found["card"] == {"role": "group", "label": "Proposed edit of src/app.py"}
    walked = [(f["tag"], f["text"] or f["className"]) for f in found["shiftTab"]]
    assert all(f["inCard"] for f in found["shiftTab"]), walked
    assert ("button", "Accept") in walked and ("button", "View diff") in walked, walked
    assert found["onDiskAfterTabbing"] == APP == (workspace / "src" / "app.py").read_text()

    # Ctrl+Alt+D from an editor gives the prompt box the keys: after the focus had left the box,
    # after the view was hidden, and with the view in sight; each time, not only the first.
    assert found["afterClickInLog"]["id"] != "prompt"
    assert found["editorFocusedBefore"] is True
    for key, typed in (("first", "abc"), ("second", "abcdef"), ("third", "abcdefghi")):
        step = found[key]
        assert step["reached"] is True, (key, step["focus"])
        assert step["focus"]["pageHasFocus"] is True and step["focus"]["id"] == "prompt"
        assert step["value"] == typed, (key, step)


@rerun_if_a_webview_never_showed
def test_code_block_actions_have_aa_contrast_in_every_theme(
    cs_parts: CodeServer, workspace: Path
) -> None:
    found = run_part(cs_parts, workspace, "contrast")
    measured = found["contrast"]
    assert set(measured) == {
        "Default Light Modern",
        "Default Dark Modern",
        "Default High Contrast",
        "Default High Contrast Light",
    }
    failures = []
    for theme, states in measured.items():
        for state in ("plain", "hovered"):
            actions = states[state]
            names = [a["text"] for a in actions]
            assert names == ["Copy", "Apply", "Insert into New File"], (theme, state, names)
            failures += [
                f"{theme}, {state}: {a['what']} {a['ratio']:.2f}:1 "
                f"({a['color']} on {a['background']})"
                for a in actions
                if a["ratio"] < AA_TEXT
            ]
    assert failures == [], "\n".join(failures)
    for short in ("light", "dark", "hc", "hc-light"):
        assert (cs_parts.home / "shots" / f"code-actions-hover-{short}.png").stat().st_size > 1000


@rerun_if_a_webview_never_showed
def test_the_time_note_is_sent_before_the_prompt(
    cs_parts: CodeServer, fake_model: FakeModel, workspace: Path
) -> None:
    found = run_part(cs_parts, workspace, "time")
    assert found["prompts"] == ["FOLLOWUP what time is it", "FOLLOWUP and now"]
    logged = found["loggedNotes"]
    assert len(logged) == 2 and all(TIME_NOTE.fullmatch(n) for n in logged), logged

    requests = [b["messages"] for b in fake_model.bodies() if "tools" in b]
    assert len(requests) == 2
    for turn, messages in enumerate(requests, start=1):
        sent = [("\n".join(texts(m)), m["role"]) for m in messages]
        notes = [i for i, (t, _) in enumerate(sent) if t.startswith("Time sampled while")]
        prompts = [
            i for i, (t, role) in enumerate(sent) if role == "user" and t.startswith("FOLLOWUP")
        ]
        assert len(notes) == len(prompts) == turn, sent
        # Each note right before its prompt (the history's too), the note's text unchanged.
        assert [p - 1 for p in prompts] == notes, sent
        assert [sent[i][0] for i in notes] == logged[:turn]
        # What the model reads last is the prompt's turn, never the note.
        assert not sent[-1][0].startswith("Time sampled while"), sent[-1]


@rerun_if_a_webview_never_showed
def test_an_empty_history_search_says_so_and_reopens_unfiltered(
    cs_parts: CodeServer, workspace: Path
) -> None:
    found = run_part(cs_parts, workspace, "history")
    assert found["rowsAtFirst"] >= 1
    assert found["noMatch"] == {"visibleRows": 0, "message": ["No conversations match"]}
    assert found["reopened"] == {
        "search": "",
        "visibleRows": found["rowsAtFirst"],
        "noMatchShown": False,
    }


# --- issue 34, item 4: Retry and Edit leave no trace but what is on disk -------------------------

NOTHING_WRITTEN = "The user discarded an attempt at the next request; it changed no files."
WRITTEN_APP = (
    "Files changed on disk before this point, by an attempt the user discarded "
    "(the changes are still there): src/app.py."
)


@rerun_if_a_webview_never_showed
def test_retry_and_edit_send_only_what_is_on_disk_and_keep_the_written_cards(
    cs_parts: CodeServer, fake_model: FakeModel, workspace: Path
) -> None:
    found = run_part(cs_parts, workspace, "retry")
    requests = [b["messages"] for b in fake_model.bodies() if "tools" in b]
    # hello, its retry, the edit's two steps, the edited prompt, its retry.
    assert len(requests) == 6, [[texts(m) for m in r] for r in requests]

    def sent(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return [(m["role"], "\n".join(texts(m))) for m in messages]

    def count(messages: list[dict[str, Any]], role: str, start: str) -> int:
        return sum(r == role and t.startswith(start) for r, t in sent(messages))

    def discard_notes(messages: list[dict[str, Any]]) -> list[str]:
        return [t for _, t in sent(messages) if "discard" in t]

    # Retry of an answer that wrote nothing: the prompt once, nothing about the attempt.
    retried = requests[1]
    assert count(retried, "user", "FOLLOWUP hello there") == 1
    assert count(retried, "assistant", "Follow-up answered.") == 0
    assert discard_notes(retried) == [], sent(retried)
    # Edit after an accepted edit: the old prompt and answer gone, one note naming the file.
    edited, again = requests[4], requests[5]
    assert found["onDiskAfterAccept"] == EDITED == (workspace / "src" / "app.py").read_text()
    for messages in (edited, again):
        assert count(messages, "user", "EDIT please") == 0, sent(messages)
        assert count(messages, "assistant", "Edit done.") == 0
        assert count(messages, "user", "FOLLOWUP what changed") == 1
        assert discard_notes(messages) == [WRITTEN_APP], sent(messages)
        assert not any(m["role"] == "tool" for m in messages), sent(messages)
    # The retried request holds the earlier prompt's conversation and nothing after the edit.
    assert count(again, "assistant", "Follow-up answered.") == 1  # the first prompt's answer

    # The transcript: no summary box; the accepted edit's card kept, marked as discarded.
    plain = found["afterPlainRetry"]
    assert plain == {"summaries": 0, "prompts": ["FOLLOWUP hello there"], "discardedCards": []}
    for state in (found["afterEdit"], found["afterSecondRetry"]):
        assert state["summaries"] == 0
        assert state["prompts"] == ["FOLLOWUP hello there", "FOLLOWUP what changed"]
        assert len(state["discardedCards"]) == 1, state
        card = state["discardedCards"][0]
        assert card["done"] is True and "edit" in card["text"] and "src/app.py" in card["text"]
        assert "discarded attempt" in card["text"]
        assert card["label"] == "Tool call of a discarded attempt: edit src/app.py"

    # The log: three surface discards through dsh/session/compact, the last replacing the second
    # (one note, never stacked), each replacing a range of the surface.
    checkpoints = found["checkpoints"]
    assert [c["text"] for c in checkpoints] == [NOTHING_WRITTEN, WRITTEN_APP, WRITTEN_APP]
    assert all(c["id"].startswith("discard-") and c["op"]["op"] == "replace" for c in checkpoints)
    assert checkpoints[1]["seq"] in checkpoints[2]["sources"]
    assert checkpoints[0]["seq"] not in checkpoints[2]["sources"]
    assert (cs_parts.home / "shots" / "retry-discarded-card.png").stat().st_size > 1000


# --- issue 34, item 8: an agent's session in the inspector says what the agent was given ---------


@tool_fixture()
def cs_agents(tmp_path: Path, workspace: Path, fake_model: FakeModel) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": THEMES["light"],
        # Enabled in VS Code only: the hooks, run by the agent, never read it.
        "dsh.instructions.ruleSets": ["cursor"],
        **model_settings(fake_model),
    }
    with code_server(tmp_path, workspace, user_settings=settings) as server:
        yield server


@rerun_if_a_webview_never_showed
def test_an_agents_session_shows_agent_place_times_files_and_waiting_touches(
    cs_agents: CodeServer, workspace: Path, tmp_path: Path
) -> None:
    from dsh_sidecar.sessions.spool import Spool

    # A Claude Code session in pkg/, started by the real hook command on the store the editor's
    # sidecar uses (the same DSH_HOME), then two touches its hooks kept while the store was busy.
    dsh_home = cs_agents.home / "dsh-home"
    start = {"hook_event_name": "SessionStart", "session_id": "s34", "cwd": str(workspace / "pkg")}
    hook = subprocess.run(
        [str(PYTHON), "-m", "dsh_sidecar", "hook", "--agent", "claude"],
        input=json.dumps({**start, "source": "startup"}).encode(),
        # In this process, not a resident engine that would outlive the test.
        env={
            **os.environ,
            "DSH_HOME": str(dsh_home),
            "HOME": str(tmp_path),
            "DSH_HOOK_RESIDENT": "0",
        },
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert hook.returncode == 0, hook.stderr
    session_id = "claude:s34"
    Spool.of_home(str(dsh_home)).keep(
        session_id, (str(workspace / "pkg" / "x.txt"), str(workspace / "lib" / "y.txt"))
    )

    found = run_part(cs_agents, workspace, "agents")
    agent = found["agent"]
    assert agent["count"] == 1
    assert agent["heading"] == "Claude Code in pkg"
    assert re.fullmatch(
        r"started (just now|\d+ min ago) · last event (just now|\d+ min ago)", agent["when"]
    ), agent
    assert agent["told"] == "Given: AGENTS.md, pkg/AGENTS.md"
    assert agent["waiting"] == "2 touches waiting"
    assert re.fullmatch(r"Claude Code · \d\d:\d\d( [AP]M)? · pkg", agent["label"]), agent
    assert agent["hover"] == agent["label"]
    assert agent["note"] == (
        "Rule sets enabled in VS Code (cursor) do not apply to these sessions: the agents' hooks "
        "read their settings from their own command line (dsh-sidecar hook --settings FILE), not "
        "from VS Code, and as installed they use none."
    )
    # No raw id, in what is shown, hovered or announced; nor in the instruction hover.
    assert session_id not in found["inspectorText"] and "s34" not in found["inspectorText"]
    hover = "\n".join(found["hover"])
    assert "Live sessions:" in hover, hover
    assert found["chatSession"]["id"] not in hover
    assert re.search(r"^- editor session from \d\d:\d\d in `\.`: ", hover, re.M), hover
    assert (cs_agents.home / "shots" / "inspector-agent-session.png").stat().st_size > 1000


# --- issue 34, item 6: the chat has a view container of its own --------------------------------


@rerun_if_a_webview_never_showed
def test_the_chat_opens_at_full_height_with_the_inspector_beside_it(
    cs_parts: CodeServer, workspace: Path
) -> None:
    found = run_part(cs_parts, workspace, "layout")
    window, chat = found["window"], found["chatBox"]
    # A new profile's first open: the chat's view fills the side bar, most of the window's
    # height (it had about a third of it, stacked over the inspector).
    assert chat["height"] >= 0.75 * window["height"], found
    assert found["sidebarTitle"].upper().startswith("DSH AGENT CHAT"), found["sidebarTitle"]
    # The inspector opens beside it (the panel, right of the side bar), not under it: the chat
    # keeps its place and height, and stays in view.
    inspector = found["inspectorBox"]
    assert inspector["x"] >= chat["x"] + chat["width"], found
    assert found["chatBoxWithInspector"] == chat and found["chatStillShown"] is True, found


# --- issue 34, item 9: the baseline's title, Restricted Mode, the settings notice ---------------


@rerun_if_a_webview_never_showed
def test_a_baseline_is_titled_by_its_files_grouped(cs_parts: CodeServer, workspace: Path) -> None:
    # Three files in the baseline: the user-global one of DSH_HOME, AGENTS.md, AGENTS.local.md.
    (cs_parts.home / "dsh-home" / "AGENTS.md").write_text("Home rules.\n", encoding="utf-8")
    (workspace / "AGENTS.local.md").write_text("Local rules.\n", encoding="utf-8")
    found = run_part(cs_parts, workspace, "baseline")
    logged = found["loggedBaselines"]
    assert len(logged) == 2, logged  # the first prompt's, and the one after maxBytes changed
    expected = []
    for changes in logged:
        files = [c["path"] for c in changes if c["action"] != "remove"]
        assert len(files) == 3, changes
        expected.append(f"Baseline: {files[0]}, {files[1]} (+1)")
    # In the chat, each baseline once, grouped; never the raw list of transitions.
    assert found["chatTitles"] == expected, found["chatTitles"]
    assert not any(re.search(r"\b(set|remove) ", t) for t in found["chatTitles"])
    # The inspector lists what the agent has seen from the latest baseline on, titled alike.
    assert expected[-1] in found["inspectorTitles"], found["inspectorTitles"]
    # A trusted folder has no Restricted Mode banner.
    assert found["restrictedShown"] is False


@tool_fixture()
def cs_restricted(tmp_path: Path, workspace: Path, fake_model: FakeModel) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": THEMES["light"],
        **model_settings(fake_model),
    }
    with code_server(tmp_path, workspace, user_settings=settings, trusted=False) as server:
        yield server


@rerun_if_a_webview_never_showed
def test_restricted_mode_is_said_in_the_chat(cs_restricted: CodeServer, workspace: Path) -> None:
    found = run_part(cs_restricted, workspace, "restricted")
    banner = found["restricted"]
    assert banner["role"] == "note" and banner["button"] == "Manage Workspace Trust"
    assert banner["text"] == (
        "Restricted Mode: this folder is not trusted. The chat works, but the interpreter, the "
        "sidecar's store and home and the model endpoint come from your User settings only; this "
        "folder's settings for them (dsh.pythonPath, dsh.importStrategy, dsh.store.path, "
        "dsh.instructions.dshHome, dsh.model.baseUrl) are ignored."
    )


@tool_fixture()
def cs_notice(tmp_path: Path, workspace: Path, fake_model: FakeModel) -> Iterator[CodeServer]:
    require_tools()
    settings = {
        "dsh.pythonPath": str(PYTHON),
        "workbench.colorTheme": THEMES["light"],
        "dsh.timeContext.timeZone": "Mars/Olympus",
        **model_settings(fake_model),
    }
    with code_server(tmp_path, workspace, user_settings=settings) as server:
        yield server


@rerun_if_a_webview_never_showed
def test_the_settings_notice_opens_with_a_whole_sentence_and_no_progress_bar(
    cs_notice: CodeServer, workspace: Path
) -> None:
    notice = run_part(cs_notice, workspace, "notice")["notice"]
    assert notice["firstSentence"] == "DSH: dsh.timeContext.timeZone was refused.", notice
    # Drawn on the toast's first line, and ending before the line is cut off.
    sentence = notice["sentence"]
    assert sentence is not None and sentence["lines"] == 1, notice
    assert sentence["right"] <= notice["messageRight"], notice
    assert '"Mars/Olympus"' in notice["text"] and 'such as "Europe/Paris"' in notice["text"]
    # A notice, not a task: no busy animation under it. What VS Code still draws is its
    # progress bar's floor, 1 % of the toast's width, static (its ProgressBar clamps to >= 1).
    assert notice["infinite"] is False, notice
    assert notice["bitWidth"] <= 0.011 * notice["barWidth"], notice

"""Per-hunk Accept and Reject, and an edited proposal, in real VS Code (code-server) and Chromium.

The scripted model proposes an edit of notes.txt that changes three separate lines. The runner
(vscode-extension/test/e2e/chat-hunks-runner.js) accepts hunks 1 and 3 with the CodeLens over
them in the diff's proposed side, and rejects hunk 2 with the cursor in it and DSH: Reject This
Hunk of the Agent's Change from the command palette. The file on disk then has exactly
hunks 1 and 3, the card says "2 of 3 hunks accepted", and the tool result the model reads next
names the hunks written and the one rejected, with its lines. In the second test the proposal has
two hunks; the runner types over the first one's line in the diff, rejects the second (in the
edited, unsaved side) and accepts from the chat without saving: the disk has the typed line and
the rest as before, and the model is told the user edited its proposal, with the diff from it.

``DSH_KEEP_SCREENSHOTS=DIR`` keeps hunk-actions.png (docs/editors/screenshots/ has it).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

BEFORE = "# Notes\nalpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\n"
# Lines 2, 6 and 10 change; unchanged lines between them keep the three hunks apart.
OLD = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\n"
NEW = "ALPHA\nbeta\ngamma\ndelta\nEPSILON\nzeta\neta\ntheta\nIOTA\n"
HUNKS_KEPT = "# Notes\nALPHA\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\nIOTA\n"

HUNKS_RESULT = (
    "Edited notes.txt. The user accepted 2 of the 3 hunks you proposed and rejected the others;"
    " only the accepted ones were written. Hunks are numbered in file order, with line numbers"
    " of the file before the change. Applied: hunk 1 (line 2), hunk 3 (line 10). Rejected, so"
    " these lines are as they were before: hunk 2 (line 6). The rejected hunks, not written:\n"
    "@@ -6,1 +6,1 @@\n-epsilon\n+EPSILON\n"
)

TYPED = "Alpha, by hand"
EDITED_NEW = OLD.replace("alpha", "ALPHA").replace("iota", "IOTA")
EDITED_KEPT = BEFORE.replace("alpha\n", f"{TYPED}\n")
EDITED_RESULT = (
    "Edited notes.txt. The user edited your proposal before accepting it, so the file is not what"
    " you proposed. The change from your proposal to what was written:\n"
    f"@@ -2,1 +2,1 @@\n-ALPHA\n+{TYPED}\n@@ -10,1 +10,1 @@\n-IOTA\n+iota\n"
)


def scripted_model(n: int, body: dict[str, Any]) -> Reply:
    messages = body.get("messages", [])
    if "tools" not in body:
        return text_reply(n, "Summary.", pieces=1)
    if messages and messages[-1]["role"] == "tool":
        return text_reply(n, "Hunks done.")
    prompt = next(t for m in reversed(messages) if m["role"] == "user" for t in texts(m))
    if "EDITED" in prompt:
        # Two changed lines: the user types over the first and rejects the second.
        args = {"file_path": "notes.txt", "old_string": OLD, "new_string": EDITED_NEW}
        return tool_reply(n, "call_edited_1", "edit", args)
    return tool_reply(
        n, "call_hunks_1", "edit", {"file_path": "notes.txt", "old_string": OLD, "new_string": NEW}
    )


@tool_fixture()
def hunks_editor(tmp_path: Path) -> Iterator[tuple[CodeServer, FakeModel, Path]]:
    require_tools()
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    # No instruction file: the edit goes straight to review (no pre-edit hold).
    (ws / "notes.txt").write_text(BEFORE, encoding="utf-8")
    with FakeModel(scripted_model) as model:
        settings = {
            "dsh.pythonPath": str(PYTHON),
            "workbench.colorTheme": THEMES["light"],
            **model_settings(model),
        }
        with code_server(tmp_path, ws, user_settings=settings) as server:
            yield server, model, ws


def run_part(cs: CodeServer, ws: Path, part: str, prompt: str) -> dict[str, Any]:
    shots = cs.home / "shots"
    shots.mkdir()
    code, details = run_runner(
        "chat-hunks-runner.js", cs, ws, 240, PART=part, PROMPT=prompt, SCREENSHOTS=str(shots)
    )
    keep = os.environ.get("DSH_KEEP_SCREENSHOTS")  # a folder to keep the screenshots in
    if keep:
        for shot in shots.iterdir():
            shutil.copyfile(shot, Path(keep) / shot.name)
    found: dict[str, Any] = json.loads((cs.home / "e2e" / "hunks-done").read_text())
    assert code == 0, f"{details}\n--- found ---\n{json.dumps(found, indent=1)}"
    return found


def tool_results(model: FakeModel) -> list[tuple[str, str]]:
    """The tool results of the model's last request with tools, as (call id, text)."""
    requests = [b["messages"] for b in model.bodies() if "tools" in b]
    return [(m["tool_call_id"], "\n".join(texts(m))) for m in requests[-1] if m["role"] == "tool"]


@rerun_if_a_webview_never_showed
def test_accepting_hunks_1_and_3_and_rejecting_2_writes_exactly_those(
    hunks_editor: tuple[CodeServer, FakeModel, Path],
) -> None:
    cs, model, ws = hunks_editor
    found = run_part(cs, ws, "hunks", "HUNKS tidy my notes")

    # One Accept and one Reject over each of the three hunks, numbered in file order.
    assert found["lensesBefore"] == [
        "Accept hunk 1 of 3 | Reject hunk 1 of 3",
        "Accept hunk 2 of 3 | Reject hunk 2 of 3",
        "Accept hunk 3 of 3 | Reject hunk 3 of 3",
    ], found
    # Deciding one hunk decides nothing on disk yet.
    assert "pending" in found["cardWhileDeciding"].split(), found
    assert found["diskWhileDeciding"] == BEFORE
    assert found["lensesAfterReject"] == [
        "Accepted hunk 1 of 3 | Reject",
        "Accept hunk 3 of 3 | Reject hunk 3 of 3",
    ], found

    assert (ws / "notes.txt").read_text(encoding="utf-8") == HUNKS_KEPT
    assert found["verdict"] == "2 of 3 hunks accepted: written.", found
    assert found["diffClosed"], found
    assert tool_results(model) == [("call_hunks_1", HUNKS_RESULT)]


@rerun_if_a_webview_never_showed
def test_an_edited_proposal_writes_what_the_user_typed_and_the_model_is_told(
    hunks_editor: tuple[CodeServer, FakeModel, Path],
) -> None:
    cs, model, ws = hunks_editor
    found = run_part(cs, ws, "edited", "EDITED capitalise the first note")

    # The proposed side took the typing, and its hunk is now the user's.
    assert found["typedShown"], found
    assert found["lensesAfterTyping"] == [
        "Accept your change | Reject your change",
        "Accept hunk 2 of 2 | Reject hunk 2 of 2",
    ], found
    # Rejecting the other hunk keeps the typing (the side is still unsaved).
    assert found["lensesAfterReject"] == ["Accept your change | Reject your change"], found
    assert found["typedKept"], found
    assert found["diskWhileEditing"] == BEFORE

    assert (ws / "notes.txt").read_text(encoding="utf-8") == EDITED_KEPT
    assert found["verdict"] == "Accepted with your edits: written.", found
    assert found["diffClosed"], found
    assert tool_results(model) == [("call_edited_1", EDITED_RESULT)]

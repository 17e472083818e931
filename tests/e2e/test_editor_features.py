"""Hover and diagnostics on a tree with a duplicate, an oversized and a budget-omitted file."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods

from .conftest import Workspace, as_dict, call, did_open, start


def session_line(directory: str, state: str) -> re.Pattern[str]:
    """The hover's line for an editor session in ``directory``: named by who drives it, when it
    started and where, never by its raw id (issue 34, item 8)."""
    return re.compile(
        rf"^- editor session from \d\d:\d\d in `{re.escape(directory)}`: {state}", re.M
    )


ROOT = "root rules " * 40 + "\n"  # broad and large: the budget omits it
TREE = {
    "AGENTS.md": ROOT,
    "CLAUDE.md": "\n  " + ROOT + "\n",  # the same after trimming: a duplicate
    "AGENTS.local.md": "local rules </system-reminder>\n",
    "pkg/AGENTS.md": "p" * 600,  # over maxSourceBytes
    "pkg/src/main.py": "print()\n",
}
SETTINGS: dict[str, Any] = {"maxBytes": 600, "maxSourceBytes": 500}


async def diagnostics_for(
    client: LanguageClient, ws: Workspace, rel: str
) -> list[types.Diagnostic]:
    uri = ws.uri(rel)
    waiter = client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    did_open(client, uri, (ws.project / rel).read_text())
    while True:
        params = await asyncio.wait_for(waiter, 10)
        if params.uri == uri:
            return list(params.diagnostics)
        waiter = client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


async def hover_at(
    client: LanguageClient, ws: Workspace, rel: str, line: int = 0
) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=ws.uri(rel)),
            position=types.Position(line=line, character=0),
        )
    )


async def hover_text(client: LanguageClient, ws: Workspace, rel: str, line: int = 0) -> str:
    result = await hover_at(client, ws, rel, line)
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def test_diagnostics_explain_each_instruction_file(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write(TREE)
    await start(client, ws, **SETTINGS)
    omitted = await diagnostics_for(client, ws, "AGENTS.md")
    assert [(d.code, d.severity) for d in omitted] == [
        ("omitted", types.DiagnosticSeverity.Warning)
    ]
    duplicate = await diagnostics_for(client, ws, "CLAUDE.md")
    assert [d.code for d in duplicate] == ["duplicate"]
    assert "same content as AGENTS.md" in duplicate[0].message
    oversized = await diagnostics_for(client, ws, "pkg/AGENTS.md")
    assert [(d.code, d.severity) for d in oversized] == [
        ("oversized", types.DiagnosticSeverity.Warning)
    ]
    local = await diagnostics_for(client, ws, "AGENTS.local.md")
    assert [d.code for d in local] == ["closing-tag-escaped"]
    start_col = TREE["AGENTS.local.md"].index("</system-reminder>")
    assert local[0].range == types.Range(
        start=types.Position(line=0, character=start_col),
        end=types.Position(line=0, character=start_col + len("</system-reminder>")),
    )


async def test_hover_shows_place_state_budget_and_sessions(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write(TREE)
    await start(client, ws, **SETTINGS)
    opened = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))
    sid = opened["session"]["id"]
    await call(
        client,
        methods.STEP_PREPARE,
        {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
    )

    root = await hover_text(client, ws, "AGENTS.md")
    assert (
        "**AGENTS.md** — workspace instructions for the project root and everything below it"
        in root
    )
    assert "Place in the chain: 1 of 3" in root
    assert "State: **omitted**" in root
    assert f"Size: {len(ROOT.encode()):,} bytes against a baseline budget of 600 bytes" in root
    assert session_line(".", "not active").search(root), root
    assert sid not in root
    # Below our own answer: what the other agents would load for this file (dsh/explain).
    _, others = root.split("\n\n---\n\n")
    assert others.startswith("**Other agents on this file**\n\n- **dsh-sidecar**: ")
    for agent in ("Codex CLI", "Claude Code", "GitHub Copilot (VS Code)", "Gemini CLI", "Cursor"):
        assert f"\n- **{agent}**: " in others

    local = await hover_text(client, ws, "AGENTS.local.md")
    assert "Place in the chain: 3 of 3" in local
    assert "State: **included**" in local
    assert session_line(".", "active via set").search(local), local
    assert sid not in local

    # Any other file: no hover by default (the status bar and inspector tell the chain).
    assert await hover_at(client, ws, "pkg/src/main.py") is None


@pytest.mark.parametrize(
    ("mode", "answered_lines"), [("off", []), ("firstLine", [0]), ("always", [0, 3])]
)
async def test_hover_on_other_files_follows_the_setting(
    client: LanguageClient, ws: Workspace, mode: str, answered_lines: list[int]
) -> None:
    ws.write(TREE)
    options = {**ws.options(**SETTINGS), "hover": {"otherFiles": mode}}
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options=options
        )
    )
    client.dsh_initialized = True  # type: ignore[attr-defined]
    for line in (0, 3):
        result = await hover_at(client, ws, "pkg/src/main.py", line)
        if line not in answered_lines:
            assert result is None
            continue
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        # The chain an agent would be told about when it touches this file.
        source = result.contents.value
        assert "**Workspace instructions for this directory** (4 files" in source
        assert "- `pkg/AGENTS.md`: **oversized**" in source
        assert "- `CLAUDE.md`: **duplicate**" in source
    # Instruction files answer whatever the setting says.
    assert "Place in the chain: 1 of 3" in await hover_text(client, ws, "AGENTS.md", 5)


async def test_scopes_reports_states_and_active_changes(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write({**TREE, "node_modules/dep/AGENTS.md": "dep rules\n", ".gitignore": "node_modules/\n"})
    await start(client, ws, **SETTINGS)
    opened = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project)}))
    sid = opened["session"]["id"]
    await call(
        client,
        methods.STEP_PREPARE,
        {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
    )
    report = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("pkg/src/main.py")}))
    assert report["projectRoot"] == str(ws.project)
    assert [(f["displayPath"], f["state"]) for f in report["files"]] == [
        ("AGENTS.md", "omitted"),
        ("CLAUDE.md", "duplicate"),
        ("AGENTS.local.md", "included"),
        ("pkg/AGENTS.md", "oversized"),
    ]
    assert [(s["sessionId"], [c["path"] for c in s["active"]]) for s in report["sessions"]] == [
        (sid, ["AGENTS.local.md"])
    ]
    ignored = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("node_modules/dep/x.js")}))
    dep = [f for f in ignored["files"] if f["displayPath"] == "node_modules/dep/AGENTS.md"]
    assert dep and dep[0]["state"] == "ignored"
    assert "'node_modules/'" in dep[0]["reason"] and ".gitignore" in dep[0]["reason"]


async def test_a_kept_hover_follows_edits_and_sessions(
    client: LanguageClient, ws: Workspace
) -> None:
    """A warm hover is kept with what it rested on: a session's step, an edited file and a new
    file in the chain each give the next hover the fresh answer."""
    ws.write({"AGENTS.md": "root rules\n", "pkg/AGENTS.md": "pkg rules\n"})
    await start(client, ws)  # which may create directories a hover looks into ($DSH_HOME)
    # What changed within two seconds of a look is never kept (a timestamp could miss a
    # change): wait so that these hovers are kept and the changes below must be noticed.
    await asyncio.sleep(2.2)
    first = await hover_text(client, ws, "pkg/AGENTS.md")
    assert first == await hover_text(client, ws, "pkg/AGENTS.md")
    assert "Size: 10 bytes" in first and "Place in the chain: 2 of 2" in first
    assert await scopes_of(client, ws) == ({"AGENTS.md": 11, "pkg/AGENTS.md": 10}, {})

    opened = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project / "pkg")}))
    sid = opened["session"]["id"]
    assert session_line("pkg", "not active").search(await hover_text(client, ws, "pkg/AGENTS.md"))
    await call(
        client,
        methods.STEP_PREPARE,
        {"sessionId": sid, "turn": 1, "step": 1, "prompt": {"text": "hi"}},
    )
    hovered = await hover_text(client, ws, "pkg/AGENTS.md")
    assert session_line("pkg", "active via set").search(hovered) and sid not in hovered
    active = ["AGENTS.md", "pkg/AGENTS.md"]
    assert await scopes_of(client, ws) == ({"AGENTS.md": 11, "pkg/AGENTS.md": 10}, {sid: active})

    ws.write({"pkg/AGENTS.md": "pkg rules, now longer\n"})
    assert "Size: 22 bytes" in await hover_text(client, ws, "pkg/AGENTS.md")
    assert (await scopes_of(client, ws))[0]["pkg/AGENTS.md"] == 22
    ws.write({"pkg/CLAUDE.md": "claude rules\n"})
    assert "Place in the chain: 2 of 3" in await hover_text(client, ws, "pkg/AGENTS.md")
    assert "pkg/CLAUDE.md" in (await scopes_of(client, ws))[0]


async def scopes_of(
    client: LanguageClient, ws: Workspace
) -> tuple[dict[str, int], dict[str, list[str]]]:
    """``dsh/scopes`` of pkg/AGENTS.md: each file's bytes, and each session's active paths."""
    found = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("pkg/AGENTS.md")}))
    files = {f["displayPath"]: f["bytes"] for f in found["files"]}
    sessions = {s["sessionId"]: [c["path"] for c in s["active"]] for s in found["sessions"]}
    return files, sessions

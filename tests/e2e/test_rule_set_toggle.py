"""Turning a rule set on or off in a live session over a real server process: the next step
carries only that rule set's files (a ``set`` when it goes on, a ``remove`` when it goes off),
never the whole baseline again (issue 34, item 9). Enabling a rule set in VS Code re-sent every
instruction file, since the settings were part of the baseline's identity."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods

from .conftest import Workspace, as_dict, call, start
from .test_agent_loop import open_session, prepare

TREE = {
    "AGENTS.md": "Root agents.\n",
    "pkg/AGENTS.md": "Pkg agents.\n",
    "pkg/main.py": "print('x')\n",
    ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\nCursor always.\n",
}
RULE = "rules:cursor\u0000.cursor/rules/always.mdc"


def instruction_changes(prepared: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(action, scope, part of a baseline) of every instruction change the step delivered."""
    return [
        (c["action"], c["scope"], m["source"].get("baseline") is True)
        for m in prepared["messages"]
        if m["source"]["kind"] == "agent-instructions"
        for c in m["source"]["changes"]
    ]


async def change_rule_sets(client: LanguageClient, ws: Workspace, rule_sets: list[str]) -> None:
    """Change ``instructions.ruleSets`` as VS Code does (a didChangeConfiguration, the server
    pulls the section), then wait until the server's chain for a file shows it."""
    settings = ws.options(ruleSets=rule_sets, projectRootMarkers=[".git"])
    client.set_configuration(settings, section="dsh")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"dsh": settings})
    )
    want = bool(rule_sets)
    for _ in range(200):  # bounded: a server that never applies it fails the test
        chain = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("pkg/main.py")}))
        if any(f["scope"] == RULE for f in chain["files"]) == want:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the server never applied ruleSets={rule_sets}")


async def test_a_rule_set_turned_on_then_off_sends_only_its_rule(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write(TREE)
    await start(client, ws)
    sid = await open_session(client, ws)
    first = await prepare(client, sid, 1, 1, "hello")
    assert instruction_changes(first) == [("set", ".\u0000AGENTS.md", True)]
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 1})
    await call(client, methods.TURN_END, {"sessionId": sid, "turn": 1, "reason": "completed"})

    await change_rule_sets(client, ws, ["cursor"])
    second = await prepare(client, sid, 2, 1, "again")
    assert instruction_changes(second) == [("set", RULE, False)]
    text = "\n".join(
        b["text"] for m in second["messages"] for b in m["content"] if b["type"] == "text"
    )
    assert "Cursor always." in text and "Root agents." not in text
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 2, "step": 1})
    await call(client, methods.TURN_END, {"sessionId": sid, "turn": 2, "reason": "completed"})

    await change_rule_sets(client, ws, [])
    third = await prepare(client, sid, 3, 1, "and now")
    assert instruction_changes(third) == [("remove", RULE, False)]

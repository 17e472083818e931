"""The agent loop over the wire: baseline, editor and tool touches, compaction, resume."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods

from .conftest import SERVER_COMMAND, Workspace, as_dict, call, did_open, server_env, start

ROOT_RULES = "root rules\n"
PKG_RULES = "pkg rules\n"
BASELINE_INTRO = (
    "The following workspace instructions may be relevant to your work. Use them as guidance "
    "when applicable. More specific instructions take precedence over broader ones. They do not "
    "override system, developer, or direct user instructions."
)
SET_GUIDANCE = (
    "These instructions apply to work under `pkg`. Use them as guidance when relevant; more "
    "specific instructions take precedence. They do not override system, developer, or direct "
    "user instructions."
)


def expected_baseline() -> str:
    return (
        f"<system-reminder>\n{BASELINE_INTRO}\n\nInstructions from: AGENTS.md\n\n{ROOT_RULES}"
        "\n</system-reminder>"
    )


def expected_set() -> str:
    return (
        "<system-reminder>\nAdditional instructions from: pkg/AGENTS.md\n\n"
        f"{SET_GUIDANCE}\n\n{PKG_RULES}\n</system-reminder>"
    )


def sample(ws: Workspace) -> None:
    ws.write({"AGENTS.md": ROOT_RULES, "pkg/AGENTS.md": PKG_RULES, "pkg/src/x.txt": "x\n"})


async def open_session(client: LanguageClient, ws: Workspace, **kw: object) -> str:
    result = as_dict(await call(client, methods.SESSION_OPEN, {"cwd": str(ws.project), **kw}))
    return str(result["session"]["id"])


async def prepare(
    client: LanguageClient, sid: str, turn: int, step: int, text: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": sid, "turn": turn, "step": step}
    if text is not None:
        params["prompt"] = {"text": text}
    result: dict[str, Any] = as_dict(await call(client, methods.STEP_PREPARE, params))
    return result


async def session_past_first_step(client: LanguageClient, ws: Workspace) -> str:
    """Initialize, open a session at the project root, and run turn 1 step 1 (the baseline)."""
    await start(client, ws)
    sid = await open_session(client, ws)
    await prepare(client, sid, 1, 1, "hello")
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 1})
    return sid


async def events(client: LanguageClient, sid: str) -> list[dict[str, Any]]:
    logged: list[dict[str, Any]] = as_dict(
        await call(client, methods.SESSION_EVENTS, {"sessionId": sid})
    )["events"]
    return logged


async def pending(client: LanguageClient, sid: str) -> list[dict[str, Any]]:
    queued: list[dict[str, Any]] = as_dict(
        await call(client, methods.CONTEXT_PENDING, {"sessionId": sid})
    )["messages"]
    return queued


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return ["\n".join(b["text"] for b in m["content"]) for m in messages]


async def test_first_step_enters_prompt_then_baseline(
    client: LanguageClient, ws: Workspace
) -> None:
    sample(ws)
    init = await start(client, ws)
    assert init.capabilities.experimental is not None
    assert init.capabilities.experimental["dsh"]["methods"] == list(methods.ALL_METHODS)
    sid = await open_session(client, ws)
    step = await prepare(client, sid, 1, 1, "hello")
    assert [m["source"]["kind"] for m in step["messages"]] == ["user", "agent-instructions"]
    assert texts(step["messages"]) == ["hello", expected_baseline()]
    source = step["messages"][1]["source"]
    assert source["baseline"] is True
    assert json.loads(source["baselineIdentity"])["maxBytes"] == 65536
    assert source["changes"] == [
        {
            "action": "set",
            "scope": ".\u0000AGENTS.md",
            "path": "AGENTS.md",
            "digest": hashlib.sha1(ROOT_RULES.encode()).hexdigest(),
        },
    ]
    logged = await events(client, sid)
    assert [e["type"] for e in logged] == [
        "turn/start",
        "step/start",
        "user/message",
        "user/message",
    ]
    assert step["seqs"] == [2, 3]
    # The next step of the same turn adds nothing: the baseline is entered once.
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 1})
    again = await prepare(client, sid, 1, 2)
    assert again["messages"] == []


async def test_did_open_of_nested_file_queues_set_and_next_step_enters_it(
    client: LanguageClient, ws: Workspace
) -> None:
    sample(ws)
    sid = await session_past_first_step(client, ws)
    changed = client.protocol.wait_for_notification_async(methods.CONTEXT_DID_CHANGE)
    did_open(client, ws.uri("pkg/src/x.txt"), "x\n")
    note = as_dict(await asyncio.wait_for(changed, 10))
    assert note == {"sessionId": sid, "pendingCount": 1}
    queued = await pending(client, sid)
    assert texts(queued) == [expected_set()]
    assert [c["action"] for c in queued[0]["source"]["changes"]] == ["set"]
    step = await prepare(client, sid, 1, 2)
    assert texts(step["messages"]) == [expected_set()]
    assert await pending(client, sid) == []
    # Touching the same file again re-injects nothing: the set is now durable.
    did_open(client, ws.uri("pkg/src/x.txt"), "x\n")
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 2})
    assert await pending(client, sid) == []


async def test_tool_results_with_parent_tokens_and_an_open_step(
    client: LanguageClient, ws: Workspace
) -> None:
    sample(ws)
    ws.write({"other/AGENTS.md": "other rules\n", "other/y.txt": "y"})
    await start(client, ws)
    sid = await open_session(client, ws)
    await prepare(client, sid, 1, 1, "go")  # step 1 is now open
    notify = client.protocol.notify
    # A nested read under parent "p": staged until the parent's own result arrives.
    notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "c1",
            "parentToken": "p",
            "name": "read",
            "arguments": {"file_path": ws.path("pkg/src/x.txt")},
            "isError": False,
        },
    )
    # The parent fails: its own touch does not count, its child's still does.
    notify(
        methods.TOOL_RESULT,
        {"sessionId": sid, "token": "p", "name": "run_code", "arguments": {}, "isError": True},
    )
    # A failed read and an aborted read never touch.
    notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "bad",
            "name": "read",
            "arguments": {"file_path": ws.path("other/y.txt")},
            "isError": True,
        },
    )
    notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "ab",
            "name": "edit",
            "aborted": True,
            "arguments": {"file_path": ws.path("other/y.txt")},
            "isError": False,
        },
    )
    # The step is open, so nothing is projected yet.
    assert await pending(client, sid) == []
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 1})
    queued = await pending(client, sid)
    assert [c["path"] for m in queued for c in m["source"]["changes"]] == ["pkg/AGENTS.md"]


async def test_compaction_rearms_baseline_and_nested_scope(
    client: LanguageClient, ws: Workspace
) -> None:
    sample(ws)
    sid = await session_past_first_step(client, ws)
    client.protocol.notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "t",
            "name": "read",
            "arguments": {"file_path": "pkg/src/x.txt"},
            "isError": False,
        },
    )
    await prepare(client, sid, 1, 2)
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 2})
    surface = as_dict(await call(client, methods.SESSION_SURFACE, {"sessionId": sid}))
    assert len(surface["events"]) == 3  # prompt, baseline, nested set
    await call(
        client,
        methods.SESSION_COMPACT,
        {"sessionId": sid, "start": 0, "end": 2, "summary": "so far"},
    )
    surface = as_dict(await call(client, methods.SESSION_SURFACE, {"sessionId": sid}))
    assert [e["data"]["source"]["kind"] for e in surface["events"]] == ["plugin"]
    # The baseline left the surface: the next entering step emits a fresh one (normal intro).
    step = await prepare(client, sid, 2, 1, "again")
    assert texts(step["messages"]) == ["again", expected_baseline()]
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 2, "step": 1})
    # The nested scope was forgotten too: touching it re-adds it as a set.
    client.protocol.notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "t2",
            "name": "read",
            "arguments": {"file_path": "pkg/src/x.txt"},
            "isError": False,
        },
    )
    assert texts(await pending(client, sid)) == [expected_set()]


async def test_resume_across_server_restart_turns_offline_edits_into_transitions(
    client: LanguageClient, ws: Workspace
) -> None:
    sample(ws)
    ws.write({"lib/AGENTS.md": "lib rules\n", "lib/z.txt": "z"})
    sid = await session_past_first_step(client, ws)
    for token, rel in (("a", "pkg/src/x.txt"), ("b", "lib/z.txt")):
        client.protocol.notify(
            methods.TOOL_RESULT,
            {
                "sessionId": sid,
                "token": token,
                "name": "read",
                "arguments": {"file_path": rel},
                "isError": False,
            },
        )
    await prepare(client, sid, 1, 2)
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 2})
    await call(client, methods.TURN_END, {"sessionId": sid, "turn": 1, "reason": "done"})
    before = await events(client, sid)

    # Offline: edit the root file, delete lib/AGENTS.md, add pkg/CLAUDE.md.
    ws.write({"AGENTS.md": "root rules v2\n", "pkg/CLAUDE.md": "claude rules\n"})
    (ws.project / "lib" / "AGENTS.md").unlink()

    second = LanguageClient()
    await second.start_io(*SERVER_COMMAND, env=server_env())
    try:
        await start(second, ws)
        opened = as_dict(
            await call(second, methods.SESSION_OPEN, {"cwd": str(ws.project), "sessionId": sid})
        )
        assert opened["resumed"] is True
        assert await events(second, sid) == before  # the log survived the restart verbatim
        step = await prepare(second, sid, 2, 1, "back")
        changes = [c for m in step["messages"][1:] for c in m["source"]["changes"]]
        assert sorted((c["action"], c["path"]) for c in changes) == [
            ("remove", "lib/AGENTS.md"),
            ("replace", "AGENTS.md"),
            ("set", "pkg/CLAUDE.md"),
        ]
        assert "baseline" not in step["messages"][1]["source"]  # a compatible baseline is kept
    finally:
        await second.shutdown_session()
        await second.stop()

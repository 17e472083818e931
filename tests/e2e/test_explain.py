"""dsh/explain over stdio against the real server: the same answer as the engine (and so as
``dsh-sidecar explain --json``) for a tree using every convention, and bad params refused."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.explain import explain_file
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.protocol import methods
from tests.support.lsp_fixture import lsp_fixture

from .conftest import CLIENTS, SERVER_COMMAND, Workspace, as_dict, call, start, write_tree

# The server looks for the agents' user-global files in its HOME.
AGENT_HOME = Path(tempfile.mkdtemp(prefix="dsh-explain-home-"))
atexit.register(shutil.rmtree, AGENT_HOME, True)
write_tree(
    AGENT_HOME,
    {
        ".codex/AGENTS.md": "Codex global.\n",
        ".claude/CLAUDE.md": "Claude global.\n",
        ".claude/rules/mine.md": "Mine.\n",
        ".gemini/GEMINI.md": "Gemini global.\n",
    },
)
TREE = {
    "AGENTS.md": "Root.\n",
    "AGENTS.override.md": "Codex override.\n",
    "CLAUDE.md": "Claude root, see @docs/more.md\n",
    "docs/more.md": "Imported.\n",
    ".github/copilot-instructions.md": "Copilot.\n",
    ".github/instructions/py.instructions.md": '---\napplyTo: "**/*.py"\n---\nPy.\n',
    ".claude/rules/api.md": '---\npaths:\n  - "pkg/**"\n---\nAPI.\n',
    ".cursor/rules/ts.mdc": "---\nglobs: **/*.ts\n---\nTS.\n",
    "GEMINI.md": "Gemini.\n",
    "pkg/AGENTS.md": "x" * 40000,  # Codex's limit cuts this one when it runs in pkg/
    "pkg/CLAUDE.md": "Pkg Claude.\n",
    "pkg/mod.py": "",
}


def server_env() -> dict[str, str]:
    hidden = ("DSH_HOME", "TMUX", "TMUX_PANE", "CODEX_HOME")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env["HOME"] = str(AGENT_HOME)
    return env


@lsp_fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=server_env()),
    params=CLIENTS,
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient) -> AsyncIterator[None]:
    lsp_client.client_spec = request.param  # type: ignore[attr-defined]
    yield
    if getattr(lsp_client, "dsh_initialized", False):
        await lsp_client.shutdown_session()


def agent_of(result: dict[str, Any], agent_id: str) -> dict[str, Any]:
    """The answer's entry for one agent, by its id (their order grows as agents join)."""
    found: list[dict[str, Any]] = [a for a in result["agents"] if a["id"] == agent_id]
    assert len(found) == 1, [a["id"] for a in result["agents"]]
    return found[0]


def engine(ws: Workspace, rel: str, cwd: str | None = None) -> dict[str, object]:
    return explain_file(
        ws.path(rel),
        InstructionSettings(),
        LOCAL_FS,
        dsh_home=str(ws.home),
        cwd=ws.path(cwd) if cwd is not None else None,
        home=str(AGENT_HOME),
        env={},
    ).to_json()


@pytest.mark.parametrize("cwd", [None, "pkg"])
async def test_explain_answers_as_the_engine(
    client: LanguageClient, ws: Workspace, cwd: str | None
) -> None:
    ws.write(TREE)
    await start(client, ws)
    params = {"uri": ws.uri("pkg/mod.py")}
    if cwd is not None:
        params["cwd"] = ws.uri(cwd)
    result = as_dict(await call(client, methods.EXPLAIN, params))
    assert result == engine(ws, "pkg/mod.py", cwd)
    codex = agent_of(result, "codex")
    states = {f["displayPath"]: (f["state"], f.get("keptBytes")) for f in codex["files"]}
    if cwd == "pkg":
        # AGENTS.override.md (16 bytes) first, then pkg/AGENTS.md is cut to the rest of 32 KiB.
        assert states["pkg/AGENTS.md"] == ("truncated", 32768 - 16)
    else:
        assert states["pkg/AGENTS.md"] == ("not-read", None)
    assert states["~/.codex/AGENTS.md"] == ("loaded", None)
    claude = {f["displayPath"]: f["state"] for f in agent_of(result, "claude")["files"]}
    # An import from outside the working directory waits for the user's approval (2.1.332).
    assert claude["docs/more.md"] == ("not-read" if cwd == "pkg" else "loaded")
    # The .claude/rules of every directory of the start walk, root included; paths are relative
    # to the directory holding .claude.
    assert claude[".claude/rules/api.md"] == "loaded"


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"uri": "pkg/mod.py"}, "invalid-uri"),
        ({"uri": "DIR"}, "invalid-uri"),
        ({"uri": "MISSING"}, "invalid-uri"),
        ({"uri": "FILE", "cwd": "relative"}, "invalid-cwd"),
        ({"uri": 42}, None),
    ],
)
async def test_bad_params_are_refused(
    client: LanguageClient, ws: Workspace, params: dict[str, object], code: str | None
) -> None:
    ws.write(TREE)
    await start(client, ws)
    values = {"DIR": ws.uri("pkg"), "MISSING": ws.uri("nowhere/x.py"), "FILE": ws.uri("pkg/mod.py")}
    sent = {k: values.get(v, v) if isinstance(v, str) else v for k, v in params.items()}
    with pytest.raises(JsonRpcException) as caught:
        await call(client, methods.EXPLAIN, sent)
    assert caught.value.code == -32602
    if code is not None:
        assert caught.value.data == {"code": code}
    else:
        assert "params.uri" in caught.value.message
    # The server goes on answering.
    assert as_dict(await call(client, methods.EXPLAIN, {"uri": ws.uri("pkg/mod.py")}))["file"]


async def test_hostile_names_and_imports_get_an_answer(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write(TREE)
    (ws.project / "CLAUDE.md").write_bytes(b"@docs/x\x00y.md @docs/\xff.md\n")
    (ws.project / "docs" / os.fsdecode(b"\xff.md")).write_text("odd name\n")
    (ws.project / ".cursor/rules" / os.fsdecode(b"caf\xe9.mdc")).write_text(
        "---\nalwaysApply: true\n---\n"
    )
    await start(client, ws)
    result = as_dict(await call(client, methods.EXPLAIN, {"uri": ws.uri("pkg/mod.py")}))
    cursor = [f["displayPath"] for f in agent_of(result, "cursor")["files"]]
    assert any(path.startswith(".cursor/rules/caf") for path in cursor)
    with pytest.raises(JsonRpcException) as caught:
        await call(client, methods.EXPLAIN, {"uri": ws.uri("pkg") + "/a%00b.py"})
    assert caught.value.data == {"code": "invalid-uri"}

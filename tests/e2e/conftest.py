"""End-to-end fixtures: the real sidecar over stdio, driven by pytest-lsp with real client
capabilities (VS Code and Neovim), isolated in a temp project, DSH_HOME and store."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from dsh_sidecar.sessions.store import NO_FSYNC_ENV
from tests.support.forked_servers import server_command
from tests.support.lsp_fixture import lsp_fixture

SERVER_COMMAND = server_command("serve")
CLIENTS = ["visual-studio-code", "neovim"]


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


class Workspace:
    """A temp project (with a .git root marker), DSH_HOME and store path."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.project = base / "project"
        self.home = base / "dsh-home"
        self.store = base / "store" / "sessions.sqlite3"
        (self.project / ".git").mkdir(parents=True)
        self.home.mkdir()

    def write(self, files: Mapping[str, str | bytes]) -> None:
        write_tree(self.project, files)

    def path(self, rel: str) -> str:
        return str(self.project / rel)

    def uri(self, rel: str) -> str:
        return (self.project / rel).as_uri()

    def options(self, **instructions: Any) -> dict[str, Any]:
        return {
            "store": {"path": str(self.store)},
            "instructions": {"dshHome": str(self.home), **instructions},
        }


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DSH_HOME", "TMUX", "TMUX_PANE")}
    env["HOME"] = env.get("HOME", "/root")
    env[NO_FSYNC_ENV] = "1"  # these tests are about behaviour, not surviving power loss
    return env


@lsp_fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=server_env()),
    params=CLIENTS,
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient) -> AsyncIterator[None]:
    # Initialization is per test (each needs its own workspace), through ``start``.
    lsp_client.client_spec = request.param  # type: ignore[attr-defined]
    yield
    if getattr(lsp_client, "dsh_initialized", False):
        await lsp_client.shutdown_session()


async def start(
    client: LanguageClient,
    ws: Workspace,
    *,
    sections: Mapping[str, Any] | None = None,
    **instructions: Any,
) -> types.InitializeResult:
    """Initialize the session with the client's real capabilities and our isolated settings.

    ``instructions`` go into the ``instructions`` section; ``sections`` adds other sections.
    """
    spec = getattr(client, "client_spec", "visual-studio-code")
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(spec),
            root_uri=ws.project.as_uri(),
            initialization_options={**ws.options(**instructions), **(sections or {})},
        )
    )
    client.dsh_initialized = True  # type: ignore[attr-defined]
    return result


async def call(client: LanguageClient, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


def as_dict(value: Any) -> Any:
    """pygls hands custom results back as namedtuples; turn them into plain JSON data."""
    if hasattr(value, "_asdict"):
        return {k: as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [as_dict(v) for v in value]
    return value


def did_open(client: LanguageClient, uri: str, text: str = "") -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )


Predicate = Callable[[Any], bool]

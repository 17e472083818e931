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

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "vscode-extension"
TOOLS = REPO / ".tools"
CODE_SERVER = TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT_CORE = TOOLS / "playwright" / "node_modules" / "playwright-core"
CHROMIUM = Path("/usr/bin/chromium")
PYTHON = REPO / ".venv" / "bin" / "python"

NESTED_RULE = "PKG-RULE-7f3a: in pkg, indent with tabs."
ROOT_RULE = "ROOT-RULE-19c2: be concise."
FILE_TEXT = "hello from x"
REMINDER = "<system-reminder>\nAdditional instructions from: pkg/AGENTS.md"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the scripted model ---------------------------------------------------------------------------


class FakeModel:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 that streams scripted replies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                with model.lock:
                    model.requests.append(
                        {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                    )
                    n = len(model.requests)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for chunk in model.reply(n, body):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @staticmethod
    def reply(n: int, body: dict[str, Any]) -> list[dict[str, Any]]:
        def delta(d: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion.chunk",
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": d, "finish_reason": finish}],
            }

        if n == 1:
            # The tool call arrives in fragments, as real servers send it.
            return [
                delta({"role": "assistant", "content": None}),
                delta({"tool_calls": [{"index": 0, "id": "call_read_1", "type": "function",
                                       "function": {"name": "read", "arguments": ""}}]}),
                delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"file_path": '}}]}),
                delta({"tool_calls": [{"index": 0, "function": {"arguments": '"pkg/src/x.txt"}'}}]}),
                delta({}, "tool_calls"),
            ]  # fmt: skip
        if "tools" not in body:
            # DSH: Compact Chat Session asks for a summary, offering no tools.
            return [
                delta({"role": "assistant", "content": "Summary: read pkg/src/x.txt."}),
                delta({}, "stop"),
            ]
        tool_text = next(
            (
                m.get("content")
                for m in reversed(body.get("messages", []))
                if m.get("role") == "tool"
            ),
            "(no tool result)",
        )
        answer = f"The file says: {str(tool_text).strip()}"
        return [
            delta({"role": "assistant", "content": answer[:9]}),
            delta({"content": answer[9:]}),
            delta({}, "stop"),
        ]

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# --- fixtures -------------------------------------------------------------------------------------


def _require_tools() -> None:
    """Missing tools fail the test (never skip): scripts/bootstrap.d/vscode.sh installs them."""
    missing = [
        str(p)
        for p in (CODE_SERVER, PLAYWRIGHT_CORE, CHROMIUM, PYTHON, EXT / "dist" / "extension.js")
        if not p.exists()
    ]
    assert not missing, f"missing (run scripts/bootstrap): {missing}"
    assert shutil.which("node"), "node is not on PATH"
    probe = subprocess.run(
        [str(PYTHON), "-m", "dsh_sidecar", "serve", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert probe.returncode == 0, f"the sidecar CLI does not run:\n{probe.stderr[-2000:]}"


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
    with FakeModel() as model:
        yield model


class CodeServer:
    def __init__(self, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log


@pytest.fixture
def code_server(tmp_path: Path, workspace: Path, fake_model: FakeModel) -> Iterator[CodeServer]:
    _require_tools()
    port = _free_port()
    home = tmp_path / "cs"
    user = home / "data" / "User"
    user.mkdir(parents=True)
    # dsh.pythonPath is machine-overridable: in a remote window (code-server's is one) VS Code
    # takes machine settings from the remote's Machine settings, and drops them from User
    # settings once the extension's schema is known.
    machine = home / "data" / "Machine"
    machine.mkdir(parents=True)
    (machine / "settings.json").write_text(
        json.dumps({"dsh.pythonPath": str(PYTHON)}), encoding="utf-8"
    )
    (user / "settings.json").write_text(
        json.dumps({
            "dsh.model.provider": "openai",
            "dsh.model.baseUrl": fake_model.base_url,
            "dsh.model.name": "fake-model",
            "dsh.model.requestTimeoutSeconds": 30,
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "security.workspace.trust.enabled": False,
            "telemetry.telemetryLevel": "off",
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "update.mode": "none",
            "chat.commandCenter.enabled": False,
        }),
        encoding="utf-8",
    )  # fmt: skip
    config = home / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n", encoding="utf-8")
    for d in ("xdg-config", "xdg-data", "exts", "dsh-home", "e2e"):
        (home / d).mkdir()
    # VS Code puts IPC sockets in TMPDIR; pytest's tmp paths exceed the 107-byte socket limit.
    short_tmp = tempfile.mkdtemp(prefix="dshcs-")
    env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(home / "xdg-config"),
        XDG_DATA_HOME=str(home / "xdg-data"),
        TMPDIR=short_tmp,
        # The extension host inherits this environment, and the sidecar inherits the host's.
        DSH_HOME=str(home / "dsh-home"),
        DSH_API_KEY="test-key-e2e",
        DSH_E2E_DIR=str(home / "e2e"),
    )
    env.pop("OPENAI_API_KEY", None)
    log = tmp_path / "code-server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(CODE_SERVER), "--config", str(config), "--bind-addr", f"127.0.0.1:{port}",
             "--auth", "none", "--disable-telemetry", "--disable-update-check",
             "--disable-workspace-trust", "--disable-getting-started-override",
             "--user-data-dir", str(home / "data"), "--extensions-dir", str(home / "exts"),
             str(workspace)],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, f"code-server exited:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, (
                f"code-server not up in 30 s:\n{log.read_text()[-3000:]}"
            )
            time.sleep(0.2)
        yield CodeServer(f"http://127.0.0.1:{port}", proc, log)
    finally:
        _kill_group(proc)
        shutil.rmtree(short_tmp, ignore_errors=True)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # code-server's helpers (file watcher, extension host, the sidecar) share its process group.
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    time.sleep(0.5)  # let the group's stragglers take their SIGTERM
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(5)


# --- the test -------------------------------------------------------------------------------------


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p.get("text", "") for p in content if isinstance(p, dict)]
    return []


def test_chat_turn_gets_nested_instructions_after_tool_result(
    tmp_path: Path, code_server: CodeServer, fake_model: FakeModel, workspace: Path
) -> None:
    e2e_dir = tmp_path / "cs" / "e2e"
    env = dict(
        os.environ,
        PLAYWRIGHT_CORE=str(PLAYWRIGHT_CORE),
        CS_URL=code_server.url,
        WORKSPACE=str(workspace),
        EXT_DIR=str(EXT),
        DSH_E2E_DIR=str(e2e_dir),
        CHROMIUM=str(CHROMIUM),
        EXPECTED_ANSWER=f"The file says: {FILE_TEXT}",
        RUNNER_TIMEOUT_MS="150000",
    )
    started = time.monotonic()
    try:
        run = subprocess.run(
            ["node", str(EXT / "test" / "e2e" / "runner.js")],
            env=env, capture_output=True, text=True, timeout=170, check=False,
        )  # fmt: skip
        output = run.stdout + run.stderr
        code = run.returncode
    except subprocess.TimeoutExpired as exc:
        output = f"{exc.stdout or ''}{exc.stderr or ''}"
        code = -1
    suite_log = e2e_dir / "suite.log"
    details = (
        f"runner exit {code} after {time.monotonic() - started:.1f}s\n--- runner ---\n{output[-6000:]}"
        f"\n--- suite.log ---\n{suite_log.read_text() if suite_log.exists() else '(none)'}"
        f"\n--- code-server.log (tail) ---\n{code_server.log.read_text(errors='replace')[-3000:]}"
    )
    print(details)
    assert code == 0, details

    # The model saw the tool call request, the answer request, then the compaction summary.
    assert len(fake_model.requests) == 3, details
    first, second, summary = (r["body"] for r in fake_model.requests)
    assert "tools" not in summary
    assert summary["messages"][-1]["role"] == "user"
    assert summary["messages"][-1]["content"].startswith("Summarize the conversation so far")
    assert all(
        r["headers"].get("authorization") == "Bearer test-key-e2e" for r in fake_model.requests
    )
    assert first["model"] == "fake-model" and first["stream"] is True
    assert {t["function"]["name"] for t in first["tools"]} == {"read", "write", "edit"}

    def flat(body: dict[str, Any]) -> list[tuple[str, str]]:
        return [(m["role"], "\n".join(_texts(m))) for m in body["messages"]]

    first_msgs, second_msgs = flat(first), flat(second)
    # The root AGENTS.md came with the first step (baseline); the nested one did not.
    assert any(role == "user" and ROOT_RULE in text for role, text in first_msgs), first_msgs
    assert not any(NESTED_RULE in text for _, text in first_msgs), first_msgs

    tool_at = next(i for i, (role, _) in enumerate(second_msgs) if role == "tool")
    assert FILE_TEXT in second_msgs[tool_at][1]
    assert second["messages"][tool_at - 1]["tool_calls"][0]["function"]["name"] == "read"
    nested = [
        i for i, m in enumerate(second["messages"])
        if m["role"] == "user" and any(t.startswith(REMINDER) for t in _texts(m))
    ]  # fmt: skip
    assert nested, f"no nested instructions in the second request: {second_msgs}"
    assert nested[0] > tool_at, f"nested instructions at {nested[0]}, tool result at {tool_at}"
    assert nested[0] == tool_at + 1, "the instructions come right after the tool result"
    assert NESTED_RULE in second_msgs[nested[0]][1]

    # The UI: the answer in the chat, the nested file in the inspector, the count in the status bar.
    ui = json.loads((e2e_dir / "ui-done").read_text())
    assert f"The file says: {FILE_TEXT}" in ui["chatText"]
    assert "pkg/AGENTS.md" in ui["inspectorText"] and NESTED_RULE in ui["inspectorText"]
    assert "2 instruction files apply to x.txt" in ui["statusLabel"]

    # `@` completion inserted a mention (the suite checked it names the first session) and the
    # panel sent nothing for it (the request count above).
    mention = json.loads((e2e_dir / "mention-done").read_text())
    assert mention["prompt"].startswith("Compare with @[ws](dsh-session:"), mention
    assert mention["prompt"].endswith(") "), mention

    shot = e2e_dir / "vscode-e2e.png"
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000, "the screenshot looks empty"
    print(f"screenshot: {shot}")

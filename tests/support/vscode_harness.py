"""Shared parts of the VS Code end-to-end tests: a scripted OpenAI-compatible model server,
code-server started in a scratch profile (and killed with its whole process group), and the
playwright-core runners under vscode-extension/test/e2e/.

Nothing here skips: a missing tool fails the test (scripts/bootstrap.d/vscode.sh installs them).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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

THEMES = {"light": "Default Light Modern", "dark": "Default Dark Modern"}

QUIET_WORKBENCH = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "update.mode": "none",
    "chat.commandCenter.enabled": False,
    # Nothing may reach beyond 127.0.0.1: no experiments, recommendations, release notes, schema
    # downloads, npm lookups, type acquisition or fetches (assert_no_outside_requests checks).
    "workbench.enableExperiments": False,
    "workbench.settings.enableNaturalLanguageSearch": False,
    "extensions.ignoreRecommendations": True,
    "update.showReleaseNotes": False,
    "json.schemaDownload.enable": False,
    "npm.fetchOnlinePackageInfo": False,
    "typescript.disableAutomaticTypeAcquisition": True,
    "git.autofetch": False,
}

# An empty gallery (no serviceUrl) turns code-server's extension marketplace off; by default it
# queries open-vsx.org on start.
NO_GALLERY = "{}"

# A request in a log: VS Code's request service logs "#N: URL - ...", others "GET URL".
_REQUEST = re.compile(
    r"(?:#\d+:|\b(?:GET|POST|PUT|HEAD|CONNECT))\s+(?:https?|wss?)://([^/\s:'\"\)\]]+)",
    re.IGNORECASE,
)
_LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}
# Webview resources use this virtual host; the webview's service worker answers them in the page.
_WEBVIEW_RESOURCE_HOST = re.compile(r"\.vscode-resource\.vscode-cdn\.net$", re.IGNORECASE)
_LOOKUP_FAILURE = re.compile(r"getaddrinfo|ENOTFOUND|EAI_AGAIN|ERR_NAME_NOT_RESOLVED")


def outside_attempts(text: str) -> list[str]:
    """Lines of a log that show a request to, or a name lookup of, anything but loopback."""
    found = []
    for line in text.splitlines():
        hosts = [
            h
            for h in _REQUEST.findall(line)
            if h.lower() not in _LOOPBACK and not _WEBVIEW_RESOURCE_HOST.search(h)
        ]
        if hosts or _LOOKUP_FAILURE.search(line):
            found.append(line.strip()[:300])
    return found


def assert_no_outside_requests(cs: CodeServer) -> None:
    """code-server's log, its own log files and the browser's record show nothing non-loopback."""
    logs = [cs.log, *sorted((cs.home / "data" / "logs").glob("**/*.log"))]
    problems = [
        f"{log.name}: {line}"
        for log in logs
        if log.is_file()
        for line in outside_attempts(log.read_text(errors="replace"))
    ]
    browser = cs.home / "e2e" / "outside-requests.txt"
    if browser.exists():
        problems += [f"browser: {line}" for line in browser.read_text().splitlines()]
    assert not problems, "a request beyond 127.0.0.1:\n" + "\n".join(problems)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def require_tools(*, sidecar_in_venv: bool = True) -> None:
    """Missing tools fail the test (never skip)."""
    needed = [CODE_SERVER, PLAYWRIGHT_CORE, CHROMIUM, PYTHON, EXT / "dist" / "extension.js"]
    missing = [str(p) for p in needed if not p.exists()]
    assert not missing, f"missing (run scripts/bootstrap): {missing}"
    assert shutil.which("node"), "node is not on PATH"
    if sidecar_in_venv:
        probe = subprocess.run(
            [str(PYTHON), "-m", "dsh_sidecar", "serve", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert probe.returncode == 0, f"the sidecar CLI does not run:\n{probe.stderr[-2000:]}"


# --- the scripted model ---------------------------------------------------------------------------


def chunk(n: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@dataclass
class Reply:
    """One scripted answer: SSE chunks, or an HTTP error with a body."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error_body: bytes = b""
    # Keep the stream open after the chunks until the client goes away (the Stop button).
    hold: bool = False
    # Seconds to wait between chunks, so the page can be seen mid-stream.
    pace: float = 0.0


def text_reply(n: int, text: str, pieces: int = 3, **kwargs: Any) -> Reply:
    size = max(1, -(-len(text) // pieces))
    parts = [text[i : i + size] for i in range(0, len(text), size)]
    chunks = [chunk(n, {"role": "assistant", "content": parts[0]})]
    chunks += [chunk(n, {"content": p}) for p in parts[1:]]
    if not kwargs.get("hold"):
        chunks.append(chunk(n, {}, "stop"))
    return Reply(chunks=chunks, **kwargs)


def tool_reply(n: int, call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    """A tool call whose argument JSON arrives in two fragments, as real servers send it."""
    raw = json.dumps(arguments)
    half = len(raw) // 2
    first = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": raw[:half]},
    }
    return Reply(
        chunks=[
            chunk(n, {"role": "assistant", "content": None}),
            chunk(n, {"tool_calls": [first]}),
            chunk(n, {"tool_calls": [{"index": 0, "function": {"arguments": raw[half:]}}]}),
            chunk(n, {}, "tool_calls"),
        ]
    )


Script = Callable[[int, dict[str, Any]], Reply]


class FakeModel:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 answering from a script."""

    def __init__(self, script: Script) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.script = script
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:
                if not self.path.endswith("/models"):
                    self.send_error(404)
                    return
                self._json(200, {"object": "list", "data": [{"id": "fake-model"}]})

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
                reply = model.script(n, body)
                if reply.status != 200:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(reply.error_body)))
                    self.end_headers()
                    self.wfile.write(reply.error_body)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                try:
                    for c in reply.chunks:
                        self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                        self.wfile.flush()
                        if reply.pace:
                            time.sleep(reply.pace)
                    if reply.hold:
                        # Until the client hangs up (bounded, so a broken test cannot hang).
                        deadline = time.monotonic() + 120
                        while time.monotonic() < deadline:
                            time.sleep(0.2)
                            self.wfile.write(b": still thinking\n\n")
                            self.wfile.flush()
                        return
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return

            def _json(self, status: int, document: Any) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r["body"] for r in self.requests]

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p.get("text", "") for p in content if isinstance(p, dict)]
    return []


# --- code-server ----------------------------------------------------------------------------------


@dataclass
class CodeServer:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    home: Path
    dsh_home: Path


def model_settings(model: FakeModel) -> dict[str, Any]:
    return {
        "dsh.model.provider": "openai",
        "dsh.model.baseUrl": model.base_url,
        "dsh.model.name": "fake-model",
        "dsh.model.requestTimeoutSeconds": 30,
    }


def path_without_virtualenvs() -> str:
    """PATH as a user without any activated virtualenv has it (and without this checkout's .venv)."""
    keep = [
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p
        and ".venv" not in p
        and not (os.environ.get("VIRTUAL_ENV") and p.startswith(os.environ["VIRTUAL_ENV"]))
    ]
    return os.pathsep.join(keep)


@contextlib.contextmanager
def code_server(
    tmp_path: Path,
    workspace: Path,
    *,
    user_settings: dict[str, Any],
    machine_settings: dict[str, Any] | None = None,
    install_vsix: Path | list[Path] | None = None,
    env: dict[str, str] | None = None,
    trusted: bool = True,
) -> Iterator[CodeServer]:
    """code-server on a free 127.0.0.1 port with a scratch profile; its group is killed after.

    ``trusted=False`` opens the folder in Restricted Mode (workspace trust on, never asked)."""
    port = free_port()
    home = tmp_path / "cs"
    user = home / "data" / "User"
    user.mkdir(parents=True)
    trust = (
        {}
        if trusted
        else {
            "security.workspace.trust.enabled": True,
            "security.workspace.trust.startupPrompt": "never",
            "security.workspace.trust.emptyWindow": False,
        }
    )
    (user / "settings.json").write_text(
        json.dumps({**QUIET_WORKBENCH, **trust, **user_settings}, indent=2), encoding="utf-8"
    )
    if machine_settings is not None:
        machine = home / "data" / "Machine"
        machine.mkdir(parents=True)
        (machine / "settings.json").write_text(json.dumps(machine_settings), encoding="utf-8")
    config = home / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n", encoding="utf-8")
    for d in ("xdg-config", "xdg-data", "exts", "dsh-home", "e2e"):
        (home / d).mkdir()
    # VS Code puts IPC sockets in TMPDIR; pytest's tmp paths exceed the 107-byte socket limit.
    short_tmp = tempfile.mkdtemp(prefix="dshcs-")
    full_env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(home / "xdg-config"),
        XDG_DATA_HOME=str(home / "xdg-data"),
        TMPDIR=short_tmp,
        # The extension host inherits this environment, and the sidecar inherits the host's.
        DSH_HOME=str(home / "dsh-home"),
        DSH_API_KEY="test-key-e2e",
        DSH_E2E_DIR=str(home / "e2e"),
    )
    full_env.pop("OPENAI_API_KEY", None)
    full_env["EXTENSIONS_GALLERY"] = NO_GALLERY
    full_env.update(env or {})
    base = [
        str(CODE_SERVER),
        "--config",
        str(config),
        "--user-data-dir",
        str(home / "data"),
        "--extensions-dir",
        str(home / "exts"),
    ]
    log = tmp_path / "code-server.log"
    vsixes = [install_vsix] if isinstance(install_vsix, Path) else (install_vsix or [])
    for vsix in vsixes:
        installed = subprocess.run(
            [*base, "--install-extension", str(vsix)],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert installed.returncode == 0, f"install failed:\n{installed.stdout}{installed.stderr}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *base,
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                "--disable-telemetry",
                "--disable-update-check",
                *(["--disable-workspace-trust"] if trusted else []),
                "--disable-getting-started-override",
                str(workspace),
            ],
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
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
        server = CodeServer(f"http://127.0.0.1:{port}", proc, log, home, home / "dsh-home")
        yield server
    finally:
        kill_group(proc)
        shutil.rmtree(short_tmp, ignore_errors=True)
    # Reached only when the test passed (a failure is not hidden behind this one).
    assert_no_outside_requests(server)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
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


# The runners' error when a webview never showed its content, even after "Developer: Reload
# Webviews" (vscode-extension/test/e2e/lib.js, NEVER_SHOWED). code-server serves every webview
# from one origin, so all of them share one service-worker scope (desktop VS Code gives each its
# own origin), and each webview's host frame waits for its own worker to take control and answer
# it. A worker that another frame registered (code-server's own, or another webview's) can take
# control first, and the frame then waits for ever: the CI logs show "Found unexpected service
# worker controller". That race is in code-server, not in the extension, so a test that meets
# it is run once more, from a fresh code-server and browser; any other failure fails at once,
# and a webview that is blank both times fails the test.
WEBVIEW_NEVER_SHOWED = "webview never showed its content"
rerun_if_a_webview_never_showed = pytest.mark.flaky(reruns=1, only_rerun=[WEBVIEW_NEVER_SHOWED])


def run_runner(
    script: str, cs: CodeServer, workspace: Path, timeout_s: int, **env: str
) -> tuple[int, str]:
    """Run a playwright-core runner of test/e2e/; returns its exit code and a diagnostic text."""
    e2e_dir = cs.home / "e2e"
    full_env = dict(
        os.environ,
        PLAYWRIGHT_CORE=str(PLAYWRIGHT_CORE),
        CS_URL=cs.url,
        WORKSPACE=str(workspace),
        EXT_DIR=str(EXT),
        DSH_E2E_DIR=str(e2e_dir),
        CHROMIUM=str(CHROMIUM),
        RUNNER_TIMEOUT_MS=str((timeout_s - 15) * 1000),
        **env,
    )
    started = time.monotonic()
    try:
        run = subprocess.run(
            ["node", str(EXT / "test" / "e2e" / script)],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        output, code = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as exc:
        # On a timeout the output collected so far comes undecoded, even with text=True.
        output, code = _decoded(exc.stdout) + _decoded(exc.stderr), -1
    suite_log = e2e_dir / "suite.log"
    details = (
        f"{script} exit {code} after {time.monotonic() - started:.1f}s\n--- runner ---\n"
        f"{output[-8000:]}\n--- suite.log ---\n"
        f"{suite_log.read_text() if suite_log.exists() else '(none)'}"
        f"\n--- code-server.log (tail) ---\n{cs.log.read_text(errors='replace')[-3000:]}"
    )
    print(details)
    return code, details


def package_vsix(out: Path) -> Path:
    """Build the self-contained .vsix with scripts/package.mjs (bundles + bundled/libs)."""
    npm = shutil.which("npm")
    assert npm, "npm is not on PATH"
    assert (EXT / "node_modules" / "@vscode" / "vsce").is_dir(), (
        "@vscode/vsce is not installed: run scripts/bootstrap (bootstrap.d/vscode.sh)"
    )
    # `npm run package`, as docs/editors/vscode.md tells users (test_vscode_docs.py keeps it so).
    proc = subprocess.run(
        [npm, "run", "package", "--", "--out", str(out), "--python", str(PYTHON)],
        cwd=EXT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"packaging failed:\n{proc.stdout}\n{proc.stderr}"
    assert out.is_file() and out.stat().st_size > 100_000
    return out


def package_python_extension_standin(out: Path) -> Path:
    """A .vsix of tests/editors/python-extension-standin (id ms-python.python, which cannot be
    installed offline): its environments API names DSH_E2E_SELECTED_PYTHON as the interpreter."""
    node = shutil.which("node")
    assert node, "node is not on PATH"
    source = REPO / "tests" / "editors" / "python-extension-standin"
    staged = out.parent / "python-extension-standin"
    shutil.copytree(source, staged)
    vsce = EXT / "node_modules" / "@vscode" / "vsce" / "vsce"
    proc = subprocess.run(
        [
            node,
            str(vsce),
            "package",
            "--allow-missing-repository",
            "--skip-license",
            "--out",
            str(out),
        ],
        cwd=staged,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"packaging the stand-in failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _decoded(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""

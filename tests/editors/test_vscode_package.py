"""`scripts/package.mjs` turns the extension into a self-contained .vsix: the production bundles,
the webview assets, and the sidecar with its Python dependencies in bundled/libs, which run
with nothing but a Python 3.11+ (no virtualenv, no pip install)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from typing import IO, Any

import pytest
from tests.support.tools import tool_fixture
from tests.support.vscode_harness import package_vsix

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "vscode-extension"


@tool_fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return package_vsix(tmp_path_factory.mktemp("vsix") / "dsh-sidecar.vsix")


def test_vsix_holds_the_bundles_and_the_sidecar(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    for required in (
        "extension/dist/extension.js",
        "extension/dist/webview/chat.js",
        "extension/dist/webview/inspector.js",
        "extension/media/chat.css",
        "extension/media/inspector.css",
        "extension/media/walkthrough/model.md",
        "extension/bundled/tool/launch.py",
        "extension/bundled/libs/dsh_sidecar/__init__.py",
        "extension/bundled/libs/dsh_sidecar/lsp/server.py",
        "extension/bundled/libs/pygls/__init__.py",
        "extension/bundled/libs/lsprotocol/types.py",
        "extension.vsixmanifest",
    ):
        assert required in names, f"{required} missing from the .vsix"
    # Sources, tests, node_modules, maps, bytecode and console scripts stay out.
    assert not any(
        n.startswith(
            ("extension/src/", "extension/test/", "extension/node_modules/", "extension/scripts/")
        )
        for n in names
    )
    assert not any(n.endswith((".map", ".pyc")) or "/__pycache__/" in n for n in names)
    assert not any(n.startswith("extension/bundled/libs/bin/") for n in names)
    assert manifest["name"] == "dsh-sidecar" and manifest["engines"]["vscode"] == "^1.82.0"
    assert manifest["main"] == "./dist/extension.js"
    assert "scripts" not in manifest and "devDependencies" not in manifest
    # Every pinned dependency made it in, at its pinned version.
    pinned = [
        line.split(" ")[0].split("==")
        for line in (EXT / "bundled" / "requirements.txt").read_text().splitlines()
        if "==" in line
    ]
    assert len(pinned) >= 5
    for name, version in pinned:
        dist = f"extension/bundled/libs/{name.replace('-', '_')}-{version}.dist-info/METADATA"
        assert dist in names, f"{name}=={version} is not in the .vsix"


def test_bundled_sidecar_runs_on_a_bare_python(vsix: Path, tmp_path: Path) -> None:
    """The unpacked extension serves from bundled/libs alone: `-I` drops PYTHONPATH and the user
    site, and the repository's virtualenv is not involved (the interpreter is the base one)."""
    with zipfile.ZipFile(vsix) as archive:
        archive.extractall(tmp_path)
    launcher = tmp_path / "extension" / "bundled" / "tool" / "launch.py"
    base_python = Path(sys.base_prefix) / "bin" / "python3"
    assert base_python.exists(), base_python
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}

    probe = subprocess.run(
        [str(base_python), "-I", str(launcher), "--probe"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    )
    info = json.loads(probe.stdout)
    assert info["supported"] and info["bundled"], info
    assert info["sidecar"]["path"] == str(
        tmp_path / "extension" / "bundled" / "libs" / "dsh_sidecar"
    )

    # A real LSP initialize over stdio answers with the dsh capability; then shutdown and exit.
    serve = subprocess.Popen(
        [str(base_python), "-I", str(launcher), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env, DSH_HOME=str(tmp_path / "home")),
        cwd=tmp_path,
    )
    assert serve.stdin is not None and serve.stdout is not None
    # A sidecar that never answers must not hang the test: kill it, and the read sees EOF.
    watchdog = threading.Timer(60, serve.kill)
    watchdog.start()
    try:
        _send(
            serve.stdin,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            },
        )
        answer = _receive(serve.stdout)
        assert answer["id"] == 1, answer
        assert answer["result"]["capabilities"]["experimental"]["dsh"]["protocolVersion"] == 1
        _send(serve.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert _receive(serve.stdout)["id"] == 2
        _send(serve.stdin, {"jsonrpc": "2.0", "method": "exit"})
        assert serve.wait(60) == 0
    finally:
        watchdog.cancel()
        if serve.poll() is None:
            serve.kill()
            serve.wait(10)
        serve.stdin.close()
        serve.stdout.close()
        if serve.stderr is not None:
            serve.stderr.close()


def _send(pipe: IO[bytes], message: dict[str, object]) -> None:
    body = json.dumps(message).encode()
    pipe.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    pipe.flush()


def _receive(pipe: IO[bytes]) -> dict[str, Any]:
    """One LSP message (the server writes only responses here: nothing is registered)."""
    length = None
    while True:
        line = pipe.readline()
        assert line, "the sidecar closed its output"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None
    message: dict[str, Any] = json.loads(pipe.read(length))
    return message


def test_launcher_refuses_an_old_python_with_one_line(tmp_path: Path) -> None:
    """The launcher parses on any Python; the version check is its own, with a readable line."""
    launcher = EXT / "bundled" / "tool" / "launch.py"
    fake = tmp_path / "launch_test.py"
    # Run the real launcher with the minimum raised past this interpreter's version, so the
    # "too old" path runs on whatever Python this machine has.
    fake.write_text(
        launcher.read_text(encoding="utf-8").replace("MINIMUM = (3, 11)", "MINIMUM = (99, 0)"),
        encoding="utf-8",
    )
    probe = subprocess.run(
        [sys.executable, str(fake), "--probe"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(probe.stdout)["supported"] is False
    serve = subprocess.run(
        [sys.executable, str(fake), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert serve.returncode == 3
    assert serve.stderr == (
        f"dsh-sidecar needs Python 3.11 or newer; {sys.executable} is "
        f"{'.'.join(str(n) for n in sys.version_info[:3])}\n"
    )
    assert serve.stdout == ""

"""`vsce package` (@vscode/vsce 3) turns the extension into an installable .vsix."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

EXT = Path(__file__).resolve().parents[2] / "vscode-extension"


def test_vsce_packages_a_vsix(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    assert npx, "npx is not on PATH"
    assert (EXT / "node_modules" / "@vscode" / "vsce").is_dir(), (
        "@vscode/vsce is not installed: run scripts/bootstrap (bootstrap.d/vscode.sh)"
    )
    out = tmp_path / "dsh-sidecar.vsix"
    proc = subprocess.run(
        [npx, "--no-install", "vsce", "package", "--no-dependencies", "--allow-missing-repository",
         "--out", str(out)],
        cwd=EXT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, f"vsce package failed:\n{proc.stdout}\n{proc.stderr}"
    assert out.is_file() and out.stat().st_size > 10_000

    with zipfile.ZipFile(out) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
    for required in (
        "extension/dist/extension.js",
        "extension/dist/webview/chat.js",
        "extension/dist/webview/inspector.js",
        "extension/media/chat.css",
        "extension/media/inspector.css",
        "extension.vsixmanifest",
    ):
        assert required in names, f"{required} missing from the .vsix"
    # Sources, tests and node_modules stay out: the bundle is self-contained.
    assert not any(
        n.startswith(("extension/src/", "extension/test/", "extension/node_modules/"))
        for n in names
    )
    assert not any(n.endswith(".map") for n in names)
    assert manifest["name"] == "dsh-sidecar" and manifest["engines"]["vscode"] == "^1.82.0"
    assert manifest["main"] == "./dist/extension.js"

"""docs/editors/vscode.md tells users to install with the commands the tests run, and names no
package that is not published (issue 22, item 9).

The tested path: `npm ci` (scripts/bootstrap.d/vscode.sh), `npm run package`
(vscode_harness.package_vsix, used by test_vscode_package.py and test_vscode_install_e2e.py) and
`--install-extension <vsix>` (vscode_harness.code_server, with code-server's CLI, which is VS Code's).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dsh_sidecar.config.keys import KEYS

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "editors" / "vscode.md"
HARNESS = REPO / "tests" / "support" / "vscode_harness.py"
MANIFEST = json.loads((REPO / "vscode-extension" / "package.json").read_text(encoding="utf-8"))


def install_block() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Install", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the Install section has no bash block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_install_commands_are_the_tested_ones() -> None:
    vsix = f"{MANIFEST['name']}-{MANIFEST['version']}.vsix"
    assert install_block() == [
        "cd vscode-extension && npm ci && npm run package",
        f"code --install-extension {vsix}",
    ]
    harness = HARNESS.read_text(encoding="utf-8")
    assert '[npm, "run", "package"' in harness  # the packaging the tests run
    assert '"--install-extension"' in harness  # the install the tests run


def test_no_unpublished_package_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    # Neither the sidecar nor the extension is on PyPI, npm or a marketplace.
    for pattern in (
        r"pip install\s+dsh[-_]sidecar",
        r"npm install\s+(-g\s+)?dsh[-_]sidecar",
        r"ext install",
        r"--install-extension\s+dsh-sidecar\.dsh-sidecar",
    ):
        assert re.search(pattern, text) is None, pattern


def test_the_sidecar_settings_block_is_every_contributed_setting_with_its_default() -> None:
    """The block after "Sidecar settings:" shows each key the extension contributes and sends
    (config/keys.py, all but the terminal-only ones) with its default, in the table's order."""
    section = DOC.read_text(encoding="utf-8").split("\nSidecar settings:", 1)[1]
    block = re.search(r"```jsonc\n(.*?)```", section, re.S)
    assert block is not None, "no jsonc block after 'Sidecar settings:'"
    shown = list(json.loads(block.group(1)).items())
    assert shown == [(f"dsh.{k.wire}", k.default) for k in KEYS if not k.terminal_only]

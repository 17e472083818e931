"""The VS Code extension's three layers, kept apart: the extension host (src/ outside webview/
and shared/), the webviews (src/webview/, bundled for the browser) and what both use
(src/shared/: message shapes and pure helpers). The webview imports only itself, shared/ and its
two browser libraries; shared/ imports only shared/; host code never imports a webview file.
An import across those lines is how the circle chat/convert -> chat/pendingView ->
webview/messages came about, so this reads every import of src/ and names any that crosses."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

SRC = Path(__file__).resolve().parents[2] / "vscode-extension" / "src"
# `import … from 'x'`, `export … from 'x'`, `import 'x'` and `import('x')`, over several lines too.
IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"\n]+)['"]""")
WEBVIEW_LIBRARIES = {"highlight.js/lib/common", "markdown-it"}


class Import(NamedTuple):
    label: str  # "webview/chat.ts: ../shared/text", for the failure message
    written: str
    layer: str | None  # the layer of the file imported, None for a package


def _imports(layer: str) -> list[Import]:
    """Every import written in a file of `layer`."""
    found = []
    for source in sorted(SRC.rglob("*.ts")):
        relative = source.relative_to(SRC)
        if _layer_of(relative) != layer:
            continue
        for written in IMPORT.findall(source.read_text(encoding="utf-8")):
            target = None
            if written.startswith("."):
                resolved = (source.parent / written).resolve().relative_to(SRC.resolve())
                target = _layer_of(resolved)
            found.append(Import(f"{relative}: {written}", written, target))
    return found


def _layer_of(relative: Path) -> str:
    top = relative.parts[0]
    return top if top in ("webview", "shared") else "host"


def test_the_webview_imports_only_itself_shared_and_its_browser_libraries() -> None:
    imports = _imports("webview")
    assert imports, "no webview imports read: has src/webview moved?"
    allowed = [
        i.layer in ("webview", "shared") or (i.layer is None and i.written in WEBVIEW_LIBRARIES)
        for i in imports
    ]
    assert [i.label for i, ok in zip(imports, allowed, strict=True) if not ok] == []


def test_shared_imports_nothing_outside_shared() -> None:
    assert [i.label for i in _imports("shared") if i.layer != "shared"] == []


def test_the_host_never_imports_a_webview_file() -> None:
    imports = _imports("host")
    assert len(imports) > 50, "too few host imports read: has the import syntax changed?"
    assert [i.label for i in imports if i.layer == "webview"] == []


def test_the_reader_sees_a_crossing_import() -> None:
    """The check itself: an import of a host file written as the webview would write it."""
    source = "import { x } from '../chat/convert';\nexport type { Y } from '../shared/text';\n"
    assert IMPORT.findall(source) == ["../chat/convert", "../shared/text"]
    assert _layer_of(Path("chat/convert")) == "host"

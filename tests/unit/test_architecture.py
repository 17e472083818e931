"""The import direction of docs/architecture.md: every layer imports only the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dsh_sidecar

PACKAGE = Path(dsh_sidecar.__file__).parent
FOUNDATION = {"errors", "jsutil", "model", "zones", "config", "fs"}
ALLOWED: dict[str, set[str]] = {
    **{name: FOUNDATION for name in FOUNDATION},
    "sources": FOUNDATION,
    "invariants": FOUNDATION | {"sources"},
    "sessions": FOUNDATION | {"sources"},
    "protocol": FOUNDATION,
    "lsp": FOUNDATION | {"sources", "invariants", "sessions", "protocol"},
}
WIRE_LIBRARIES = {"pygls", "lsprotocol"}
WIRE_LAYERS = {"lsp", "cli", "__main__"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imports_of(path: Path) -> set[str]:
    """Absolute dotted names imported by one module (relative imports resolved)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
                found.add(module)
                if not node.module:  # ``from . import x`` names submodules
                    found.update(f"{module}.{alias.name}" for alias in node.names)
            elif node.module == "dsh_sidecar":  # ``from dsh_sidecar import errors``
                found.update(f"dsh_sidecar.{alias.name}" for alias in node.names)
            elif node.module:
                found.add(node.module)
    return found


def target_layer(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "dsh_sidecar" or len(parts) == 1:
        return None
    return parts[1]


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_module_imports_only_lower_layers(path: Path) -> None:
    layer = layer_of(path)
    names = imports_of(path)
    if layer not in WIRE_LAYERS:
        wire = sorted(n for n in names if n.split(".")[0] in WIRE_LIBRARIES)
        assert not wire, f"{layer} must not import the LSP libraries: {wire}"
    if layer in {"cli", "__main__", "__init__"}:
        return
    allowed = ALLOWED[layer] | {layer}
    upward = sorted(n for n in names if (t := target_layer(n)) is not None and t not in allowed)
    assert not upward, f"{layer} imports a layer above it: {upward}"


def test_the_scan_sees_real_imports() -> None:
    # Guards the guard: a scan that found nothing would pass every check above.
    service = imports_of(PACKAGE / "sessions" / "service.py")
    assert "dsh_sidecar.sources.agent_instructions.compose" in service
    assert "dsh_sidecar.sessions.store" in service  # ``from .store import ...``
    assert "dsh_sidecar.errors" in service  # ``from dsh_sidecar import errors``
    assert any(n.startswith("pygls") for m in (PACKAGE / "lsp").glob("*.py") for n in imports_of(m))

"""The import direction of docs/architecture.md: fs, config ← sources ← sessions ← lsp;
foundation, sources ← protocol ← lsp, cli; nothing below lsp/ imports pygls."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "dsh_sidecar"
BOTTOM = {
    "fs",
    "config",
    "errors",
    "jsutil",
    "identity_memo",
    "model",
    "zones",
    "private_paths",
    "rule_sets",
    "__init__",
}
# What each layer may import from inside the package (by top-level module name).
ALLOWED = {
    "bottom": BOTTOM,
    "sources": BOTTOM | {"sources"},
    "invariants": BOTTOM | {"sources", "invariants"},
    "sessions": BOTTOM | {"sources", "invariants", "sessions"},
    "agents": {"agents", "__init__"},
    "explain": BOTTOM | {"sources", "agents", "explain"},
    # The wire types and the one mapping from domain objects to them (for the LSP and the CLI).
    "protocol": BOTTOM | {"sources", "protocol"},
    # The read-only requests over snapshots, between lsp/ and sessions/ + explain/.
    "queries": BOTTOM | {"sources", "sessions", "agents", "explain", "protocol", "queries"},
    "lsp": BOTTOM
    | {"sources", "invariants", "sessions", "agents", "explain", "protocol", "queries", "lsp"},
    # Agent hooks drive sessions/ as the LSP handlers do, beside lsp/ and without it.
    "hooks": BOTTOM | {"sources", "sessions", "agents", "explain", "hooks"},
    "cli": BOTTOM
    | {"sources", "sessions", "agents", "explain", "protocol", "queries", "lsp", "hooks", "cli"}
    | {"launch"},
}
# Wire libraries and the layers that may use them (protocol/ may describe types with lsprotocol).
WIRE_LIBRARIES = {
    "pygls": {"lsp", "cli"},
    "pytest_lsp": {"lsp", "cli"},
    "lsprotocol": {"lsp", "cli", "protocol"},
}


def layer_of(path: Path, package: Path) -> str:
    top = path.relative_to(package).parts[0].removesuffix(".py")
    if top in ("__main__", "launch"):
        return "cli"
    return "bottom" if top in BOTTOM else top


def imported_names(path: Path, package: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's own package
                parts = list(path.relative_to(package).parent.parts)
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(["dsh_sidecar", *parts, *filter(None, [node.module])])
            elif node.module:
                base = node.module
            else:
                continue
            # ``from dsh_sidecar import sessions`` imports the sessions layer, not the package.
            if base == "dsh_sidecar":
                names.extend(f"dsh_sidecar.{alias.name}" for alias in node.names)
            else:
                names.append(base)
    return names


def violations(path: Path, package: Path) -> list[str]:
    layer = layer_of(path, package)
    found = []
    for name in imported_names(path, package):
        root, *rest = name.split(".")
        if root in WIRE_LIBRARIES and layer not in WIRE_LIBRARIES[root]:
            found.append(f"{path.name} imports {name}: {root} belongs to the wire layer")
        if root == "dsh_sidecar" and rest and rest[0] not in ALLOWED[layer]:
            found.append(f"{layer} module {path.name} imports {name}")
    return found


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_module_respects_the_import_direction(path: Path) -> None:
    assert violations(path, PACKAGE) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "sessions/bad.py",
            "from dsh_sidecar.lsp.server import serve\n",
            "sessions module bad.py imports dsh_sidecar.lsp.server",
        ),
        (
            "sources/bad.py",
            "from ..sessions import service\n",
            "sources module bad.py imports dsh_sidecar.sessions",
        ),
        (
            "fs.py",
            "import pygls.uris\n",
            "fs.py imports pygls.uris: pygls belongs to the wire layer",
        ),
        (
            "protocol/bad.py",
            "from dsh_sidecar.sessions.service import ScopesReport\n",
            "protocol module bad.py imports dsh_sidecar.sessions.service",
        ),
        (
            "protocol/bad.py",
            "from pygls.protocol import default_converter\n",
            "bad.py imports pygls.protocol: pygls belongs to the wire layer",
        ),
        (
            "agents/bad.py",
            "from dsh_sidecar.fs import LOCAL_FS\n",
            "agents module bad.py imports dsh_sidecar.fs",
        ),
        (
            "explain/bad.py",
            "from dsh_sidecar.sessions.service import SessionService\n",
            "explain module bad.py imports dsh_sidecar.sessions.service",
        ),
    ],
)
def test_the_checker_reports_an_upward_import(
    tmp_path: Path, module: str, source: str, expected: str
) -> None:
    path = tmp_path / module
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    assert violations(path, tmp_path) == [expected]


def test_the_hook_path_loads_neither_the_server_nor_the_wire_libraries(tmp_path: Path) -> None:
    """One hook event in a fresh interpreter, through the console script's entry: what it
    imported is checked after it answered (docs/architecture.md, "The agent hook path")."""
    import json
    import subprocess
    import sys

    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / "AGENTS.md").write_text("rule\n")
    (project / "CLAUDE.md").write_text("claude rule\n")  # so Claude Code leaves AGENTS.md to us
    event = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(project)}
    script = (
        "import io, sys\n"
        "from dsh_sidecar.launch import main\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))\n"
        "main(['hook', '--agent', 'claude'])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('pygls', 'lsprotocol', 'cattrs') or m.startswith(('dsh_sidecar.lsp',"
        " 'dsh_sidecar.protocol', 'dsh_sidecar.cli')))\n"
        "print('LOADED', loaded)\n"
    )
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(event)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    answer, loaded = done.stdout.rsplit("LOADED ", 1)
    assert json.loads(answer)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert loaded.strip() == "[]"

"""The VS Code extension's method table (vscode-extension/src/methods.ts) mirrors the server's
(server/dsh_sidecar/protocol/methods.py): same constant names, same method strings, same groups."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PY_TABLE = REPO / "server" / "dsh_sidecar" / "protocol" / "methods.py"
TS_TABLE = REPO / "vscode-extension" / "src" / "methods.ts"
GROUPS = ("REQUESTS", "NOTIFICATIONS", "SERVER_NOTIFICATIONS")


def parse_python(path: Path) -> tuple[dict[str, object], dict[str, list[str]]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants: dict[str, object] = {}
    groups: dict[str, list[str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        if isinstance(node.value, ast.Constant):
            constants[target.id] = node.value.value
        elif target.id in GROUPS and isinstance(node.value, ast.Tuple):
            names = []
            for elt in node.value.elts:
                assert isinstance(elt, ast.Name), f"{target.id} must list constant names"
                names.append(elt.id)
            groups[target.id] = names
    return constants, groups


_TS_CONST = re.compile(r"^export const ([A-Z][A-Z0-9_]*) = ('([^']*)'|(\d+));", re.M)
_TS_GROUP = re.compile(r"^export const ([A-Z][A-Z0-9_]*) = \[([^\]]*)\] as const;", re.M)


def parse_typescript(path: Path) -> tuple[dict[str, object], dict[str, list[str]]]:
    text = path.read_text(encoding="utf-8")
    constants: dict[str, object] = {}
    for m in _TS_CONST.finditer(text):
        constants[m.group(1)] = m.group(3) if m.group(3) is not None else int(m.group(4))
    groups: dict[str, list[str]] = {}
    for m in _TS_GROUP.finditer(text):
        if m.group(1) in GROUPS:
            groups[m.group(1)] = [n.strip() for n in m.group(2).split(",") if n.strip()]
    return constants, groups


def test_both_tables_parse_to_something() -> None:
    py_consts, py_groups = parse_python(PY_TABLE)
    ts_consts, ts_groups = parse_typescript(TS_TABLE)
    # A parser that silently found nothing would make the comparison below vacuous.
    assert len([v for v in py_consts.values() if isinstance(v, str)]) >= 10
    assert len([v for v in ts_consts.values() if isinstance(v, str)]) >= 10
    assert set(py_groups) == set(GROUPS) == set(ts_groups)


def test_method_constants_match() -> None:
    py_consts, _ = parse_python(PY_TABLE)
    ts_consts, _ = parse_typescript(TS_TABLE)
    py_methods = {k: v for k, v in py_consts.items() if isinstance(v, str)}
    ts_methods = {k: v for k, v in ts_consts.items() if isinstance(v, str)}
    only_py = sorted(set(py_methods) - set(ts_methods))
    only_ts = sorted(set(ts_methods) - set(py_methods))
    assert not only_py, f"in methods.py but not methods.ts: {only_py}"
    assert not only_ts, f"in methods.ts but not methods.py: {only_ts}"
    differing = {
        k: (py_methods[k], ts_methods[k]) for k in py_methods if py_methods[k] != ts_methods[k]
    }
    assert not differing, f"different method strings (python, typescript): {differing}"
    assert py_consts.get("PROTOCOL_VERSION") == ts_consts.get("PROTOCOL_VERSION")


def test_groups_match_and_cover_every_method() -> None:
    py_consts, py_groups = parse_python(PY_TABLE)
    _, ts_groups = parse_typescript(TS_TABLE)
    for group in GROUPS:
        assert py_groups[group] == ts_groups[group], f"{group} differs"
    grouped = [name for g in GROUPS for name in ts_groups[g]]
    methods = sorted(k for k, v in py_consts.items() if isinstance(v, str) and v.startswith("dsh/"))
    assert sorted(grouped) == methods, "every dsh/ method belongs to exactly one group"
    assert len(grouped) == len(set(grouped))


def test_the_comparison_catches_drift(tmp_path: Path) -> None:
    """The parser really reads the TypeScript: a changed or missing entry shows up."""
    drifted = TS_TABLE.read_text(encoding="utf-8").replace(
        "export const SCOPES = 'dsh/scopes';", "export const SCOPES = 'dsh/scope';"
    )
    assert drifted != TS_TABLE.read_text(encoding="utf-8")
    path = tmp_path / "methods.ts"
    path.write_text(drifted, encoding="utf-8")
    consts, _ = parse_typescript(path)
    assert consts["SCOPES"] == "dsh/scope"

"""``compactPaths`` (docs/protocol.md, "Compact paths"): each file of a chain without the paths a
client works out from its ``scope`` and the answer's ``projectRoot``.

The rule is checked both ways: a field is left out exactly when the client's rule gives it back,
so expanding a compact answer by the rule always gives the full answer. Checked on named cases
and on generated trees (odd directory names, every kind of instruction file, a user-global
file), through the same queries ``dsh/scopes`` and ``dsh/context/preview`` answer with.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.sessionkit import Kit

from dsh_sidecar.protocol import mapping
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.protocol.encode import to_json
from dsh_sidecar.queries.desk import Queries


def rule_display_path(scope: str) -> str:
    """The client's rule, written again here from the doc (not imported from the server)."""
    directory, _, name = scope.partition("\0")
    return name if directory == "." else directory + "/" + name


def expanded(result: dict[str, Any]) -> dict[str, Any]:
    """A compact answer with its paths put back, key order as the full answer has it."""
    files = []
    for file in result["files"]:
        display = file.get("displayPath", rule_display_path(file["scope"]))
        path = file.get("path", result["projectRoot"] + "/" + display)
        rest = {k: v for k, v in file.items() if k not in ("path", "displayPath")}
        files.append({"path": path, "displayPath": display, **rest})
    return {**result, "files": files}


def assert_left_out_exactly_where_derivable(result: dict[str, Any]) -> None:
    for file in result["files"]:
        rule = rule_display_path(file["scope"])
        if "displayPath" in file:
            assert file["displayPath"] != rule, file
        display = file.get("displayPath", rule)
        if "path" in file:
            assert file["path"] != result["projectRoot"] + "/" + display, file


def scope_file(path: str, display: str, scope: str) -> wt.ScopeFile:
    return wt.ScopeFile(path=path, display_path=display, scope=scope, state="included", bytes=3)


@pytest.mark.parametrize(
    ("root", "path", "display", "scope", "kept"),
    [
        ("/p", "/p/AGENTS.md", "AGENTS.md", ".\0AGENTS.md", {}),
        ("/p", "/p/a b/é/CLAUDE.md", "a b/é/CLAUDE.md", "a b/é\0CLAUDE.md", {}),
        ("/p", "/p/pkg/.claude/CLAUDE.md", "pkg/.claude/CLAUDE.md", "pkg\0.claude/CLAUDE.md", {}),
        # The user-global file: neither follows from its scope key.
        (
            "/p",
            "/home/u/.dsh/AGENTS.md",
            "$DSH_HOME/AGENTS.md",
            "user-global\0AGENTS.md",
            {"path": "/home/u/.dsh/AGENTS.md", "displayPath": "$DSH_HOME/AGENTS.md"},
        ),
        # A project at / : "/" + "/" + name is not the path, so the path is sent.
        ("/", "/AGENTS.md", "AGENTS.md", ".\0AGENTS.md", {"path": "/AGENTS.md"}),
        # A display path the rule would not give back is sent, and so the path follows it.
        ("/p", "/p/x/AGENTS.md", "x/AGENTS.md", "y\0AGENTS.md", {"displayPath": "x/AGENTS.md"}),
    ],
)
def test_a_field_is_left_out_only_when_the_rule_gives_it_back(
    root: str, path: str, display: str, scope: str, kept: dict[str, str]
) -> None:
    full = scope_file(path, display, scope)
    compact = to_json(mapping.compact_file(full, root))
    assert {k: compact[k] for k in ("path", "displayPath") if k in compact} == kept
    assert compact["scope"] == scope and compact["state"] == "included" and compact["bytes"] == 3
    answer = {"projectRoot": root, "files": [compact]}
    assert expanded(answer)["files"] == [to_json(full)]


def test_only_the_chain_files_change() -> None:
    imported = wt.ImportedFile(
        path="/p/docs/x.md",
        display_path="docs/x.md",
        importer="/p/AGENTS.md",
        state="imported",
        depth=1,
    )
    full = wt.ScopeFile(
        path="/p/AGENTS.md",
        display_path="AGENTS.md",
        scope=".\0AGENTS.md",
        state="included",
        bytes=3,
        digest="ab" * 20,
        target="/elsewhere/AGENTS.md",
        imports=[imported],
    )
    compact = to_json(mapping.compact_file(full, "/p"))
    assert compact == {k: v for k, v in to_json(full).items() if k not in ("path", "displayPath")}
    assert list(compact) == ["scope", "state", "bytes", "digest", "target", "imports"]


async def both(kit: Kit, directory: Path, source: Path) -> list[tuple[Any, Any]]:
    """(full, compact) JSON of dsh/scopes of ``source`` and dsh/context/preview of ``directory``."""
    svc = kit.service()
    try:
        queries = Queries(svc)
        pairs = []
        for compact in (False, True):
            scopes = await queries.scopes_result(source.as_uri(), compact)
            preview = await queries.preview_result(str(directory), compact)
            pairs.append((to_json(scopes), to_json(preview)))
        return list(zip(pairs[0], pairs[1], strict=True))
    finally:
        await kit.close()


async def test_a_project_answer_carries_each_path_once(tmp_path: Path) -> None:
    kit = Kit(tmp_path, **CONVENTIONS)
    for rel in ("AGENTS.md", "pkg/CLAUDE.md", "pkg/AGENTS.local.md", ".claude/rules/r.md"):
        kit.write(rel, f"rule of {rel}\n")
    kit.home.mkdir()
    (kit.home / "AGENTS.md").write_text("everywhere\n")
    source = kit.write("pkg/src/main.py", "x = 1\n")
    for full, compact in await both(kit, source.parent, source):
        assert expanded(compact) == full
        sent = {
            f["scope"]: [k for k in ("path", "displayPath") if k in f] for f in compact["files"]
        }
        assert sent == {
            "user-global\0AGENTS.md": ["path", "displayPath"],  # neither follows from the key
            ".\0AGENTS.md": [],
            "pkg\0CLAUDE.md": [],
            "pkg\0AGENTS.local.md": [],
            # A rule file's key names its rule set, so its display path is sent; its path is
            # the project root and that display path.
            "rules:claude\0.claude/rules/r.md": ["displayPath"],
        }


NAME = st.text(
    alphabet=st.sampled_from([*"ab .-_~é日$%#@\\'\"", "\u202e", "\t"]),
    min_size=1,
    max_size=6,
).filter(lambda n: n not in (".", "..") and not n.startswith(".git"))
FILES = st.sets(
    st.sampled_from(
        [
            "AGENTS.md",
            "CLAUDE.md",
            "AGENTS.local.md",
            "CLAUDE.local.md",
            "AGENTS.override.md",
            ".claude/rules/r.md",
            ".cursor/rules/r.mdc",
            ".github/instructions/r.instructions.md",
            ".github/copilot-instructions.md",
        ]
    ),
    max_size=6,
)
# Every convention read, so rule files (a name with slashes in its scope key) and overrides are
# on the chain too.
CONVENTIONS = {"ruleSets": ["copilot", "claude", "cursor"], "overrideFiles": True}


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    levels=st.lists(st.tuples(NAME, FILES), min_size=0, max_size=5),
    top=FILES,
    user_global=st.booleans(),
)
def test_expanding_a_compact_answer_gives_the_full_one(
    levels: list[tuple[str, set[str]]], top: set[str], user_global: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kit = Kit(Path(tmp), **CONVENTIONS)
        rel = ""
        for name in sorted(top):
            kit.write(name, f"top {name}\n")
        for directory, names in levels:
            rel = f"{rel}{directory}/"
            for name in sorted(names):
                kit.write(rel + name, f"{rel}{name}\n")
        if user_global:
            kit.home.mkdir()
            (kit.home / "AGENTS.md").write_text("everywhere\n")
        source = kit.write(rel + "main.py", "x = 1\n")
        for full, compact in asyncio.run(both(kit, source.parent, source)):
            assert expanded(compact) == full
            assert_left_out_exactly_where_derivable(compact)

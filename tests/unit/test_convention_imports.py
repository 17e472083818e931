"""instructions.imports: Claude Code's @path imports, expanded into the importing scope, bounded,
confined, never fatal, and watched by the version fast path."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.instrkit import INTRO, instructions, load, states, write_tree
from tests.support.sessionkit import Kit, all_changes, frame, opened, replace_text, start, step

from dsh_sidecar.fs import LocalFileSystem, Probe, ReadResult
from dsh_sidecar.sources.agent_instructions.digests import sha1_hex

IMPORTS = instructions(imports=True)


def records(result, path: str) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    entry = next(e for e in result.entries if e.candidate.display_path == path)
    return [(r.display, r.state, r.depth) for r in entry.imports]


def test_imports_follow_the_importing_file_and_count_in_its_digest(tmp_path: Path) -> None:
    claude = (
        "Read @docs/style.md first.\n"
        "Not `@docs/span.md`, nor\n```\n@docs/fence.md\n```\nnor @alice or me@example.com.\n"
    )
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/CLAUDE.md": claude,
            "p/docs/style.md": "Style: @more.md\n",
            "p/docs/more.md": "More.\n",
            "p/docs/span.md": "span\n",
            "p/docs/fence.md": "fence\n",
        },
    )
    result = load(tmp_path / "p", tmp_path / "home", IMPORTS)
    expanded = (
        claude + "\nImported from: docs/style.md\n\nStyle: @more.md\n"
        "\nImported from: docs/more.md\n\nMore.\n"
    )
    assert result.text == frame(f"{INTRO}\n\nInstructions from: CLAUDE.md\n\n{expanded}")
    (loaded,) = result.retained
    assert loaded.digest == sha1_hex(expanded)
    assert records(result, "CLAUDE.md") == [
        ("docs/style.md", "imported", 1),
        ("docs/more.md", "imported", 2),
    ]
    # Every target looked at is watched, an absent one too (``alice`` would be imported once
    # a file of that name appears); the code spans' and fence's paths are not imports at all.
    assert {os.path.basename(p): v == "" for p, v in loaded.deps} == {
        "style.md": False,
        "more.md": False,
        "alice": True,
    }


def test_off_an_import_is_just_text(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/CLAUDE.md": "See @x.md\n", "p/x.md": "x\n"})
    result = load(tmp_path / "p", tmp_path / "home")
    assert result.text == frame(f"{INTRO}\n\nInstructions from: CLAUDE.md\n\nSee @x.md\n")
    assert result.entries[0].imports == () and result.retained[0].deps == ()
    assert '"imports"' not in result.identity


def test_five_hops_and_no_more(tmp_path: Path) -> None:
    files = {"p/.git/": "", "p/AGENTS.md": "@d1.md\n"}
    for n in range(1, 8):
        files[f"p/d{n}.md"] = f"level {n} @d{n + 1}.md\n"
    write_tree(tmp_path, files)
    result = load(tmp_path / "p", tmp_path / "home", IMPORTS)
    assert records(result, "AGENTS.md") == [
        ("d1.md", "imported", 1),
        ("d2.md", "imported", 2),
        ("d3.md", "imported", 3),
        ("d4.md", "imported", 4),
        ("d5.md", "imported", 5),
        ("d6.md", "too-deep", 6),
    ]
    assert "level 5" in result.text and "level 6" not in result.text


def test_cycles_missing_files_and_chain_files_add_nothing(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "agents\n",
            "p/CLAUDE.md": "@AGENTS.md\n@a.md\n@missing/x.md\n@a.md again, @c.md\n",
            "p/a.md": "a @b.md @c.md\n",
            "p/b.md": "b @a.md @CLAUDE.md\n",
            "p/c.md": "c\n",
        },
    )
    result = load(tmp_path / "p", tmp_path / "home", IMPORTS)
    # A second @a.md in the same file is the same import (no record); @c.md, already imported
    # through a.md, adds nothing the second time.
    assert records(result, "CLAUDE.md") == [
        ("AGENTS.md", "in-chain", 1),
        ("a.md", "imported", 1),
        ("b.md", "imported", 2),
        ("a.md", "cycle", 3),
        ("CLAUDE.md", "cycle", 3),
        ("c.md", "imported", 2),
        ("missing/x.md", "missing", 1),
        ("c.md", "repeated", 1),
    ]
    assert result.text.count("\nc\n") == 1
    entry = result.entries[1]
    cycle = entry.imports[3]
    assert cycle.reason == "import cycle: CLAUDE.md -> a.md -> b.md -> a.md"
    assert states(result) == [("AGENTS.md", "included"), ("CLAUDE.md", "included")]
    assert result.text.count("agents\n") == 1  # @AGENTS.md added nothing


def test_a_project_files_imports_stay_in_the_project(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "outside/secret.md": "SECRET\n",
            "home/notes.md": "NOTES\n",
            "p/AGENTS.md": "@../outside/secret.md\n@~/notes.md\n@link.md\n",
        },
    )
    (tmp_path / "p" / "link.md").symlink_to(tmp_path / "outside" / "secret.md")
    result = load(tmp_path / "p", tmp_path / "dsh", IMPORTS, os_home=str(tmp_path / "home"))
    assert [(r.state, r.target) for r in result.entries[0].imports] == [
        ("outside", str(tmp_path / "outside" / "secret.md")),
        ("outside", str(tmp_path / "home" / "notes.md")),
        ("outside", str(tmp_path / "outside" / "secret.md")),
    ]
    assert "SECRET" not in result.text and "NOTES" not in result.text
    allowed = instructions(imports=True, allowedSymlinkTargets=[str(tmp_path / "outside")])
    opened = load(tmp_path / "p", tmp_path / "dsh", allowed, os_home=str(tmp_path / "home"))
    assert opened.text.count("SECRET") == 1  # the second spelling is the same file: repeated
    assert [r.state for r in opened.entries[0].imports] == ["imported", "outside", "repeated"]


def test_the_user_global_files_imports_may_reach_the_home_directory(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "home/notes.md": "NOTES\n",
            "outside/x.md": "X\n",
            "dsh/AGENTS.md": "@~/notes.md @../outside/x.md\n",
        },
    )
    result = load(tmp_path / "p", tmp_path / "dsh", IMPORTS, os_home=str(tmp_path / "home"))
    assert [(r.display, r.state) for r in result.entries[0].imports] == [
        ("~/notes.md", "imported"),
        (str(tmp_path / "outside" / "x.md"), "outside"),
    ]
    assert "Imported from: ~/notes.md\n\nNOTES\n" in result.text


def test_unreadable_and_oversized_imports_are_reported_not_fatal(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "@bin.md @big.md @ok.md\n",
            "p/bin.md": b"\x00\x01",
            "p/big.md": "x" * 300,
            "p/ok.md": "ok\n",
        },
    )
    os.mkfifo(tmp_path / "p" / "fifo.md")
    (tmp_path / "p" / "AGENTS.md").write_text("@bin.md @big.md @fifo.md @ok.md\n")
    result = load(tmp_path / "p", tmp_path / "home", instructions(imports=True, maxSourceBytes=200))
    assert [(r.display, r.state) for r in result.entries[0].imports] == [
        ("bin.md", "unreadable"),
        ("big.md", "unreadable"),
        ("fifo.md", "unreadable"),
        ("ok.md", "imported"),
    ]
    assert result.entries[0].imports[1].reason == "oversized: 300 bytes"
    assert result.entries[0].imports[2].reason == "not a regular file"
    assert "Imported from: ok.md\n\nok\n" in result.text


def test_the_expanded_file_stays_within_max_source_bytes(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "@a.md @b.md\n",
            "p/a.md": "a" * 60,
            "p/b.md": "b" * 60,
        },
    )
    result = load(tmp_path / "p", tmp_path / "home", instructions(imports=True, maxSourceBytes=120))
    assert [r.state for r in result.entries[0].imports] == ["imported", "over-budget"]
    assert result.retained[0].bytes <= 120


# --- sessions: an imported file's edit is a replace of its importer ----------------------------


class CountingFS(LocalFileSystem):
    def __init__(self) -> None:
        self.reads: list[str] = []

    def read_text(self, probe: Probe, max_source_bytes: int, **kwargs: object) -> ReadResult:
        self.reads.append(os.path.basename(probe.path))
        return super().read_text(probe, max_source_bytes, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path, imports=True)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/CLAUDE.md", "pkg: @style.md @later.md\n")
    k.write("pkg/style.md", "style v1\n")
    yield k
    await k.close()


async def test_editing_an_imported_file_replaces_its_importer(kit: Kit) -> None:
    fs = CountingFS()
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.py"}, False)
    (entered,) = await step(svc, sid, 1, 2)
    assert "Imported from: pkg/style.md\n\nstyle v1\n" in entered.text
    # A warm touch confirms the scope and its import by their versions, reading nothing.
    fs.reads.clear()
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/a.py"}, False)
    assert await svc.pending(sid) == []
    assert fs.reads == []
    kit.write("pkg/style.md", "style v2\n")
    svc.tool_result(sid, "t3", None, "read", {"file_path": "pkg/a.py"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == replace_text(
        "pkg/CLAUDE.md", "pkg: @style.md @later.md\n\nImported from: pkg/style.md\n\nstyle v2\n"
    )
    await step(svc, sid, 1, 3)
    # A missing import that appears changes the importer too.
    kit.write("pkg/later.md", "later\n")
    svc.tool_result(sid, "t4", None, "read", {"file_path": "pkg/a.py"}, False)
    assert all_changes(await svc.pending(sid)) == [("replace", "pkg/CLAUDE.md")]
    assert "Imported from: pkg/later.md\n\nlater\n" in (await svc.pending(sid))[0].text


async def test_a_baseline_import_edit_is_found_by_the_next_step(kit: Kit) -> None:
    kit.write("AGENTS.md", "root: @shared.md\n")
    kit.write("shared.md", "shared v1\n")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    kit.write("shared.md", "shared v2\n")
    # Any touch reconciles the baseline's scopes: the importer is replaced, not its import.
    svc.tool_result(sid, "t1", None, "read", {"file_path": "x.py"}, False)
    assert all_changes(await svc.pending(sid)) == [("replace", "AGENTS.md")]
    entered = await step(svc, sid, 1, 2)
    assert all_changes(entered) == [("replace", "AGENTS.md")]
    assert "Imported from: shared.md\n\nshared v2\n" in entered[0].text

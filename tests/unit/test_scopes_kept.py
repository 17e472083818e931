"""``dsh/scopes``, ``dsh/context/preview``, hover and ``dsh/explain`` keep their answers per directory (per file for
explain) while the files they saw are unchanged (``queries/scopes.py``, ``sources/observed.py``).

Every test first shows the answer is kept (a second request computes nothing), then changes the
tree as an editor, a checkout or a hostile repository would and checks the next answer is the
fresh one, equal to what a service that never kept anything says. The racy-timestamp window is
closed (files here are written a moment before they are looked at, which would otherwise keep
nothing and leave the invalidation untested; tests/unit/test_observed.py checks the window), and
the machine outside each test's own directory is held still (``OutsideHeldStill``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.sessionkit import Kit, opened, start

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.explain import Explanation
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.queries.desk import Queries
from dsh_sidecar.queries.scopes import ScopesReport
from dsh_sidecar.sessions.service import SessionService
from dsh_sidecar.sources import observed


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(observed, "RACY_WINDOW_NS", 0)
    yield


class OutsideHeldStill(LocalFileSystem):
    """The real filesystem inside ``inside``; outside it, each path as its first ``stat`` saw it.

    A kept answer rests on the ``stat`` signatures of every directory its computation looked
    into, and those reach well past a test's tree: explain models Claude Code, which reads
    CLAUDE.md in every directory up to /, and the managed and user-global files in /etc and
    the home directory; scopes reads the user's git excludes in the home directory. So when any
    other process adds or removes an entry in /tmp, /tmp/pytest-of-<user>, /etc or $HOME
    between two requests, the second one rightly computes afresh, and a test counting builds
    saw 2 where it expected 1 (on a busy machine, where other test sessions start and end and
    the two requests are further apart). Every change these tests make is inside their own
    directory; the rest of the machine is held as it was first seen, as on a quiet one.
    """

    def __init__(self, inside: Path) -> None:
        self.inside = str(inside)
        self.first: dict[str, os.stat_result | tuple[int, str]] = {}

    def stat(self, path: str) -> os.stat_result:
        if path == self.inside or path.startswith(self.inside + os.sep):
            return super().stat(path)
        if path not in self.first:
            try:
                self.first[path] = super().stat(path)
            except OSError as exc:
                self.first[path] = (exc.errno or 0, exc.strerror or "")
        found = self.first[path]
        if isinstance(found, os.stat_result):
            return found
        raise OSError(found[0], found[1], path)


_HELD: dict[Path, OutsideHeldStill] = {}


def service(kit: Kit) -> SessionService:
    """A new service over ``kit`` whose world outside ``kit.tmp`` holds still (one view per
    test, so the kept and the fresh services see the same outside)."""
    held = _HELD.get(kit.tmp)
    if held is None:
        held = _HELD[kit.tmp] = OutsideHeldStill(kit.tmp)
    return kit.service(fs=held)


@pytest.fixture
async def kit(tmp_path: Path) -> Any:
    kit = Kit(tmp_path)
    kit.write("AGENTS.md", "root rule\n")
    kit.write("pkg/AGENTS.md", "pkg rule\n")
    kit.write("pkg/src/main.py", "x = 1\n")
    yield kit
    await kit.close()


def states(report: ScopesReport) -> dict[str, tuple[str, int | None]]:
    return {e.candidate.display_path: (e.state, e.bytes) for e in report.load.entries}


_QUERIES: dict[int, Queries] = {}


def ask(svc: SessionService) -> Queries:
    """The one ``Queries`` of ``svc`` (its caches are what the tests count)."""
    found = _QUERIES.get(id(svc))
    if found is None or found.service is not svc:
        found = _QUERIES[id(svc)] = Queries(svc)
    return found


def builds(svc: SessionService) -> int:
    return ask(svc).ask().caches.chains.chains.built


async def fresh(kit: Kit, uri: str) -> ScopesReport:
    """What a service that never kept anything says."""
    return await ask(service(kit)).scopes(uri)


async def kept_then(kit: Kit, uri: str) -> tuple[SessionService, ScopesReport]:
    svc = service(kit)
    first = await ask(svc).scopes(uri)
    again = await ask(svc).scopes(uri)
    assert states(again) == states(first)
    assert builds(svc) == 1, "the second report should have been the kept one"
    return svc, first


def doc(kit: Kit) -> str:
    return str(kit.path("pkg/src/main.py"))


async def test_an_edit_is_seen(kit: Kit) -> None:
    svc, _ = await kept_then(kit, doc(kit))
    kit.write("pkg/AGENTS.md", "pkg rule, now longer\n")
    after = await ask(svc).scopes(doc(kit))
    assert states(after)["pkg/AGENTS.md"] == ("included", len("pkg rule, now longer\n"))
    assert states(after) == states(await fresh(kit, doc(kit)))
    assert builds(svc) == 2


async def test_a_delete_is_seen(kit: Kit) -> None:
    svc, _ = await kept_then(kit, doc(kit))
    kit.remove("pkg/AGENTS.md")
    after = await ask(svc).scopes(doc(kit))
    assert "pkg/AGENTS.md" not in states(after)
    assert states(after) == states(await fresh(kit, doc(kit)))


async def test_a_new_file_is_seen(kit: Kit) -> None:
    svc, first = await kept_then(kit, doc(kit))
    assert "pkg/src/CLAUDE.md" not in states(first)
    kit.write("pkg/src/CLAUDE.md", "src rule\n")
    after = await ask(svc).scopes(doc(kit))
    assert states(after)["pkg/src/CLAUDE.md"] == ("included", len("src rule\n"))


async def test_a_new_project_marker_moves_the_root(kit: Kit) -> None:
    svc, first = await kept_then(kit, doc(kit))
    assert first.project_root == os.path.realpath(kit.root)
    (kit.path("pkg/.git")).mkdir()
    after = await ask(svc).scopes(doc(kit))
    assert after.project_root == os.path.realpath(kit.path("pkg"))
    assert states(after) == states(await fresh(kit, doc(kit)))


async def test_gitignore_changes_are_seen_both_ways(kit: Kit) -> None:
    svc, first = await kept_then(kit, doc(kit))
    assert states(first)["pkg/AGENTS.md"][0] == "included"
    kit.write(".gitignore", "pkg/\n")
    ignored = await ask(svc).scopes(doc(kit))
    assert states(ignored)["pkg/AGENTS.md"][0] == "ignored"
    again = await ask(svc).scopes(doc(kit))
    assert builds(svc) == 2 and states(again) == states(ignored)
    kit.write(".gitignore", "build/\n")
    assert states(await ask(svc).scopes(doc(kit)))["pkg/AGENTS.md"][0] == "included"
    kit.remove(".gitignore")
    kit.write("pkg/.gitignore", "src/\n")
    assert states(await ask(svc).scopes(doc(kit))) == states(await fresh(kit, doc(kit)))


async def test_a_link_re_pointed_outside_is_never_served_stale(kit: Kit) -> None:
    outside = kit.tmp / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    kit.write("shared/rules.md", "shared rule\n")
    link = kit.path("pkg/CLAUDE.md")
    link.symlink_to("../shared/rules.md")
    svc, first = await kept_then(kit, doc(kit))
    assert states(first)["pkg/CLAUDE.md"][0] == "included"
    link.unlink()
    link.symlink_to(outside / "secret.md")
    after = await ask(svc).scopes(doc(kit))
    assert states(after)["pkg/CLAUDE.md"][0] == "outside-project"
    # ... and back inside again.
    link.unlink()
    link.symlink_to("../shared/rules.md")
    assert states(await ask(svc).scopes(doc(kit)))["pkg/CLAUDE.md"][0] == "included"


async def test_a_directory_swapped_for_a_link_outside_is_never_served_stale(kit: Kit) -> None:
    # The file outside is a hard link of the one inside: same inode, same times, same bytes.
    elsewhere = kit.tmp / "elsewhere"
    elsewhere.mkdir()
    os.link(kit.path("pkg/AGENTS.md"), elsewhere / "AGENTS.md")
    uri = str(kit.path("pkg/AGENTS.md"))
    svc, first = await kept_then(kit, uri)
    assert states(first)["pkg/AGENTS.md"][0] == "included"
    kit.path("pkg").rename(kit.path("moved"))
    kit.path("pkg").symlink_to(elsewhere)
    after = await ask(svc).scopes(uri)
    assert states(after) == states(await fresh(kit, uri))
    assert after.directory == os.path.realpath(elsewhere)


async def test_a_directory_moved_out_of_the_project_and_linked_back_is_outside(kit: Kit) -> None:
    # The same directory, inode and entries, now reached through a link: its files live
    # outside the project, which only its real path tells.
    outside = kit.tmp / "outside"
    outside.mkdir()
    uri = str(kit.root)
    svc, first = await kept_then(kit, uri)
    kit.write("pkg/CLAUDE.md", "pkg claude\n")
    kit.path("pkg/CLAUDE.md").unlink()
    svc, first = await kept_then(kit, doc(kit))
    assert states(first)["pkg/AGENTS.md"][0] == "included"
    kit.path("pkg").rename(outside / "pkg")
    kit.path("pkg").symlink_to(outside / "pkg")
    after = await ask(svc).scopes(doc(kit))
    assert states(after) == states(await fresh(kit, doc(kit)))
    assert after.directory == os.path.realpath(outside / "pkg/src")


async def test_the_user_global_file_is_seen(kit: Kit) -> None:
    svc, first = await kept_then(kit, doc(kit))
    assert "~/.dsh/AGENTS.md" not in states(first) and "$DSH_HOME/AGENTS.md" not in states(first)
    kit.home.mkdir(parents=True, exist_ok=True)
    (kit.home / "AGENTS.md").write_text("everywhere\n")
    after = await ask(svc).scopes(doc(kit))
    assert states(after) == states(await fresh(kit, doc(kit)))
    assert len(states(after)) == len(states(first)) + 1


async def test_settings_changes_drop_what_was_kept(kit: Kit) -> None:
    kit.write("pkg/NOTES.md", "notes\n")
    svc, first = await kept_then(kit, doc(kit))
    assert "pkg/NOTES.md" not in states(first)
    svc.update_settings(kit.settings(instructionFileCandidates=["AGENTS.md", "NOTES.md"]))
    after = await ask(svc).scopes(doc(kit))
    assert states(after)["pkg/NOTES.md"] == ("included", len("notes\n"))


async def test_what_sessions_have_active_is_never_kept(kit: Kit) -> None:
    svc, first = await kept_then(kit, doc(kit))
    assert first.active == {}
    sid = await opened(kit, svc)
    await start(svc, sid)
    after = await ask(svc).scopes(doc(kit))
    assert builds(svc) == 1  # the chain is the kept one; who has it active is not
    assert [c.path for c in after.active[sid]] == ["AGENTS.md"]


# --- dsh/explain (and the hover section it feeds) ----------------------------------------------


async def explained(svc: SessionService, path: Path) -> Explanation:
    return await ask(svc).explain(str(path))


def loaded_by(explanation: Explanation, agent: str) -> list[tuple[str, int | None]]:
    return [(f.display_path, f.bytes) for f in explanation.agent(agent).files if f.loaded]


async def test_explain_is_kept_and_sees_edits_and_new_files(kit: Kit) -> None:
    svc = service(kit)
    target = kit.path("pkg/src/main.py")
    first = await explained(svc, target)
    assert (await explained(svc, target)).to_json() == first.to_json()
    assert ask(svc).ask().caches.explained.built == 1
    kit.write("pkg/CLAUDE.md", "claude rule for pkg\n")
    after = await explained(svc, target)
    assert ("pkg/CLAUDE.md", len("claude rule for pkg\n")) in loaded_by(after, "claude")
    assert after.to_json() == (await explained(service(kit), target)).to_json()
    kit.write("pkg/CLAUDE.md", "claude rule for pkg, edited\n")
    assert ("pkg/CLAUDE.md", len("claude rule for pkg, edited\n")) in loaded_by(
        await explained(svc, target), "claude"
    )


async def test_explain_sees_a_new_rule_file_in_a_listed_folder(kit: Kit) -> None:
    svc = service(kit)
    target = kit.path("pkg/src/main.py")
    kit.write(".cursor/rules/style.mdc", "---\nalwaysApply: true\n---\nstyle\n")
    first = await explained(svc, target)
    await explained(svc, target)
    assert ask(svc).ask().caches.explained.built == 1
    kit.write(".cursor/rules/more.mdc", "---\nalwaysApply: true\n---\nmore\n")
    after = await explained(svc, target)
    assert after.to_json() == (await explained(service(kit), target)).to_json()
    assert after.to_json() != first.to_json()


async def test_explain_sees_an_import_target_change(kit: Kit) -> None:
    svc = service(kit)
    target = kit.path("pkg/src/main.py")
    kit.write("CLAUDE.md", "see @docs/extra.md\n")
    kit.write("docs/extra.md", "extra\n")
    first = await explained(svc, target)
    kit.write("docs/extra.md", "extra, and more of it\n")
    after = await explained(svc, target)
    assert after.to_json() != first.to_json()
    assert after.to_json() == (await explained(service(kit), target)).to_json()


async def test_a_rule_file_edited_in_place_is_seen(tmp_path: Path) -> None:
    kit = Kit(tmp_path, ruleSets=["cursor"])
    kit.write("AGENTS.md", "root rule\n")
    kit.write("pkg/src/main.py", "x = 1\n")
    kit.write(".cursor/rules/py.mdc", "---\nglobs: **/*.ts\n---\npython rules\n")
    try:
        svc, first = await kept_then(kit, doc(kit))
        assert ".cursor/rules/py.mdc" not in states(first)
        # Its folder does not change: only the file's own stat tells the edit.
        kit.write(".cursor/rules/py.mdc", "---\nglobs: **/*.py\n---\npython rules\n")
        after = await ask(svc).scopes(doc(kit))
        assert states(after)[".cursor/rules/py.mdc"][0] == "included"
        assert states(after) == states(await fresh(kit, doc(kit)))
    finally:
        await kit.close()


def preview_states(result: Any) -> dict[str, tuple[str, int | None]]:
    return {f.display_path: (f.state, f.bytes) for f in result.files}


async def test_a_preview_is_kept_and_sees_an_edit_a_new_file_and_a_link_outside(kit: Kit) -> None:
    cwd = str(kit.path("pkg/src"))
    svc = service(kit)
    first = await ask(svc).preview_result(cwd)
    assert await ask(svc).preview_result(cwd) is first, "the second preview should be the kept one"
    assert "pkg rule\n" in first.text

    kit.write("pkg/AGENTS.md", "pkg rule, now longer\n")
    edited = await ask(svc).preview_result(cwd)
    assert "pkg rule, now longer\n" in edited.text and "pkg rule\n" not in edited.text
    assert edited == await ask(service(kit)).preview_result(cwd)

    kit.write("pkg/src/CLAUDE.md", "src rule\n")
    added = await ask(svc).preview_result(cwd)
    assert preview_states(added)["pkg/src/CLAUDE.md"] == ("included", len("src rule\n"))

    outside = kit.tmp / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    kit.remove("pkg/src/CLAUDE.md")
    kit.path("pkg/src/CLAUDE.md").symlink_to(outside / "secret.md")
    linked = await ask(svc).preview_result(cwd)
    assert preview_states(linked)["pkg/src/CLAUDE.md"][0] == "outside-project"
    assert "secret" not in linked.text
    assert linked == await ask(service(kit)).preview_result(cwd)


async def test_a_kept_preview_of_a_removed_directory_is_refused(kit: Kit) -> None:
    cwd = kit.path("pkg/src")
    svc = service(kit)
    await ask(svc).preview_result(str(cwd))
    kit.remove("pkg/src/main.py")
    cwd.rmdir()
    with pytest.raises(DshError) as refused:
        await ask(svc).preview_result(str(cwd))
    assert refused.value.code == errors.INVALID_CWD

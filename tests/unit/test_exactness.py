"""Exactness fixes of the instruction engine, each pinned by the case that exposed it: a file
re-created after its removal, a touch of a directory written with a trailing slash, an empty
HOME, and a project-root marker given as an absolute path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.instrkit import instructions, load, run_as_nobody, states, write_tree
from tests.support.sessionkit import (
    Kit,
    all_changes,
    baseline_text,
    opened,
    start,
    step,
)

from dsh_sidecar.config import Settings, os_home, parse_settings, resolve_dsh_home
from dsh_sidecar.sessions.service import SessionService


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path)
    k.write("AGENTS.md", "root rules\n")
    k.write("pkg/AGENTS.md", "pkg rules\n")
    yield k
    await k.close()


# --- a removal is a tombstone --------------------------------------------------------------------


async def test_a_file_removed_then_restored_with_the_same_content_is_set_again(kit: Kit) -> None:
    """``git stash`` / ``git stash pop``: the model was told the file no longer applies, so the
    same bytes coming back are news and must be announced again."""
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert all_changes(await step(svc, sid, 1, 2)) == [("set", "pkg/AGENTS.md")]

    kit.remove("pkg/AGENTS.md")
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert all_changes(await step(svc, sid, 1, 3)) == [("remove", "pkg/AGENTS.md")]

    kit.write("pkg/AGENTS.md", "pkg rules\n")
    svc.tool_result(sid, "t3", None, "read", {"file_path": "pkg/a.ts"}, False)
    pending = await svc.pending(sid)
    assert all_changes(pending) == [("set", "pkg/AGENTS.md")]
    entered = await step(svc, sid, 1, 4)
    assert all_changes(entered) == [("set", "pkg/AGENTS.md")]
    assert "pkg rules" in entered[0].content[0]["text"]


async def test_an_unchanged_file_touched_again_stays_quiet(kit: Kit) -> None:
    """Upstream's rule is kept where it holds: what the model already has in effect is never
    queued a second time."""
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "pkg/a.ts"}, False)
    assert all_changes(await step(svc, sid, 1, 2)) == [("set", "pkg/AGENTS.md")]
    svc.tool_result(sid, "t2", None, "read", {"file_path": "pkg/b.ts"}, False)
    assert await svc.pending(sid) == []
    svc.live[sid].forget_caches()  # a cold cache reads the file and still finds nothing new
    svc.tool_result(sid, "t3", None, "read", {"file_path": "pkg/c.ts"}, False)
    assert await svc.pending(sid) == []


# --- a touch of dir/ is a touch of that directory ----------------------------------------------


@pytest.mark.parametrize("written", ["pkg/", "pkg//", "./pkg/", "pkg/."])
async def test_an_agent_touch_of_a_directory_reaches_its_instructions(
    kit: Kit, written: str
) -> None:
    kit.write("pkg/deep/AGENTS.md", "deep rules\n")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": written}, False)
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_an_editor_touch_of_a_directory_reaches_its_instructions(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    await svc.editor_touch([str(kit.path("pkg")) + "/"])
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_a_file_named_like_a_directory_is_still_a_file(kit: Kit) -> None:
    """Without the trailing slash, ``pkg`` is the file ``pkg`` of the root: nothing below."""
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t", None, "read", {"file_path": "pkgfile"}, False)
    await svc.editor_touch([str(kit.path("pkgfile"))])
    assert await svc.pending(sid) == []


async def test_an_editor_event_on_an_existing_folder_is_a_touch_of_that_folder(kit: Kit) -> None:
    """A folder created or renamed in the editor arrives as a URI without a trailing slash."""
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    await svc.editor_touch([str(kit.path("pkg"))])
    assert all_changes(await svc.pending(sid)) == [("set", "pkg/AGENTS.md")]


async def test_a_project_directory_named_user_global_shares_the_user_global_key(
    kit: Kit,
) -> None:
    """docs/reference/agent-instructions.md, Paths and scopes (scope key): the text is upstream's;
    the changes list one per file, two under the user-global key (upstream lists one for it)."""
    kit.home.mkdir(parents=True)
    (kit.home / "AGENTS.md").write_text("everywhere\n")
    kit.write("user-global/AGENTS.md", "a project directory\n")
    svc = kit.service()
    sid = await opened(kit, svc, kit.path("user-global"))
    (baseline,) = [m for m in await start(svc, sid) if m.source.get("baseline")]
    assert baseline.text == baseline_text(
        [
            ("$DSH_HOME/AGENTS.md", "everywhere\n"),
            ("AGENTS.md", "root rules\n"),
            ("user-global/AGENTS.md", "a project directory\n"),
        ]
    )
    assert [(c["scope"], c["path"]) for c in baseline.source["changes"]] == [
        ("user-global\u0000AGENTS.md", "$DSH_HOME/AGENTS.md"),
        (".\u0000AGENTS.md", "AGENTS.md"),
        ("user-global\u0000AGENTS.md", "user-global/AGENTS.md"),
    ]


# --- an empty HOME counts as unset -------------------------------------------------------------


def _password_home() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_dir


def test_an_empty_home_falls_back_to_the_password_database() -> None:
    home = _password_home()
    assert home and home != "/"
    assert os_home({"HOME": ""}) == home
    assert os_home({}) == home
    assert os_home({"HOME": "/somewhere"}) == "/somewhere"


def test_an_empty_home_gives_the_dsh_home_and_store_under_the_real_home(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = _password_home()
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("DSH_HOME", raising=False)
    assert resolve_dsh_home(None) == os.path.join(home, ".dsh")
    assert resolve_dsh_home("~/x") == os.path.join(home, "x")
    assert Settings().store_path() == os.path.join(home, ".dsh", "sessions.sqlite3")
    tilde_store = parse_settings({"store": {"path": "~/s.sqlite3"}})
    assert tilde_store.store_path() == os.path.join(home, "s.sqlite3")


def test_an_explicit_home_never_needs_the_os_home() -> None:
    """A DSH home or store path that names no ``~`` works even when no home can be found."""
    code = (
        "from dsh_sidecar.config import parse_settings, resolve_dsh_home\n"
        "from dsh_sidecar.errors import ConfigError\n"
        "import os\n"
        "os.environ['HOME'] = ''\n"
        "print(resolve_dsh_home(None, {'DSH_HOME': '/data/dsh'}))\n"
        "print(parse_settings({'store': {'path': '/data/s.sqlite3'}}).store_path({}))\n"
        "try:\n"
        "    resolve_dsh_home(None, {})\n"
        "except ConfigError as exc:\n"
        "    print(exc.key, '|', exc.message)\n"
    )
    # A uid with no entry in the password database: nothing to fall back to.
    out = run_as_nobody(code, uid=54321).splitlines()
    assert out[0] == "/data/dsh"
    assert out[1] == "/data/s.sqlite3"
    key, message = out[2].split(" | ")
    assert key == "instructions.dshHome"
    assert message.startswith("instructions.dshHome: the home directory is unknown")
    assert "set DSH_HOME or instructions.dshHome" in message


async def test_a_service_under_an_empty_home_keeps_its_store_under_the_real_home(
    tmp_path: Path,
) -> None:
    svc = SessionService(
        parse_settings({"store": {"path": str(tmp_path / "s.sqlite3")}}), env={"HOME": ""}
    )
    try:
        assert svc.dsh_home == os.path.join(_password_home(), ".dsh")
        assert svc.os_home == _password_home()
    finally:
        await svc.shutdown()


@pytest.mark.parametrize("started", [False, True])
async def test_a_service_takes_every_home_from_the_environment_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: bool
) -> None:
    # This process's HOME is another directory: nothing of the service may come from it.
    monkeypatch.setenv("HOME", str(tmp_path / "process-home"))
    monkeypatch.delenv("DSH_HOME", raising=False)
    given = tmp_path / "given-home"
    env = {"HOME": str(given)}

    async def service(raw: dict[str, object]) -> SessionService:
        settings = parse_settings(raw)
        if started:
            return await SessionService.start(settings, env=env)
        return SessionService(settings, env=env)

    defaults = await service({})
    tilde = await service({"instructions": {"dshHome": "~/d"}, "store": {"path": "~/s.sqlite3"}})
    try:
        assert defaults.os_home == str(given)
        assert defaults.dsh_home == str(given / ".dsh")
        assert defaults.store.path == str(given / ".dsh" / "sessions.sqlite3")
        assert tilde.dsh_home == str(given / "d")
        assert tilde.store.path == str(given / "s.sqlite3")
    finally:
        await defaults.shutdown()
        await tilde.shutdown()
    assert not (tmp_path / "process-home").exists()


def test_the_cli_under_an_empty_home_names_the_real_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    env["HOME"] = ""
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("DSH_HOME"))
    assert f"{os.path.join(_password_home(), '.dsh')} (default: DSH_HOME is unset)" in line
    assert done.returncode == 0, done.stdout + done.stderr


# --- an absolute project-root marker names a root directory ------------------------------------


def test_an_absolute_marker_is_the_directory_that_is_the_root(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    write_tree(mono, {"AGENTS.md": "mono rules\n", "a/b/AGENTS.md": "b rules\n"})
    settings = instructions(projectRootMarkers=[str(mono)])
    result = load(mono / "a" / "b", tmp_path / "home", settings)
    assert result.project_root == str(mono)
    assert states(result) == [("AGENTS.md", "included"), ("a/b/AGENTS.md", "included")]


def test_an_absolute_marker_elsewhere_marks_nothing_here(tmp_path: Path) -> None:
    """``/etc`` exists, but it is not an ancestor of the session: before, joined to every
    directory as a name, it made each session directory a root of its own."""
    write_tree(tmp_path / "p", {".git/": "", "AGENTS.md": "root\n", "a/AGENTS.md": "a\n"})
    settings = instructions(projectRootMarkers=["/etc", ".git"])
    result = load(tmp_path / "p" / "a", tmp_path / "home", settings)
    assert result.project_root == str(tmp_path / "p")
    alone = load(tmp_path / "p" / "a", tmp_path / "home", instructions(projectRootMarkers=["/etc"]))
    assert alone.project_root == str(tmp_path / "p" / "a")


def test_an_absolute_marker_is_compared_by_its_real_path(tmp_path: Path) -> None:
    write_tree(tmp_path / "real", {"AGENTS.md": "real root\n", "x/AGENTS.md": "x\n"})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    settings = instructions(projectRootMarkers=[str(tmp_path / "link")])
    result = load(tmp_path / "real" / "x", tmp_path / "home", settings)
    assert result.project_root == str(tmp_path / "real")

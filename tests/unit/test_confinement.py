"""Project instruction files that link outside the project (docs/sources.md, "Symlinks that leave
the project"): hostile trees with real symlinks against the baseline load, the chain report and the
CLI. Sessions and touches are in test_service_confinement.py.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from tests.support.instrkit import INTRO, instructions, load, states, write_tree

from dsh_sidecar.cli import main
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.baseline import (
    INCLUDED,
    BaselineLoad,
    ChainEntry,
    load_document_chain,
)
from dsh_sidecar.sources.agent_instructions.confinement import OUTSIDE_PROJECT

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not for a model\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``p/`` is the project; ``outside/secret`` and ``home/`` (DSH_HOME) are not in it."""
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/CLAUDE.md": "claude rule\n",
            "p/pkg/": "",
            "outside/secret": SECRET,
            "outside/rules/AGENTS.md": "shared rule\n",
            "home/": "",
        },
    )
    return tmp_path


def framed(*sections: tuple[str, str]) -> str:
    body = "\n\n".join([INTRO, *(f"Instructions from: {p}\n\n{c}" for p, c in sections)])
    return f"<system-reminder>\n{body}\n</system-reminder>"


def real(path: Path) -> str:
    return os.path.realpath(path)


def entry(result: BaselineLoad, display: str) -> ChainEntry:
    return next(e for e in result.entries if e.candidate.display_path == display)


# --- what is refused ----------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["relative", "absolute"])
def test_a_link_to_a_file_outside_is_not_read(tree: Path, spelling: str) -> None:
    target = tree / "outside/secret"
    link = "../outside/secret" if spelling == "relative" else str(target)
    (tree / "p/AGENTS.md").symlink_to(link)

    result = load(tree / "p", tree / "home")

    assert states(result) == [("AGENTS.md", OUTSIDE_PROJECT), ("CLAUDE.md", INCLUDED)]
    outside = entry(result, "AGENTS.md")
    assert outside.target == real(target)
    assert outside.bytes == len(SECRET)
    assert outside.digest is None  # never read, never hashed
    assert outside.reason == f"links outside the project to {real(target)}"
    assert result.text == framed(("CLAUDE.md", "claude rule\n"))
    assert SECRET not in result.text
    # Not observed (never read), so not an excluded baseline scope either.
    assert result.observed[0].candidate.display_path == "CLAUDE.md"
    assert result.excluded_scopes == frozenset()


def test_a_chain_of_links_that_ends_outside_is_not_read(tree: Path) -> None:
    (tree / "p/docs").mkdir()
    (tree / "p/docs/shared.md").symlink_to("../../outside/secret")  # inside -> outside
    (tree / "p/AGENTS.md").symlink_to("docs/shared.md")  # root -> inside link
    result = load(tree / "p", tree / "home")
    assert states(result)[0] == ("AGENTS.md", OUTSIDE_PROJECT)
    assert entry(result, "AGENTS.md").target == real(tree / "outside/secret")
    assert SECRET not in result.text


def test_a_link_through_a_linked_directory_that_leaves_is_not_read(tree: Path) -> None:
    # vendor/ is a symlink to a directory outside; AGENTS.md points into it by a path that
    # looks internal.
    (tree / "p/vendor").symlink_to(tree / "outside/rules")
    (tree / "p/pkg/AGENTS.md").symlink_to("../vendor/AGENTS.md")
    result = load(tree / "p/pkg", tree / "home")
    assert ("pkg/AGENTS.md", OUTSIDE_PROJECT) in states(result)
    assert entry(result, "pkg/AGENTS.md").target == real(tree / "outside/rules/AGENTS.md")
    assert "shared rule" not in result.text


def test_a_link_into_dsh_home_is_outside_the_project(tree: Path) -> None:
    # DSH_HOME is the user's directory, not the project's: a project file may not reach into it.
    (tree / "home/notes.md").write_text("private notes\n")
    (tree / "p/AGENTS.md").symlink_to("../home/notes.md")
    result = load(tree / "p", tree / "home")
    assert states(result) == [("AGENTS.md", OUTSIDE_PROJECT), ("CLAUDE.md", INCLUDED)]
    assert "private notes" not in result.text


def test_a_link_to_the_user_global_file_itself_is_outside_the_project(tree: Path) -> None:
    (tree / "home/AGENTS.md").write_text("global rule\n")
    (tree / "p/AGENTS.md").symlink_to(tree / "home/AGENTS.md")
    result = load(tree / "p", tree / "home")
    # The user-global slot loads it; the project slot that links to it does not.
    assert states(result) == [
        ("$DSH_HOME/AGENTS.md", INCLUDED),
        ("AGENTS.md", OUTSIDE_PROJECT),
        ("CLAUDE.md", INCLUDED),
    ]
    assert result.text.count("global rule") == 1


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_fifo_behind_a_link_is_absent_and_never_blocks(tree: Path, where: str) -> None:
    fifo = tree / ("p/pipe" if where == "inside" else "outside/pipe")
    os.mkfifo(fifo)
    (tree / "p/AGENTS.md").symlink_to(fifo)
    results: list[BaselineLoad] = []
    worker = threading.Thread(target=lambda: results.append(load(tree / "p", tree / "home")))
    worker.daemon = True
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # release the blocked open so the process can exit, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("loading a chain with a FIFO behind a link blocked")
    (result,) = results
    assert states(result) == [("CLAUDE.md", INCLUDED)]


def test_a_link_to_a_directory_outside_is_absent(tree: Path) -> None:
    (tree / "p/AGENTS.md").symlink_to(tree / "outside/rules")
    assert states(load(tree / "p", tree / "home")) == [("CLAUDE.md", INCLUDED)]


# --- what keeps working -------------------------------------------------------------------------


def test_links_that_stay_inside_the_project_keep_working(tree: Path) -> None:
    write_tree(tree, {"p/docs/agents/shared.md": "shared inside\n"})
    (tree / "p/docs/current").symlink_to("agents")  # a linked directory inside
    (tree / "p/pkg/AGENTS.md").symlink_to("../docs/current/shared.md")  # through it
    (tree / "p/AGENTS.md").symlink_to(tree / "p/pkg/AGENTS.md")  # absolute, chained
    result = load(tree / "p/pkg", tree / "home")
    assert states(result) == [
        ("AGENTS.md", INCLUDED),
        ("CLAUDE.md", INCLUDED),
        ("pkg/AGENTS.md", INCLUDED),
    ]
    assert entry(result, "AGENTS.md").target == real(tree / "p/docs/agents/shared.md")
    assert result.text.count("shared inside") == 2


def test_a_project_reached_through_a_link_keeps_its_inside_links(tree: Path) -> None:
    write_tree(tree, {"p/docs/shared.md": "shared inside\n"})
    (tree / "p/AGENTS.md").symlink_to("docs/shared.md")
    (tree / "alias").symlink_to(tree / "p")
    result = load(tree / "alias", tree / "home")
    assert states(result) == [("AGENTS.md", INCLUDED), ("CLAUDE.md", INCLUDED)]


def test_the_user_global_file_may_link_anywhere(tree: Path) -> None:
    (tree / "home/AGENTS.md").symlink_to(tree / "outside/rules/AGENTS.md")  # dotfiles
    result = load(tree / "p", tree / "home")
    assert states(result) == [("$DSH_HOME/AGENTS.md", INCLUDED), ("CLAUDE.md", INCLUDED)]
    assert "shared rule" in result.text


# --- instructions.allowedSymlinkTargets -----------------------------------------------------------


@pytest.mark.parametrize("spelling", ["absolute", "tilde", "the directory through a link"])
def test_allowed_symlink_targets_allow_a_directory(tree: Path, spelling: str) -> None:
    (tree / "p/AGENTS.md").symlink_to(tree / "outside/rules/AGENTS.md")
    if spelling == "absolute":
        allowed = str(tree / "outside/rules")
    elif spelling == "tilde":
        allowed = "~/rules"  # the home directory given below is tree/outside
    else:
        (tree / "rules-link").symlink_to(tree / "outside/rules")
        allowed = str(tree / "rules-link")
    settings = instructions(allowedSymlinkTargets=[allowed])
    result = load(tree / "p", tree / "home", settings, os_home=str(tree / "outside"))
    assert states(result) == [("AGENTS.md", INCLUDED), ("CLAUDE.md", INCLUDED)]
    assert result.text == framed(("AGENTS.md", "shared rule\n"), ("CLAUDE.md", "claude rule\n"))
    # Another directory outside stays refused.
    (tree / "p/pkg/AGENTS.md").symlink_to(tree / "outside/secret")
    deeper = load(tree / "p/pkg", tree / "home", settings, os_home=str(tree / "outside"))
    assert ("pkg/AGENTS.md", OUTSIDE_PROJECT) in states(deeper)


def test_an_allowed_directory_does_not_allow_its_parent_or_a_sibling_prefix(tree: Path) -> None:
    write_tree(tree, {"outside/rules-evil/AGENTS.md": "evil\n"})
    (tree / "p/AGENTS.md").symlink_to(tree / "outside/rules-evil/AGENTS.md")
    (tree / "p/CLAUDE.md").unlink()
    (tree / "p/CLAUDE.md").symlink_to(tree / "outside/secret")
    settings = instructions(allowedSymlinkTargets=[str(tree / "outside/rules")])
    result = load(tree / "p", tree / "home", settings)
    assert states(result) == [("AGENTS.md", OUTSIDE_PROJECT), ("CLAUDE.md", OUTSIDE_PROJECT)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["rules/"], "entry 0 must be an absolute path or start with ~/, got 'rules/'"),
        (
            ["/ok", "~bob/rules"],
            "entry 1 must be an absolute path or start with ~/, got '~bob/rules'",
        ),
        (["/a\0b"], "entry 0 contains a NUL character"),
        ("/one/string", "must be a list of strings"),
        ([3], "must be a list of strings"),
    ],
)
def test_allowed_symlink_targets_refuses_what_no_user_means(value: object, message: str) -> None:
    with pytest.raises(DshError) as caught:
        instructions(allowedSymlinkTargets=value)
    assert caught.value.data["key"] == "instructions.allowedSymlinkTargets"
    assert caught.value.message == f"instructions.allowedSymlinkTargets: {message}"


# --- the chain report (dsh/scopes, scopes) ------------------------------------------------------


def test_the_document_chain_reports_outside_before_ignored(tree: Path) -> None:
    write_tree(tree, {"p/.gitignore": "vendor/\n", "p/vendor/": ""})
    (tree / "p/vendor/AGENTS.md").symlink_to(tree / "outside/secret")
    result = load_document_chain(
        str(tree / "p/vendor"), instructions(), LOCAL_FS, dsh_home=str(tree / "home")
    )
    assert states(result)[-1] == ("vendor/AGENTS.md", OUTSIDE_PROJECT)


# --- the CLI --------------------------------------------------------------------------------------


def test_cli_preview_and_scopes_show_the_target_and_never_the_content(
    tree: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tree / "home"))
    monkeypatch.setenv("HOME", str(tree / "os-home"))
    (tree / "p/AGENTS.md").symlink_to("../outside/secret")
    target = real(tree / "outside/secret")

    assert main(["preview", str(tree / "p")]) == 0
    out, _ = capsysbinary.readouterr()
    assert out.decode() == framed(("CLAUDE.md", "claude rule\n")) + "\n"

    assert main(["preview", str(tree / "p"), "--json"]) == 0
    doc = json.loads(capsysbinary.readouterr()[0])
    assert doc["files"][0] == {
        "path": os.path.join(real(tree / "p"), "AGENTS.md"),
        "displayPath": "AGENTS.md",
        "scope": ".\u0000AGENTS.md",
        "state": "outside-project",
        "bytes": len(SECRET),
        "reason": f"links outside the project to {target}",
        "target": target,
    }
    assert SECRET not in json.dumps(doc)

    assert main(["scopes", str(tree / "p/pkg"), "--json"]) == 0
    scopes = json.loads(capsysbinary.readouterr()[0])
    assert scopes["files"][0] == doc["files"][0]

    assert main(["scopes", str(tree / "p/pkg")]) == 0
    lines = capsysbinary.readouterr()[0].decode().splitlines()
    assert lines == [
        f"outside-project {len(SECRET):>8}  AGENTS.md  links outside the project to {target}",
        "included         12  CLAUDE.md",
    ]


def test_cli_scopes_prints_one_line_per_file_whatever_the_names(
    tree: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tree / "home"))
    evil = tree / "p/a\nincluded 1 FORGED.md"
    write_tree(tree, {"p/a\nincluded 1 FORGED.md/AGENTS.md": "nested\n"})
    (tree / "outside/b\nc").mkdir()
    (tree / "outside/b\nc/x.md").write_text("x\n")
    (tree / "p/AGENTS.md").symlink_to(tree / "outside/b\nc/x.md")
    assert main(["scopes", str(evil)]) == 0
    lines = capsysbinary.readouterr()[0].decode().splitlines()
    target = os.path.realpath(tree / "outside") + "/b\\nc/x.md"
    assert lines == [
        f"outside-project        2  AGENTS.md  links outside the project to {target}",
        "included         12  CLAUDE.md",
        "included          7  a\\nincluded 1 FORGED.md/AGENTS.md",
    ]

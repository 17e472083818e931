"""The ``dsh-sidecar`` command line, run in-process through ``main(argv)`` on real trees."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import types
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from tests.support.instrkit import INTRO, run_as_nobody, shared_tmp, write_tree

import dsh_sidecar
from dsh_sidecar import __version__
from dsh_sidecar.cli import MAX_SETTINGS_FILE_BYTES, main
from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.baseline import load_baseline
from dsh_sidecar.sources.agent_instructions.digests import sha1_hex

Capture = pytest.CaptureFixture[bytes]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and DSH_HOME so no real ~/.dsh leaks into the output."""
    monkeypatch.setenv("HOME", str(tmp_path / "os-home"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    # doctor's line about the resident hook engine then reads the same whatever the default.
    monkeypatch.setenv("DSH_HOOK_RESIDENT", "0")
    return tmp_path


def run(capsysbinary: Capture, *argv: str) -> tuple[int, bytes, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()


def settings_file(tmp_path: Path, tree: Any, name: str = "settings.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(tree))
    return str(path)


def sample(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            "home/AGENTS.md": "global é rule\n",
            "p/.git/": "",
            "p/AGENTS.md": "root rule\n",
            "p/pkg/AGENTS.md": "pkg rule",
        },
    )
    return tmp_path / "p/pkg"


SAMPLE_TEXT = (
    "<system-reminder>\n" + INTRO + "\n\nInstructions from: $DSH_HOME/AGENTS.md\n\nglobal é rule\n"
    "\n\nInstructions from: AGENTS.md\n\nroot rule\n"
    "\n\nInstructions from: pkg/AGENTS.md\n\npkg rule"
    "\n</system-reminder>"
)


# --- preview ----------------------------------------------------------------------------------


def test_preview_prints_exactly_the_baseline_bytes(env: Path, capsysbinary: Capture) -> None:
    cwd = sample(env)
    code, out, err = run(capsysbinary, "preview", str(cwd))
    assert (code, err) == (0, "")
    # The baseline, byte for byte, then one newline so the next prompt starts on its own line.
    assert out == SAMPLE_TEXT.encode("utf-8") + b"\n"
    load = load_baseline(str(cwd), InstructionSettings(), LOCAL_FS, dsh_home=str(env / "home"))
    assert out == load.text.encode("utf-8") + b"\n"


def test_preview_defaults_to_the_current_directory(
    env: Path, capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample(env))
    code, out, _ = run(capsysbinary, "preview")
    assert code == 0
    assert out == SAMPLE_TEXT.encode("utf-8") + b"\n"


def test_preview_of_a_directory_without_instructions_prints_nothing_and_says_why(
    env: Path, capsysbinary: Capture
) -> None:
    write_tree(env, {"p/.git/": ""})
    project = env / "p"
    assert run(capsysbinary, "preview", str(project)) == (
        0,
        b"",
        f"dsh-sidecar: no workspace instruction files apply to {project}"
        f" (project root {project}, DSH_HOME {env / 'home'})\n",
    )


def test_preview_honours_settings(env: Path, capsysbinary: Capture) -> None:
    cwd = sample(env)
    path = settings_file(
        env, {"instructions": {"instructionFileCandidates": [], "dshHome": str(env / "none")}}
    )
    code, out, _ = run(capsysbinary, "preview", str(cwd), "--settings", path)
    assert code == 0
    assert out == b""  # no base candidates, and the user-global home holds nothing


def test_preview_notes_every_file_it_skipped_or_cut(env: Path, capsysbinary: Capture) -> None:
    cwd = json_tree(env)
    tree = {"instructions": {"maxSourceBytes": 100, "maxBytes": PKG_ONLY_BUDGET}}
    code, out, err = run(capsysbinary, "preview", str(cwd), "--settings", settings_file(env, tree))
    assert (code, out) == (0, pkg_only_text(PKG_ONLY_BUDGET).encode() + b"\n")
    lines = err.splitlines()
    assert lines[:4] == [
        "dsh-sidecar: skipped $DSH_HOME/AGENTS.md: omitted by the byte budget",
        "dsh-sidecar: skipped AGENTS.md: omitted by the byte budget",
        "dsh-sidecar: skipped CLAUDE.md: same content as AGENTS.md (after trimming whitespace)",
        "dsh-sidecar: skipped AGENTS.local.md: oversized: 200 bytes",
    ]
    assert lines[4].startswith("dsh-sidecar: skipped CLAUDE.local.md: invalid-utf8: ")
    assert len(lines) == 5  # pkg/AGENTS.md is in the baseline whole


def test_preview_notes_the_file_the_budget_cut(env: Path, capsysbinary: Capture) -> None:
    write_tree(env, {"p/.git/": "", "p/AGENTS.md": "x" * 1000})
    path = settings_file(env, {"instructions": {"maxBytes": 400}})
    code, out, err = run(capsysbinary, "preview", str(env / "p"), "--settings", path)
    # The budget counts the baseline, not the newline printed after it.
    assert code == 0 and out.endswith(b"\n") and len(out) - 1 <= 400
    kept = re.search(rb"from 1000 to (\d+) bytes", out)
    assert kept is not None
    assert err == (
        f"dsh-sidecar: cut AGENTS.md: truncated from 1000 to {int(kept[1])} bytes by the budget\n"
    )


def test_preview_that_skipped_everything_says_so_instead_of_nothing_applies(
    env: Path, capsysbinary: Capture
) -> None:
    write_tree(env, {"p/.git/": "", "p/AGENTS.md": "x" * 50, "p/CLAUDE.md": b"\x00binary"})
    path = settings_file(env, {"instructions": {"maxSourceBytes": 20}})
    code, out, err = run(capsysbinary, "preview", str(env / "p"), "--settings", path)
    assert (code, out) == (0, b"")
    assert "no workspace instruction files apply" not in err
    lines = err.splitlines()
    assert lines[:2] == [
        f"dsh-sidecar: no baseline for {env / 'p'}: all 2 instruction files were skipped",
        "dsh-sidecar: skipped AGENTS.md: oversized: 50 bytes",
    ]
    assert lines[2].startswith("dsh-sidecar: skipped CLAUDE.md: ")
    assert len(lines) == 3


def test_preview_of_a_single_unreadable_file(env: Path, capsysbinary: Capture) -> None:
    # A symlink loop cannot even be stat'ed: it still is a file the preview skipped.
    write_tree(env, {"p/.git/": ""})
    (env / "p/AGENTS.md").symlink_to(env / "p/AGENTS.md")
    assert run(capsysbinary, "preview", str(env / "p")) == (
        0,
        b"",
        f"dsh-sidecar: no baseline for {env / 'p'}: the only instruction file was skipped\n"
        "dsh-sidecar: skipped AGENTS.md: ELOOP: Too many levels of symbolic links\n",
    )


def test_hostile_names_cannot_forge_lines_or_drive_the_terminal(
    env: Path, capsysbinary: Capture
) -> None:
    evil = "a\nforged line\x1b[31m\u202e"
    write_tree(env, {"p/.git/": "", f"p/{evil}/AGENTS.md": "x" * 50})
    shown = "a\\nforged line\\x1b[31m\\u202e"
    path = settings_file(env, {"instructions": {"maxSourceBytes": 10}})
    code, out, err = run(capsysbinary, "preview", str(env / "p" / evil), "--settings", path)
    assert (code, out) == (0, b"")
    assert err.splitlines() == [
        f"dsh-sidecar: no baseline for {env / 'p'}/{shown}: the only instruction file was skipped",
        f"dsh-sidecar: skipped {shown}/AGENTS.md: oversized: 50 bytes",
    ]
    code, out, _ = run(capsysbinary, "scopes", str(env / "p" / evil))
    assert out.decode() == f"included         50  {shown}/AGENTS.md\n"


def test_undecodable_names_keep_their_bytes(env: Path, capsysbinary: Capture) -> None:
    # A name that is not UTF-8 is shown as the bytes it has, in the notes and in the listing.
    name = os.fsdecode(b"c\xff")
    write_tree(env, {"p/.git/": "", f"p/{name}/AGENTS.md": "x" * 50})
    path = settings_file(env, {"instructions": {"maxSourceBytes": 10}})
    assert main(["preview", str(env / "p" / name), "--settings", path]) == 0
    _, err = capsysbinary.readouterr()
    assert err.endswith(b"\ndsh-sidecar: skipped c\xff/AGENTS.md: oversized: 50 bytes\n")
    assert main(["scopes", str(env / "p" / name)]) == 0
    out, _ = capsysbinary.readouterr()
    assert out == b"included         50  c\xff/AGENTS.md\n"


@pytest.mark.parametrize(
    ("tree", "why"),
    [
        ({"enabled": False}, "instructions.enabled is false"),
        (
            {"maxBytes": 0},
            "instructions.maxBytes is 0; a budget that is not a positive number turns the source off",
        ),
        (
            {"maxBytes": -2.5},
            "instructions.maxBytes is -2.5; a budget that is not a positive number turns the source off",
        ),
    ],
)
def test_preview_with_the_source_turned_off_says_which_setting(
    env: Path, capsysbinary: Capture, tree: dict[str, Any], why: str
) -> None:
    cwd = sample(env)
    path = settings_file(env, {"instructions": tree})
    assert run(capsysbinary, "preview", str(cwd), "--settings", path) == (
        0,
        b"",
        f"dsh-sidecar: no baseline: {why}\n",
    )


def test_preview_json_writes_no_notes(env: Path, capsysbinary: Capture) -> None:
    cwd = json_tree(env)
    code, out, err = run(capsysbinary, "preview", str(cwd), "--json")
    assert (code, err) == (0, "")
    assert [f["state"] for f in json.loads(out)["files"]][2] == "duplicate"


def pkg_only_text(n: int) -> str:
    """The baseline of json_tree under a budget of ``n`` that fits only pkg/AGENTS.md."""
    marker = f"Workspace instruction budget {n} bytes: omitted $DSH_HOME/AGENTS.md, AGENTS.md"
    tail = "\n\nInstructions from: pkg/AGENTS.md\n\npkg rule\n</system-reminder>"
    return "<system-reminder>\n" + marker + "\n\n" + INTRO + tail


PKG_ONLY_BUDGET = len(pkg_only_text(999).encode())


def json_tree(env: Path) -> Path:
    write_tree(
        env,
        {
            "home/AGENTS.md": "global rule",
            "p/.git/": "",
            "p/AGENTS.md": "root rule\n",
            "p/CLAUDE.md": "root rule",  # duplicate after trim
            "p/AGENTS.local.md": "x" * 200,  # oversized at maxSourceBytes 100
            "p/CLAUDE.local.md": b"\xc3\x28 invalid",  # invalid UTF-8
            "p/pkg/AGENTS.md": "pkg rule",
        },
    )
    return env / "p/pkg"


def test_preview_json_shape_and_states(env: Path, capsysbinary: Capture) -> None:
    cwd = json_tree(env)
    text, n = pkg_only_text, PKG_ONLY_BUDGET
    assert len(text(n).encode()) == n
    path = settings_file(env, {"instructions": {"maxSourceBytes": 100, "maxBytes": n}})
    code, out, err = run(capsysbinary, "preview", str(cwd), "--json", "--settings", path)
    assert (code, err) == (0, "")
    assert b'"scope": ".\\u0000AGENTS.md"' in out  # NUL serialized as \u0000
    doc = json.loads(out)
    root = os.path.realpath(env / "p")
    # The dsh/context/preview result, in its field order.
    assert list(doc) == ["text", "files", "omitted", "truncated", "baselineIdentity", "projectRoot"]
    assert doc["text"] == text(n)
    assert doc["projectRoot"] == root
    assert doc["baselineIdentity"] == (
        '{"projectRoot":"..","projectRootMarkers":[".git"],"maxBytes":' + str(n) + ","
        '"maxSourceBytes":100,"instructionFileCandidates":["AGENTS.md","CLAUDE.md"],'
        '"localInstructionFileCandidates":["AGENTS.local.md","CLAUDE.local.md"]}'
    )
    assert doc["omitted"] == ["$DSH_HOME/AGENTS.md", "AGENTS.md"]
    assert doc["truncated"] == []
    files = doc["files"]
    assert files[0] == {
        "path": str(env / "home/AGENTS.md"),
        "displayPath": "$DSH_HOME/AGENTS.md",
        "scope": "user-global\u0000AGENTS.md",
        "state": "omitted",
        "bytes": 11,
        "digest": sha1_hex("global rule"),
        "reason": "omitted by the byte budget",
    }
    assert files[2] == {
        "path": os.path.join(root, "CLAUDE.md"),
        "displayPath": "CLAUDE.md",
        "scope": ".\u0000CLAUDE.md",
        "state": "duplicate",
        "bytes": 9,
        "digest": sha1_hex("root rule"),
        "reason": "same content as AGENTS.md (after trimming whitespace)",
    }
    assert files[3] == {
        "path": os.path.join(root, "AGENTS.local.md"),
        "displayPath": "AGENTS.local.md",
        "scope": ".\u0000AGENTS.local.md",
        "state": "oversized",
        "bytes": 200,
        "reason": "oversized: 200 bytes",
    }
    assert files[4]["state"] == "unreadable"
    assert files[4]["reason"].startswith("invalid-utf8: ")
    assert "digest" not in files[4]
    assert files[5] == {
        "path": os.path.join(root, "pkg", "AGENTS.md"),
        "displayPath": "pkg/AGENTS.md",
        "scope": "pkg\u0000AGENTS.md",
        "state": "included",
        "bytes": 8,
        "includedBytes": 8,
        "digest": sha1_hex("pkg rule"),
    }
    assert [f["state"] for f in files] == [
        "omitted",
        "omitted",
        "duplicate",
        "oversized",
        "unreadable",
        "included",
    ]


def test_preview_json_truncated_entry(env: Path, capsysbinary: Capture) -> None:
    write_tree(env, {"p/.git/": "", "p/AGENTS.md": "x" * 1000})
    path = settings_file(env, {"instructions": {"maxBytes": 400}})
    code, out, _ = run(capsysbinary, "preview", str(env / "p"), "--json", "--settings", path)
    assert code == 0
    doc = json.loads(out)
    (truncated,) = doc["truncated"]
    assert truncated["path"] == "AGENTS.md" and truncated["originalBytes"] == 1000
    kept = truncated["includedBytes"]
    assert 0 < kept < 1000
    assert doc["files"][0]["state"] == "truncated"
    assert doc["files"][0]["includedBytes"] == kept
    assert doc["files"][0]["bytes"] == 1000
    assert f"truncated AGENTS.md from 1000 to {kept} bytes" in doc["text"]
    assert len(doc["text"].encode()) <= 400


# --- scopes -----------------------------------------------------------------------------------


def scopes_tree(env: Path) -> Path:
    write_tree(
        env,
        {
            "home/AGENTS.md": "global\n",
            "p/.git/": "",
            "p/.gitignore": "node_modules/\n",
            "p/AGENTS.md": "root\n",
            "p/CLAUDE.md": "root",
            "p/node_modules/dep/AGENTS.md": "dependency rule\n",
            "p/node_modules/dep/index.js": "",
        },
    )
    return env / "p/node_modules/dep/index.js"


def test_scopes_lists_the_chain_and_marks_ignored_files(env: Path, capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary, "scopes", str(scopes_tree(env)))
    assert (code, err) == (0, "")
    assert out.decode() == (
        "included          7  $DSH_HOME/AGENTS.md\n"
        "included          5  AGENTS.md\n"
        "duplicate         4  CLAUDE.md  same content as AGENTS.md (after trimming whitespace)\n"
        "ignored          16  node_modules/dep/AGENTS.md"
        "  node_modules/ ignored by 'node_modules/' (.gitignore)\n"
    )


def test_scopes_accepts_a_directory(env: Path, capsysbinary: Capture) -> None:
    file = scopes_tree(env)
    by_file = run(capsysbinary, "scopes", str(file))
    by_dir = run(capsysbinary, "scopes", str(file.parent))
    assert by_file == by_dir


def test_scopes_json(env: Path, capsysbinary: Capture) -> None:
    code, out, _ = run(capsysbinary, "scopes", str(scopes_tree(env)), "--json")
    assert code == 0
    doc = json.loads(out)
    root = os.path.realpath(env / "p")
    assert doc["projectRoot"] == root
    assert doc["directory"] == os.path.join(root, "node_modules", "dep")
    assert doc["files"][-1] == {
        "path": os.path.join(root, "node_modules", "dep", "AGENTS.md"),
        "displayPath": "node_modules/dep/AGENTS.md",
        "scope": "node_modules/dep\u0000AGENTS.md",
        "state": "ignored",
        "bytes": 16,
        "reason": "node_modules/ ignored by 'node_modules/' (.gitignore)",
    }


def test_scopes_without_gitignore_respect_loads_the_dependency(
    env: Path, capsysbinary: Capture
) -> None:
    path = settings_file(env, {"instructions": {"respectGitignore": False}})
    code, out, _ = run(capsysbinary, "scopes", str(scopes_tree(env)), "--settings", path)
    assert code == 0
    assert out.decode().splitlines()[-1] == "included         16  node_modules/dep/AGENTS.md"


def test_scopes_shows_an_unstatable_file_without_a_size(env: Path, capsysbinary: Capture) -> None:
    # A symlink loop: the probe fails with ELOOP, so the file is unreadable and has no size.
    write_tree(env, {"p/.git/": "", "p/CLAUDE.md": "claude\n"})
    (env / "p/AGENTS.md").symlink_to(env / "p/AGENTS.md")
    code, out, _ = run(capsysbinary, "scopes", str(env / "p"))
    assert code == 0
    assert out.decode() == (
        "unreadable        -  AGENTS.md  ELOOP: Too many levels of symbolic links\n"
        "included          7  CLAUDE.md\n"
    )
    code, out, _ = run(capsysbinary, "preview", str(env / "p"), "--json")
    entry = json.loads(out)["files"][0]
    assert entry["state"] == "unreadable" and entry["bytes"] is None


# --- bad input: exit 2, one line on stderr, nothing on stdout ---------------------------------


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        (
            {"instructions": {"maxSourceBytes": 0}},
            "instructions.maxSourceBytes: must be a positive integer, got 0",
        ),
        (
            {"instructions": {"maxBytes": "big"}},
            "instructions.maxBytes: must be a number, got 'big'",
        ),
        ({"instructions": {"colour": 1}}, "instructions.colour: is not a known setting"),
        ({"store": {"path": ""}}, "store.path: must be a non-blank path or null"),
        (["not", "an", "object"], "dsh: settings must be an object"),
        (
            {"sessionReference": {"maxReferences": 4}},
            "sessionReference.maxReferences: session-reference: maxReferences must not exceed 3",
        ),
    ],
)
def test_invalid_setting_exits_2_naming_the_key(
    env: Path, capsysbinary: Capture, tree: Any, message: str
) -> None:
    write_tree(env, {"p/": ""})
    path = settings_file(env, tree)
    for argv in (["preview", str(env / "p")], ["scopes", str(env / "p")], ["doctor"]):
        assert run(capsysbinary, *argv, "--settings", path) == (2, b"", f"dsh-sidecar: {message}\n")


def test_unreadable_settings_files_exit_2(env: Path, capsysbinary: Capture) -> None:
    write_tree(env, {"p/": "", "bad.json": "{nope", "latin1.json": b'{"x": "\xe9"}'})
    missing = str(env / "missing.json")
    assert run(capsysbinary, "preview", str(env / "p"), "--settings", missing) == (
        2,
        b"",
        f"dsh-sidecar: --settings {missing}: cannot read: No such file or directory\n",
    )
    bad = str(env / "bad.json")
    code, out, err = run(capsysbinary, "preview", str(env / "p"), "--settings", bad)
    assert (code, out) == (2, b"")
    assert err.startswith(f"dsh-sidecar: --settings {bad}: invalid JSON: ")
    assert err.count("\n") == 1
    latin = str(env / "latin1.json")
    code, _, err = run(capsysbinary, "preview", str(env / "p"), "--settings", latin)
    assert code == 2 and err.startswith(f"dsh-sidecar: --settings {latin}: not UTF-8")
    directory = str(env / "p")
    code, _, err = run(capsysbinary, "preview", directory, "--settings", directory)
    assert (
        code == 2 and err == f"dsh-sidecar: --settings {directory}: cannot read: Is a directory\n"
    )


def test_settings_files_are_read_up_to_a_cap(env: Path, capsysbinary: Capture) -> None:
    """/dev/zero, or a file far larger than any settings tree, is refused after reading at most
    the cap plus one byte: one line, exit 2, no memory spent on the rest."""
    write_tree(env, {"p/": ""})
    big = env / "big.json"
    big.write_bytes(b'{"instructions": {"exclude": ["' + b"x" * MAX_SETTINGS_FILE_BYTES + b'"]}}')
    for path in ("/dev/zero", str(big)):
        assert run(capsysbinary, "preview", str(env / "p"), "--settings", path) == (
            2,
            b"",
            f"dsh-sidecar: --settings {path}: larger than {MAX_SETTINGS_FILE_BYTES} bytes"
            " (a settings file is a small JSON object)\n",
        )
    # Just under the cap is read (and here refused only for what it says).
    deep = env / "deep.json"
    deep.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    code, out, err = run(capsysbinary, "preview", str(env / "p"), "--settings", str(deep))
    assert (code, out) == (2, b"")
    assert err == f"dsh-sidecar: --settings {deep}: invalid JSON: nested too deeply\n"


def test_missing_directory_exits_2(env: Path, capsysbinary: Capture) -> None:
    missing = str(env / "nowhere")
    assert run(capsysbinary, "preview", missing) == (
        2,
        b"",
        f"dsh-sidecar: {missing}: no such directory\n",
    )
    (env / "file.txt").write_text("")
    file = str(env / "file.txt")
    assert run(capsysbinary, "preview", file) == (2, b"", f"dsh-sidecar: {file}: not a directory\n")


def test_scopes_of_a_missing_file_exits_2(env: Path, capsysbinary: Capture) -> None:
    missing = str(env / "nowhere.py")
    assert run(capsysbinary, "scopes", missing) == (
        2,
        b"",
        f"dsh-sidecar: {missing}: no such file or directory\n",
    )


def test_no_command_prints_help_and_exits_2(capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary)
    assert code == 2 and out == b""
    assert err.startswith("usage: dsh-sidecar")


@pytest.mark.parametrize(
    ("argv", "usage", "error"),
    [
        (
            ["preview", "--jsn"],
            "usage: dsh-sidecar preview [-h] [--json] [--settings FILE.json] [DIR]",
            "dsh-sidecar preview: error: unrecognized arguments: --jsn",
        ),
        (
            ["preview", "a", "b"],
            "usage: dsh-sidecar preview [-h] [--json] [--settings FILE.json] [DIR]",
            "dsh-sidecar preview: error: unrecognized arguments: b",
        ),
        (
            ["scopes"],
            "usage: dsh-sidecar scopes [-h] [--json] [--settings FILE.json] FILE",
            "dsh-sidecar scopes: error: the following arguments are required: FILE",
        ),
        (
            ["doctor", "--json"],
            "usage: dsh-sidecar doctor [-h] [--settings FILE.json]",
            "dsh-sidecar doctor: error: unrecognized arguments: --json",
        ),
        (
            ["serve", "--stdio"],
            "usage: dsh-sidecar serve [-h] [--tcp] [--port PORT] [--socket PATH] [--max-message-bytes N]\n"
            "                         [--log-file FILE] [-v]",
            "dsh-sidecar serve: error: unrecognized arguments: --stdio",
        ),
        (
            ["frobnicate"],
            "usage: dsh-sidecar [-h] [--version] COMMAND ...",
            "dsh-sidecar: error: argument COMMAND: invalid choice: 'frobnicate'"
            " (choose from 'serve', 'preview', 'scopes', 'explain', 'doctor', 'hook', 'hooks', 'sessions')",
        ),
    ],
)
def test_usage_errors_show_the_usage_of_their_command(
    capsysbinary: Capture,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    usage: str,
    error: str,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps usage at the terminal width
    assert run(capsysbinary, *argv) == (2, b"", f"{usage}\n{error}\n")


def test_hooks_install_and_uninstall_show_agent_as_required(
    capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps usage at the terminal width
    for action in ("install", "uninstall"):
        pad = " " * len(f"usage: dsh-sidecar hooks {action} ")
        assert run(capsysbinary, "hooks", action, "--help") == (
            0,
            f"usage: dsh-sidecar hooks {action} [-h] --agent AGENT [--scope {{project,user}}]"
            " [--shared]\n"
            f"{pad}[--project DIR]\n"
            "\n"
            "options:\n"
            "  -h, --help            show this help message and exit\n"
            "  --scope {project,user}\n"
            "                        the project's settings (default) or the user's\n"
            "  --shared              the project file the team shares, with dsh-sidecar from"
            " PATH (Claude Code;\n"
            "                        default: .claude/settings.local.json, this machine's)\n"
            "  --project DIR         the project directory (default: the git repository you are"
            " in)\n"
            "\n"
            "required arguments:\n"
            "  --agent AGENT         the agent whose settings file to change: codex, claude,"
            " copilot-cli,\n"
            "                        gemini, qwen-code\n".encode(),
            "",
        )
        code, out, err = run(capsysbinary, "hooks", action)
        assert (code, out) == (2, b"")
        assert err.endswith(
            f"dsh-sidecar hooks {action}: error: the following arguments are required: --agent\n"
        )
    code, out, _ = run(capsysbinary, "hooks", "status", "--help")
    assert code == 0
    assert out.startswith(b"usage: dsh-sidecar hooks status [-h] [--agent AGENT] [--project DIR]\n")
    assert b"required" not in out


def test_version(capsysbinary: Capture) -> None:
    assert run(capsysbinary, "--version") == (0, f"dsh-sidecar {__version__}\n".encode(), "")


def test_the_version_is_the_installed_distribution_s(capsysbinary: Capture) -> None:
    # One version for --version, doctor and serverInfo (dsh_sidecar.__version__), and it must be
    # the one pyproject.toml gives the distribution.
    assert __version__ == metadata.version("dsh-sidecar")


# --- doctor -----------------------------------------------------------------------------------


def doctor_rows(out: bytes) -> dict[str, str]:
    rows = {}
    for line in out.decode().splitlines():
        name, _, value = line.partition(" ")
        rows[name] = value.strip()
    return rows


def test_doctor_healthy(env: Path, capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary, "doctor")
    assert (code, err) == (0, "")
    rows = doctor_rows(out)
    assert list(rows) == [
        "dsh-sidecar",
        "python",
        "pygls",
        "lsprotocol",
        "DSH_HOME",
        "store",
        "schema",
        "tmux",
        "hooks",
        "spool",
        "resident",
        "status",
    ]
    package = os.path.dirname(os.path.abspath(dsh_sidecar.__file__))
    assert rows["dsh-sidecar"] == f"{__version__} ({package})"
    assert rows["python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    assert rows["pygls"] == "2.1.1"
    assert rows["lsprotocol"] == "2025.0.0"
    assert rows["DSH_HOME"] == f"{env / 'home'} (environment DSH_HOME)"
    assert rows["store"] == f"{env / 'home' / 'sessions.sqlite3'} (writable, will be created)"
    assert rows["schema"] == "3 (the store is created with it on first use)"
    assert rows["spool"] == "no touches waiting"
    assert rows["resident"] == "off (DSH_HOOK_RESIDENT=0)"  # the env fixture switches it off
    assert rows["status"] == "ok"
    assert not (env / "home").exists()  # the check created nothing


def test_doctor_reports_the_default_home_when_dsh_home_is_blank(
    env: Path, capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", "  ")
    code, out, _ = run(capsysbinary, "doctor")
    assert code == 0
    home = env / "os-home" / ".dsh"
    assert doctor_rows(out)["DSH_HOME"] == f"{home} (default: DSH_HOME is blank)"


def test_doctor_existing_store_is_writable(env: Path, capsysbinary: Capture) -> None:
    write_tree(env, {"home/sessions.sqlite3": b""})
    code, out, _ = run(capsysbinary, "doctor")
    assert code == 0
    assert doctor_rows(out)["store"] == f"{env / 'home' / 'sessions.sqlite3'} (writable)"


def test_doctor_unwritable_store_is_unhealthy(env: Path, capsysbinary: Capture) -> None:
    # As root, permissions deny nothing; a regular file where a directory must be does.
    write_tree(env, {"blocker": "a file"})
    store = env / "blocker" / "sub" / "s.sqlite3"
    path = settings_file(env, {"store": {"path": str(store)}})
    code, out, err = run(capsysbinary, "doctor", "--settings", path)
    assert (code, err) == (1, "")
    rows = doctor_rows(out)
    assert rows["store"] == f"{store} (not writable: {env / 'blocker'} is not a directory)"
    assert rows["status"] == f"store {store} is not writable"


def test_doctor_store_that_is_a_directory_is_unhealthy(env: Path, capsysbinary: Capture) -> None:
    # Not named *.sqlite3: the suite's store sweep (tests/conftest.py) opens every such path.
    write_tree(env, {"store.d/": ""})
    path = settings_file(env, {"store": {"path": str(env / "store.d")}})
    code, out, _ = run(capsysbinary, "doctor", "--settings", path)
    assert code == 1
    assert doctor_rows(out)["store"] == f"{env / 'store.d'} (not writable: it is a directory)"


def test_doctor_store_permission_denied_as_nobody() -> None:
    # Root may write anywhere, so permission problems need a real unprivileged process.
    with shared_tmp() as shared:
        write_tree(shared, {"taken/sessions.sqlite3": b"", "empty/": ""})
        code = "import sys\nfrom dsh_sidecar.cli import store_writable\n" + (
            "print(repr([store_writable(p) for p in sys.argv[1:]]))"
        )
        out = run_as_nobody(
            code, str(shared / "taken/sessions.sqlite3"), str(shared / "empty/sub/s.sqlite3")
        )
    assert out.strip() == repr(
        [
            (False, "not writable: permission denied"),
            (False, f"not writable: cannot create files under {shared / 'empty'}"),
        ]
    )


def test_doctor_finds_tmux(env: Path, capsysbinary: Capture) -> None:
    # tmux is part of the toolchain (tmux-context); its absence must fail here, not skip.
    code, out, _ = run(capsysbinary, "doctor")
    assert code == 0
    assert doctor_rows(out)["tmux"].startswith("tmux ")


def test_doctor_tmux_missing_is_a_problem_only_when_enabled(
    env: Path, capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (env / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(env / "empty-bin"))
    code, out, _ = run(capsysbinary, "doctor")
    assert code == 0
    assert doctor_rows(out)["tmux"] == "not found on PATH (tmux-context has nothing to report)"
    path = settings_file(env, {"tmuxContext": {"enabled": True}})
    code, out, _ = run(capsysbinary, "doctor", "--settings", path)
    assert code == 1
    assert doctor_rows(out)["status"] == "tmuxContext is enabled but tmux is not available"


# --- serve ------------------------------------------------------------------------------------


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Stands in for dsh_sidecar.lsp.main, which would take over stdio if really started."""
    calls: list[dict[str, Any]] = []
    module = types.ModuleType("dsh_sidecar.lsp.main")

    def serve(
        tcp: bool,
        port: int | None,
        log_file: str | None,
        verbose: bool,
        socket_path: str | None,
        max_message_bytes: int,
    ) -> int:
        calls.append(
            {
                "tcp": tcp,
                "port": port,
                "log_file": log_file,
                "verbose": verbose,
                "socket_path": socket_path,
                "max_message_bytes": max_message_bytes,
            }
        )
        return 0

    module.serve = serve  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dsh_sidecar.lsp.main", module)
    return calls


MIB64 = 64 * 1024 * 1024


def test_serve_defaults_to_stdio(fake_server: list[dict[str, Any]], capsysbinary: Capture) -> None:
    assert run(capsysbinary, "serve") == (0, b"", "")
    assert fake_server == [
        {
            "tcp": False,
            "port": None,
            "log_file": None,
            "verbose": False,
            "socket_path": None,
            "max_message_bytes": MIB64,
        }
    ]


def test_serve_default_message_limit_is_the_framing_default() -> None:
    from dsh_sidecar.cli import DEFAULT_MAX_MESSAGE_BYTES
    from dsh_sidecar.lsp.rpc.framing import DEFAULT_MAX_BODY_BYTES

    assert DEFAULT_MAX_MESSAGE_BYTES == DEFAULT_MAX_BODY_BYTES == MIB64


def test_serve_passes_every_option(
    tmp_path: Path, fake_server: list[dict[str, Any]], capsysbinary: Capture
) -> None:
    log = str(tmp_path / "sidecar.log")
    argv = [
        "serve",
        "--tcp",
        "--port",
        "4321",
        "--log-file",
        log,
        "-v",
        "--max-message-bytes",
        "4096",
    ]
    assert run(capsysbinary, *argv) == (0, b"", "")
    assert fake_server == [
        {
            "tcp": True,
            "port": 4321,
            "log_file": log,
            "verbose": True,
            "socket_path": None,
            "max_message_bytes": 4096,
        }
    ]
    sock = str(tmp_path / "run" / "dsh.sock")
    assert run(capsysbinary, "serve", "--socket", sock) == (0, b"", "")
    assert fake_server[-1]["socket_path"] == sock and fake_server[-1]["tcp"] is False


def test_serve_refuses_a_log_fifo_nobody_reads_instead_of_hanging(
    tmp_path: Path, fake_server: list[dict[str, Any]], capsysbinary: Capture
) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    assert run(capsysbinary, "serve", "--log-file", str(fifo)) == (
        2,
        b"",
        f"dsh-sidecar: --log-file {fifo}: No such device or address\n",
    )
    assert fake_server == []


def test_serve_creates_its_log_file_private(
    tmp_path: Path, fake_server: list[dict[str, Any]], capsysbinary: Capture
) -> None:
    log = tmp_path / "sidecar.log"
    old_umask = os.umask(0o022)
    try:
        assert run(capsysbinary, "serve", "--log-file", str(log)) == (0, b"", "")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "4321"], "--port needs --tcp"),
        (["--tcp", "--port", "70000"], "--port: must be between 0 and 65535, got 70000"),
        (["--tcp", "--socket", "/tmp/x.sock"], "--socket and --tcp cannot be used together"),
        (["--socket", ""], "--socket: the path is empty"),
        (["--max-message-bytes", "100"], "--max-message-bytes: must be at least 1024, got 100"),
    ],
)
def test_serve_bad_options_exit_2(
    fake_server: list[dict[str, Any]], capsysbinary: Capture, argv: list[str], message: str
) -> None:
    assert run(capsysbinary, "serve", *argv) == (2, b"", f"dsh-sidecar: {message}\n")
    assert fake_server == []


def test_serve_unwritable_log_file_exits_2(
    tmp_path: Path, fake_server: list[dict[str, Any]], capsysbinary: Capture
) -> None:
    log = str(tmp_path / "no-such-dir" / "x.log")
    assert run(capsysbinary, "serve", "--log-file", log) == (
        2,
        b"",
        f"dsh-sidecar: --log-file {log}: No such file or directory\n",
    )
    assert fake_server == []


# --- the real entry point ---------------------------------------------------------------------


def test_module_entry_point_writes_utf8_bytes_whatever_the_locale(env: Path) -> None:
    # One subprocess: only a real process shows that stdout gets the baseline's UTF-8 bytes even
    # when Python's own stdout encoding could not represent them.
    cwd = sample(env)
    child_env = dict(os.environ, PYTHONIOENCODING="ascii", LC_ALL="C")
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "preview", str(cwd)],
        capture_output=True,
        env=child_env,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == SAMPLE_TEXT.encode("utf-8") + b"\n"
    bad = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "preview", str(env / "nowhere")],
        capture_output=True,
        env=child_env,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr == f"dsh-sidecar: {env / 'nowhere'}: no such directory\n".encode()
    assert bad.stdout == b""

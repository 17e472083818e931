"""Which paths each agent's tools touch (issue 32, item 4): Claude Code's Bash, Grep, Glob,
NotebookEdit and MultiEdit, Gemini CLI's shell, grep, glob, listing and read_many_files, with the
tool names and input fields of the pinned versions (in
docs/reference/agent-clis.md, Tools the hooks read). A search or listing into a directory is a
touch of that directory (a trailing separator); the touches after which the agent loads nothing
itself are ``scanned``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.hooks.main import main, parse_event
from dsh_sidecar.hooks.payload import glob_directory


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel in ("pkg/x.py", "lib/deep/y.py", "web/app/z.ts", "nb/a.ipynb"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("v = 1\n")
    (root / ".git").mkdir()
    return root


def claude(repo: Path, tool: str, arguments: dict[str, Any], event: str = "PostToolUse") -> Any:
    return parse_event(
        "claude",
        {
            "hook_event_name": event,
            "session_id": "s",
            "cwd": str(repo),
            "tool_name": tool,
            "tool_input": arguments,
            "tool_use_id": "toolu_1",
        },
    )


def gemini(repo: Path, tool: str, arguments: dict[str, Any], event: str = "AfterTool") -> Any:
    return parse_event(
        "gemini",
        {
            "hook_event_name": event,
            "session_id": "s",
            "cwd": str(repo),
            "timestamp": "2026-12-04T04:40:33.571Z",
            "tool_name": tool,
            "tool_input": arguments,
            "tool_response": {"llmContent": "ok", "returnDisplay": "ok"},
        },
    )


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        ("web/**/*.ts", "web"),
        ("web/app/*.ts", "web/app"),
        ("web/app/z.ts", "web/app"),
        ("**/*.py", ""),
        ("*.py", ""),
        ("src/{a,b}/*.py", "src"),
        ("a[bc]/x", ""),
        ("/abs/dir/**", "/abs/dir"),
        ("/*.py", ""),
        ("we\\*b/x", ""),
    ],
)
def test_a_glob_patterns_literal_directory(pattern: str, prefix: str) -> None:
    assert glob_directory(pattern) == prefix


def test_claude_bash_reads_through_the_shell_reader(repo: Path) -> None:
    event = claude(repo, "Bash", {"command": "cat pkg/x.py && rg foo lib/ > out.txt"})
    assert event.touched == (str(repo / "pkg/x.py"), str(repo / "lib"), str(repo / "out.txt"))
    assert event.scanned == frozenset(event.touched)
    # A file that is not there was not read; before the command runs only its writes count.
    assert claude(repo, "Bash", {"command": "cat pkg/missing.py"}).touched == ()
    before = claude(repo, "Bash", {"command": "cat pkg/x.py > lib/new.py"}, "PreToolUse")
    assert before.touched == (str(repo / "lib/new.py"),)


def test_claude_grep_touches_its_path_and_never_its_glob(repo: Path) -> None:
    into = claude(repo, "Grep", {"pattern": "foo", "path": "lib", "glob": "web/**/*.ts"})
    assert into.touched == (str(repo / "lib") + "/",)
    assert into.scanned == {str(repo / "lib") + "/"}
    absolute = claude(repo, "Grep", {"pattern": "foo", "path": str(repo / "pkg/x.py")})
    assert absolute.touched == (str(repo / "pkg/x.py"),)
    # No path: the session's directory, which the baseline covers; a glob alone names nothing.
    assert claude(repo, "Grep", {"pattern": "foo", "glob": "lib/*.py"}).touched == ()
    assert claude(repo, "Grep", {"pattern": "foo", "path": "nowhere"}).touched == ()


def test_claude_glob_touches_its_path_and_the_patterns_literal_directory(repo: Path) -> None:
    assert claude(repo, "Glob", {"pattern": "web/**/*.ts"}).touched == (str(repo / "web") + "/",)
    inside = claude(repo, "Glob", {"pattern": "app/*.ts", "path": str(repo / "web")})
    assert inside.touched == (str(repo / "web/app") + "/",)
    assert claude(repo, "Glob", {"pattern": "**/*.py", "path": "lib"}).touched == (
        str(repo / "lib") + "/",
    )
    assert claude(repo, "Glob", {"pattern": "**/*.py"}).touched == ()
    assert claude(repo, "Glob", {"pattern": "gone/**/*.py"}).touched == ()


def test_claude_notebook_and_multi_edit_touch_their_file(repo: Path) -> None:
    notebook = claude(repo, "NotebookEdit", {"notebook_path": str(repo / "nb/a.ipynb")})
    assert (notebook.touched, notebook.scanned) == ((str(repo / "nb/a.ipynb"),), frozenset())
    multi = claude(repo, "MultiEdit", {"file_path": str(repo / "pkg/x.py"), "edits": []})
    assert (multi.touched, multi.scanned) == ((str(repo / "pkg/x.py"),), frozenset())
    before = claude(repo, "NotebookEdit", {"notebook_path": str(repo / "nb/a.ipynb")}, "PreToolUse")
    assert before.touched == (str(repo / "nb/a.ipynb"),)
    # A search writes nothing: no touch before it runs.
    assert claude(repo, "Grep", {"pattern": "x", "path": "lib"}, "PreToolUse").touched == ()


def test_gemini_shell_reads_in_its_directory(repo: Path) -> None:
    event = gemini(repo, "run_shell_command", {"command": "cat pkg/x.py; grep -rn foo lib/"})
    assert event.touched == (str(repo / "pkg/x.py"), str(repo / "lib"))
    assert event.scanned == frozenset(event.touched)
    there = gemini(repo, "run_shell_command", {"command": "cat y.py", "dir_path": "lib/deep"})
    assert there.touched == (str(repo / "lib/deep/y.py"),)
    before = gemini(repo, "run_shell_command", {"command": "echo 1 > pkg/n.py"}, "BeforeTool")
    assert before.touched == (str(repo / "pkg/n.py"),)


def test_gemini_grep_glob_and_listing_touch_directories(repo: Path) -> None:
    grep = gemini(
        repo, "grep_search", {"pattern": "v", "dir_path": "lib", "include_pattern": "*.py"}
    )
    assert (grep.touched, grep.scanned) == ((str(repo / "lib") + "/",), {str(repo / "lib") + "/"})
    one_file = gemini(repo, "grep_search", {"pattern": "v", "dir_path": "pkg/x.py"})
    assert one_file.touched == (str(repo / "pkg/x.py"),)
    assert gemini(repo, "grep_search", {"pattern": "v", "include_pattern": "lib/*"}).touched == ()
    glob = gemini(repo, "glob", {"pattern": "web/**/*.ts"})
    assert glob.touched == (str(repo / "web") + "/",)
    inside = gemini(repo, "glob", {"pattern": "*.ts", "dir_path": str(repo / "web/app")})
    assert inside.touched == (str(repo / "web/app") + "/",)
    listing = gemini(repo, "list_directory", {"dir_path": "lib/deep"})
    # Gemini looks up its own context files after a listing: not a scan.
    assert (listing.touched, listing.scanned) == ((str(repo / "lib/deep") + "/",), frozenset())
    assert gemini(repo, "list_directory", {"dir_path": "absent"}).touched == ()


def test_gemini_read_many_files_touches_files_directories_and_pattern_prefixes(
    repo: Path,
) -> None:
    include = ["pkg/x.py", "lib/", "web/**/*.ts", "**/*.md", "absent.py"]
    event = gemini(repo, "read_many_files", {"include": include})
    assert event.touched == (
        str(repo / "pkg/x.py"),
        str(repo / "lib") + "/",
        str(repo / "web") + "/",
    )
    assert event.scanned == frozenset()


def test_a_failed_gemini_search_touches_nothing(repo: Path) -> None:
    payload = {
        "hook_event_name": "AfterTool",
        "session_id": "s",
        "cwd": str(repo),
        "timestamp": "t",
        "tool_name": "grep_search",
        "tool_input": {"pattern": "v", "dir_path": "lib"},
        "tool_response": {"error": {"message": "no", "type": "x"}},
    }
    assert parse_event("gemini", payload).touched == ()


def test_a_grep_into_a_directory_brings_its_chain_and_not_what_the_agent_would_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code loads a nested CLAUDE.md itself only after its file tools: after a Grep the
    hook sends it (complement mode), with the directory's AGENTS.md, once."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "lib/deep").mkdir(parents=True)
    (repo / "lib/AGENTS.md").write_text("LIB-AGENTS\n")
    (repo / "lib/CLAUDE.md").write_text("LIB-CLAUDE\n")
    (repo / "lib/deep/y.py").write_text("v = 1\n")
    (repo / "other").mkdir()
    (repo / "other/AGENTS.md").write_text("OTHER-AGENTS\n")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_TEST_STORE_NO_FSYNC", "1")

    def hook(payload: dict[str, Any]) -> str | None:
        out = io.BytesIO()
        data = json.dumps({"cwd": str(repo), "session_id": "g1", **payload}).encode()
        assert main(["--agent", "claude"], io.BytesIO(data), out) == 0
        if not out.getvalue():
            return None
        return str(json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"])

    hook({"hook_event_name": "SessionStart", "source": "startup"})
    grep = {"hook_event_name": "PostToolUse", "tool_name": "Grep", "tool_use_id": "t1"}
    text = hook({**grep, "tool_input": {"pattern": "v", "path": "lib"}})
    assert text is not None
    assert text.count("LIB-AGENTS") == 1 and text.count("LIB-CLAUDE") == 1
    assert "OTHER-AGENTS" not in text
    again = {**grep, "tool_use_id": "t2", "tool_input": {"pattern": "v", "path": "lib/deep"}}
    assert hook(again) is None

"""``dsh-sidecar hook``: per agent and event, on payloads shaped as the real CLIs send them
(docs/agents.md; agent-clis facts), against a real store and a real project tree."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.hooks.main import main
from dsh_sidecar.hooks.output import INLINE_CAP, escape_for
from dsh_sidecar.sessions.store import Store


class Project:
    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = tmp / "proj"
        (self.root / ".git").mkdir(parents=True)
        self.home = tmp / "dsh"
        self.home.mkdir()
        monkeypatch.setenv("DSH_HOME", str(self.home))
        monkeypatch.setenv("HOME", str(tmp / "userhome"))
        monkeypatch.setenv("DSH_TEST_STORE_NO_FSYNC", "1")

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def hook(self, agent: str, payload: dict[str, Any], *extra: str) -> str | None:
        out = io.BytesIO()
        payload = {"cwd": str(self.root), **payload}
        code = main(["--agent", agent, *extra], io.BytesIO(json.dumps(payload).encode()), out)
        assert code == 0
        if not out.getvalue():
            return None
        body = json.loads(out.getvalue())
        assert body["hookSpecificOutput"]["hookEventName"] == payload["hook_event_name"]
        text = body["hookSpecificOutput"]["additionalContext"]
        assert isinstance(text, str)
        return text

    def log(self) -> str:
        path = self.home / "log" / "hooks.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    p = Project(tmp_path, monkeypatch)
    p.write("AGENTS.md", "ROOT-AGENTS\n")
    p.write("CLAUDE.md", "ROOT-CLAUDE\n")
    p.write("pkg/AGENTS.md", "PKG-AGENTS\n")
    p.write("pkg/CLAUDE.md", "PKG-CLAUDE\n")
    p.write("pkg/sub/x.py", "x = 1\n")
    p.write("other/AGENTS.md", "SIBLING-AGENTS\n")
    (p.home / "AGENTS.md").write_text("USER-GLOBAL\n")
    return p


def start(sid: str, name: str = "SessionStart", source: str = "startup") -> dict[str, Any]:
    return {"hook_event_name": name, "session_id": sid, "source": source}


def claude_read(sid: str, path: Path, tool_id: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PostToolUse",
        "session_id": sid,
        "tool_name": "Read",
        "tool_input": {"file_path": str(path)},
        "tool_use_id": tool_id,
        "tool_response": {"file": {"filePath": str(path)}},
    }


def test_claude_gets_what_it_does_not_load_itself_once(project: Project) -> None:
    text = project.hook("claude", start("c1"))
    assert text is not None
    # Claude Code loads CLAUDE.md itself and then no AGENTS.md: the sidecar sends the rest.
    assert "USER-GLOBAL" in text and "ROOT-AGENTS" in text
    assert "ROOT-CLAUDE" not in text and "PKG" not in text
    read = project.hook("claude", claude_read("c1", project.root / "pkg/sub/x.py", "t1"))
    assert read is not None
    assert "PKG-AGENTS" in read and "PKG-CLAUDE" not in read and "SIBLING" not in read
    # The same tool call again (a retried hook): nothing twice.
    assert project.hook("claude", claude_read("c1", project.root / "pkg/sub/x.py", "t1")) is None
    # Another read there: nothing new.
    assert project.hook("claude", claude_read("c1", project.root / "pkg/sub/x.py", "t2")) is None
    # A change on disk arrives as the new text after the next touch; the native file too.
    project.write("pkg/AGENTS.md", "PKG-AGENTS-V2\n")
    project.write("pkg/CLAUDE.md", "PKG-CLAUDE-V2\n")
    changed = project.hook("claude", claude_read("c1", project.root / "pkg/sub/x.py", "t3"))
    assert changed is not None
    assert "Updated instructions from: pkg/AGENTS.md" in changed and "PKG-AGENTS-V2" in changed
    assert "Updated instructions from: pkg/CLAUDE.md" in changed and "PKG-CLAUDE-V2" in changed
    (project.root / "pkg/AGENTS.md").unlink()
    removed = project.hook("claude", claude_read("c1", project.root / "pkg/sub/x.py", "t4"))
    assert removed is not None and "Instructions removed: pkg/AGENTS.md" in removed
    store = Store(str(project.home / "sessions.sqlite3"))
    header = store.get_session("claude:c1")
    assert header is not None
    assert (header.agent, header.agent_session, header.cwd) == ("claude", "c1", str(project.root))
    assert store.inbox("claude:c1") == []
    store.close()


def test_all_mode_sends_what_the_agent_loads_too(project: Project) -> None:
    text = project.hook("claude", start("c2"), "--mode", "all")
    assert text is not None and "ROOT-CLAUDE" in text and "ROOT-AGENTS" in text


def test_codex_gets_claude_md_and_nested_files_from_shell_reads(project: Project) -> None:
    text = project.hook("codex", start("x1"))
    assert text is not None
    # Codex loads the root AGENTS.md itself, never CLAUDE.md.
    assert "ROOT-CLAUDE" in text and "USER-GLOBAL" in text and "ROOT-AGENTS" not in text


def test_gemini_gets_everything_with_at_signs_escaped_at_session_start_only(
    project: Project,
) -> None:
    project.write("AGENTS.md", "See @docs/x.md and mail@example.com, not me@ or (@)\n")
    project.write("pkg/AGENTS.md", "PKG-AGENTS ops@.env\n")
    text = project.hook("gemini", start("g1"))
    assert text is not None
    # SessionStart text goes through Gemini's `@` parser: each `@` it would expand is escaped.
    assert "See \\@docs/x.md and mail\\@example.com, not me@ or (@)\n" in text
    assert "ROOT-CLAUDE" in text
    read = {
        "hook_event_name": "AfterTool",
        "session_id": "g1",
        "tool_name": "read_file",
        "tool_input": {"file_path": "pkg/sub/x.py"},
    }
    nested = project.hook("gemini", read)
    # AfterTool text is added after that parser ran: it goes out as written.
    assert nested is not None and "PKG-AGENTS ops@.env\n" in nested and "PKG-CLAUDE" in nested
    assert escape_for("gemini", "start", "@a b@c (@d") == "\\@a b\\@c (\\@d"
    assert escape_for("gemini", "after-tool", "@a b@c") == "@a b@c"
    assert escape_for("gemini", "prompt", "@a b@c") == "@a b@c"
    assert escape_for("claude", "start", "@a b@c") == "@a b@c"


def test_prompt_time_delivers_pending_and_records_the_prompt(project: Project) -> None:
    project.hook("claude", start("c3"))
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "c3", "prompt": "do it"}
    assert project.hook("claude", prompt) is None  # nothing pending, no readings enabled
    store = Store(str(project.home / "sessions.sqlite3"))
    texts = [e.data["content"][0]["text"] for e in store.surface_events("claude:c3")]
    assert texts[-1] == "do it"
    store.close()


def test_a_subagent_has_its_own_session_and_baseline(project: Project) -> None:
    project.hook("claude", start("c4"))
    sub = claude_read("c4", project.root / "pkg/sub/x.py", "t1")
    sub.update(agent_id="a-1", agent_type="Explore")
    text = project.hook("claude", sub)
    assert text is not None and "ROOT-AGENTS" in text and "PKG-AGENTS" in text
    store = Store(str(project.home / "sessions.sqlite3"))
    child = store.get_session("claude:c4:a-1")
    assert child is not None and child.parent_id == "claude:c4" and child.title == "Explore"
    store.close()


def test_touches_outside_the_project_through_links_or_fifos_never_block(
    project: Project, tmp_path: Path
) -> None:
    project.hook("claude", start("c5"))
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "AGENTS.md").write_text("OUTSIDE\n")
    (outside / "deep" / "f.py").write_text("")
    (project.root / "link").symlink_to(outside)
    os.mkfifo(project.root / "pkg" / "AGENTS.local.md")
    for n, path in enumerate([outside / "deep/f.py", project.root / "link/deep/f.py"]):
        assert project.hook("claude", claude_read("c5", path, f"o{n}")) in (None,)
    text = project.hook("claude", claude_read("c5", project.root / "pkg/sub/x.py", "in"))
    assert text is not None and "PKG-AGENTS" in text and "OUTSIDE" not in text


def test_output_stays_within_the_cap_and_the_rest_waits(project: Project) -> None:
    project.write("pkg/AGENTS.md", "".join(f"line {i} " + "w" * 70 + "\n" for i in range(520)))
    project.hook("codex", start("x2"))
    read = {
        "hook_event_name": "PostToolUse",
        "session_id": "x2",
        "tool_name": "apply_patch",
        "tool_input": {
            "input": "*** Begin Patch\n*** Update File: pkg/sub/x.py\n@@\n-x\n+y\n*** End Patch"
        },
        "tool_use_id": "p1",
    }
    text = project.hook("codex", read)
    assert text is not None and len(text) <= INLINE_CAP
    assert "Workspace instruction budget" in text


def test_a_forty_kilobyte_nested_file_stays_within_claudes_cap(project: Project) -> None:
    project.write("pkg/AGENTS.md", "".join(f"rule {i} " + "z" * 70 + "\n" for i in range(520)))
    project.hook("claude", start("c6"))
    text = project.hook("claude", claude_read("c6", project.root / "pkg/sub/x.py", "t1"))
    assert text is not None and len(text) <= INLINE_CAP
    assert "Workspace instruction budget" in text and "rule 0 " in text


def test_bad_input_and_a_corrupt_home_exit_0_silently_with_one_log_line(
    project: Project, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    out = io.BytesIO()
    assert main(["--agent", "claude"], io.BytesIO(b"not json"), out) == 0
    assert out.getvalue() == b"" and project.log().count("\n") == 1
    (project.home / "sessions.sqlite3").write_bytes(b"garbage" * 100)
    assert project.hook("claude", start("c7")) is None
    assert "file is not a database" in project.log()


def test_a_store_busy_past_the_hooks_wait_keeps_the_touch(project: Project) -> None:
    """The lock is held until the hook has answered: the hook waits what its budget allows
    (``hooks/budget.py``), then keeps the touch."""
    project.hook("claude", start("c8"))
    store_path = project.home / "sessions.sqlite3"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sqlite3, sys, time\n"
                f"db = sqlite3.connect({str(store_path)!r}, isolation_level=None)\n"
                "db.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\n"
                "sys.stdin.readline()\n"
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        began = time.monotonic()
        assert (
            project.hook("claude", claude_read("c8", project.root / "pkg/sub/x.py", "t1")) is None
        )
        took = time.monotonic() - began
        assert "store busy" in project.log()
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(10)
    print(f"busy answer in {took:.3f}s")
    # An event that answers nothing (Claude's Stop) leaves the kept touch where it is ...
    assert project.hook("claude", {"hook_event_name": "Stop", "session_id": "c8"}) is None
    # ... and it arrives with the next event that answers.
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "c8", "prompt": "go"}
    text = project.hook("claude", prompt)
    assert text is not None and "PKG-AGENTS" in text


def test_compaction_sends_again_what_the_agent_lost(project: Project) -> None:
    project.hook("claude", start("c9"))
    project.hook("claude", claude_read("c9", project.root / "pkg/sub/x.py", "t1"))
    again = project.hook("claude", start("c9", source="compact"))
    assert again is not None
    assert "ROOT-AGENTS" in again and "PKG-AGENTS" in again and "PKG-CLAUDE" not in again


def test_a_print_that_fails_records_nothing(project: Project) -> None:
    class Broken(io.BytesIO):
        def flush(self) -> None:
            raise BrokenPipeError

    payload = {"cwd": str(project.root), **start("c10")}
    assert main(["--agent", "claude"], io.BytesIO(json.dumps(payload).encode()), Broken()) == 0
    db = sqlite3.connect(project.home / "sessions.sqlite3")
    try:
        assert db.execute(
            "SELECT COUNT(*) FROM events WHERE session_id = 'claude:c10'"
        ).fetchone() == (0,)
    finally:
        db.close()
    assert project.hook("claude", start("c10")) is not None  # so the next event sends it


def test_a_pre_tool_event_keeps_the_targets_instructions_for_the_after_tool_event(
    project: Project,
) -> None:
    project.hook("claude", start("c11"))
    target = project.root / "other" / "new.py"
    pre = {
        "hook_event_name": "PreToolUse",
        "session_id": "c11",
        "tool_name": "Write",
        "tool_input": {"file_path": str(target), "content": "y = 2\n"},
        "tool_use_id": "w1",
    }
    assert project.hook("claude", pre) is None
    target.write_text("y = 2\n")
    post = {**pre, "hook_event_name": "PostToolUse"}
    text = project.hook("claude", post)
    assert text is not None and text.count("SIBLING-AGENTS") == 1


def test_usage_errors_exit_1_never_2_which_agents_read_as_block(project: Project) -> None:
    # copilot-vscode and cursor are agents of the registry without hooks of their own: the
    # quick reading of the command line refuses them as argparse's choices do.
    for argv in (
        ["--agent", "nope"],
        [],
        ["--agent", "claude", "--frob"],
        ["--agent", "copilot-vscode"],
        ["--agent=cursor"],
    ):
        assert main(argv, io.BytesIO(b"{}"), io.BytesIO()) == 1
    assert main(["--agent=claude", "--mode=all"], io.BytesIO(b"{}"), io.BytesIO()) == 0


def test_a_twin_of_a_file_the_agent_loads_is_not_sent_again(project: Project) -> None:
    project.write("CLAUDE.md", "ROOT-AGENTS\n")  # the same text as AGENTS.md
    project.write("pkg/CLAUDE.md", "  PKG-AGENTS\n\n")  # the same, trimmed
    text = project.hook("claude", start("c12"))
    assert text is not None and "USER-GLOBAL" in text and "ROOT-AGENTS" not in text
    read = project.hook("claude", claude_read("c12", project.root / "pkg/sub/x.py", "t1"))
    assert read is None
    project.write("pkg/AGENTS.md", "PKG-AGENTS-CHANGED\n")
    changed = project.hook("claude", claude_read("c12", project.root / "pkg/sub/x.py", "t2"))
    assert changed is not None and "PKG-AGENTS-CHANGED" in changed


def test_gemini_prompts_lose_the_hook_context_and_retries_are_recognised(project: Project) -> None:
    baseline = project.hook("gemini", start("g2"))
    assert baseline is not None
    before = {
        "hook_event_name": "BeforeAgent",
        "session_id": "g2",
        "timestamp": "2026-12-04T04:50:00Z",
        "prompt": f"<hook_context>{baseline}</hook_context>\n\nRead it.",
    }
    assert project.hook("gemini", before) is None
    after = {
        "hook_event_name": "AfterTool",
        "session_id": "g2",
        "timestamp": "2026-12-04T04:50:01Z",
        "tool_name": "read_file",
        "tool_input": {"file_path": "pkg/sub/x.py"},
    }
    first = project.hook("gemini", after)
    assert first is not None and "PKG-AGENTS" in first
    project.write("pkg/AGENTS.md", "PKG-AGENTS-V2\n")
    assert project.hook("gemini", after) is None  # the same call's hook again
    store = Store(str(project.home / "sessions.sqlite3"))
    prompts = [
        e.data["content"][0]["text"]
        for e in store.surface_events("gemini:g2")
        if e.data.get("source", {}).get("kind") == "user"
    ]
    assert prompts == ["Read it."]
    store.close()


def test_a_resumed_gemini_session_gets_again_what_went_before_its_prompts(
    project: Project,
) -> None:
    assert project.hook("gemini", start("g3")) is not None
    read = {
        "hook_event_name": "AfterTool",
        "session_id": "g3",
        "timestamp": "t1",
        "tool_name": "read_file",
        "tool_input": {"file_path": "pkg/sub/x.py"},
    }
    assert project.hook("gemini", read) is not None
    again = project.hook("gemini", start("g3", source="resume"))
    # The baseline went before the first prompt and is gone; pkg's files came with a tool result.
    assert again is not None and "USER-GLOBAL" in again and "PKG-AGENTS" not in again
    # Claude Code keeps it all when it resumes: nothing again.
    project.hook("claude", start("c13"))
    assert project.hook("claude", start("c13", source="resume")) is None


def test_a_huge_instruction_file_is_never_read_or_sent(project: Project) -> None:
    project.hook("claude", start("c14"))
    (project.root / "pkg" / "AGENTS.md").write_bytes(b"HUGE " * 300_000)  # 1.5 MB > 1 MiB
    text = project.hook("claude", claude_read("c14", project.root / "pkg/sub/x.py", "t1"))
    assert text is None or "HUGE" not in text

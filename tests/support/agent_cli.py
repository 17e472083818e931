"""Run the real agent CLIs headless, in a sandbox, against the fake model.

Each run gets a throwaway HOME (Codex's ``CODEX_HOME`` and Gemini's ``~/.gemini`` inside it), an
environment built from scratch (nothing of the caller's leaks in but PATH and the locale), the
CLI pointed at a :class:`FakeModel` on 127.0.0.1, telemetry and updaters off, and every proxy
variable pointing at a :class:`ProxyTrap` with only 127.0.0.1/localhost exempt: a request to
any other address is refused there, and recorded (``AgentRun.outside_attempts``).

    run = run_agent("codex", cwd=repo, prompt="read x.py", script=[ReadFile("x.py")],
                    home=tmp_path / "home")
    assert run.exit_code == 0, run.stderr
    assert count_in(run.main_requests[1], "MARKER") == 1

The CLIs are the pinned ones of scripts/install-agent-clis (.tools/agent-clis/).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tests.support.fake_model import FakeModel
from tests.support.hooks import HookConfig, install_hooks
from tests.support.proxy_trap import ProxyTrap
from tests.support.recorded import RecordedRequest
from tests.support.steps import Policy, Step

Agent = Literal["claude", "codex", "gemini", "copilot", "qwen"]
# The agents the sidecar's hooks feed and every hook test runs against. GitHub Copilot CLI and
# Qwen Code run here too (ALL_AGENTS: the harness and smoke tests) and join the hook tests
# through their own tuples as their adapters land.
AGENTS: tuple[Agent, ...] = ("claude", "codex", "gemini")
ALL_AGENTS: tuple[Agent, ...] = (*AGENTS, "copilot", "qwen")
VERSIONS: dict[Agent, str] = {
    "claude": "2.1.332",
    "codex": "0.171.0",
    "gemini": "0.61.0",
    "copilot": "1.0.102",
    "qwen": "0.24.4",
}
# The model name the Chat Completions CLIs are told to use (the fake answers any name).
CHAT_MODEL = "gpt-4.1"

REPO = Path(__file__).resolve().parents[2]
# Where scripts/install-agent-clis puts them; DSH_TEST_AGENT_CLIS names another install of the
# same pinned versions (a dev-loop convenience, e.g. one install shared by several checkouts).
CLI_HOME = Path(os.environ.get("DSH_TEST_AGENT_CLIS") or REPO / ".tools" / "agent-clis")
CLI_BIN = CLI_HOME / "node_modules" / ".bin"
INSTALL_HINT = "run scripts/install-agent-clis (installs the pinned CLIs into .tools/agent-clis/)"


def not_installed_message(missing: list[str]) -> str:
    return f"agent CLIs not installed in {CLI_HOME} ({', '.join(missing)}): {INSTALL_HINT}"


FAKE_KEY = "dummy-key-for-the-fake-model"


def cli_path(agent: Agent) -> Path:
    return CLI_BIN / agent


def missing_clis(agents: Sequence[Agent] = ALL_AGENTS) -> list[str]:
    """Those of ``agents`` whose pinned CLI is not installed (empty when all are there)."""
    return [agent for agent in agents if not os.access(cli_path(agent), os.X_OK)]


@dataclass
class AgentRun:
    agent: Agent
    exit_code: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    requests: list[RecordedRequest]  # every request the CLI sent the fake model, in order
    home: Path
    cwd: Path
    command: list[str] = field(default_factory=list)
    # Requests for any address but 127.0.0.1/localhost, as the proxy trap saw them.
    outside_attempts: list[str] = field(default_factory=list)

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.main]

    def events(self) -> list[dict[str, Any]]:
        """The CLI's JSON-lines output (stream-json / --json), skipping any other line."""
        out = []
        for line in self.stdout.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
        return out

    def describe(self) -> str:
        """For assertion messages: what ran and what it said."""
        return (
            f"{' '.join(self.command)}\nexit {self.exit_code}\n"
            f"--- stdout (tail)\n{self.stdout[-3000:]}\n--- stderr (tail)\n{self.stderr[-3000:]}"
        )


# The throwaway HOMEs ``run_agent`` made, outside pytest's temp directory: a hook the agent ran
# there may have started a resident hook engine under ``~/.dsh``, which tests/conftest.py stops.
THROWAWAY_HOMES: list[Path] = []


def base_env(home: Path, proxy: str) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "TMPDIR": str(home / "tmp"),
    }
    for name in (
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "https_proxy",
        "http_proxy",
        "all_proxy",
    ):
        env[name] = proxy
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def prepare(agent: Agent, home: Path, model: FakeModel, proxy: str) -> dict[str, str]:
    """Write the agent's config into ``home`` and return its environment."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(exist_ok=True)
    env = base_env(home, proxy)
    if agent == "claude":
        env |= {
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Lets --dangerously-skip-permissions run as root (CI runs as root).
            "IS_SANDBOX": "1",
        }
    elif agent == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(codex_config(model.base_url))
        env |= {"CODEX_HOME": str(codex_home), "FAKE_API_KEY": FAKE_KEY}
    elif agent == "copilot":
        share_copilot_package(home / ".cache")
        env |= {
            "COPILOT_PROVIDER_BASE_URL": f"{model.base_url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": FAKE_KEY,
            "COPILOT_MODEL": CHAT_MODEL,
            # No GitHub login, no update check, no telemetry.
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
        }
    elif agent == "qwen":
        _write_json(home / ".qwen" / "settings.json", qwen_settings())
        env |= {
            "OPENAI_BASE_URL": f"{model.base_url}/v1",
            "OPENAI_API_KEY": FAKE_KEY,
            "OPENAI_MODEL": CHAT_MODEL,
        }
    else:
        _write_json(home / ".gemini" / "settings.json", gemini_settings())
        env |= {
            "GEMINI_API_KEY": FAKE_KEY,
            "GOOGLE_GEMINI_BASE_URL": model.base_url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
    return env


# Copilot CLI's native binary unpacks its whole package (about 235 MB) into
# $XDG_CACHE_HOME/copilot/pkg/<platform>/<version> the first time it runs under a HOME: every test
# with a throwaway HOME paid that in time and disk (a run of the conformance and hook tests filled
# a 60 GB disk). It is unpacked once, under a lock, beside the installed CLIs, and each HOME's
# cache gets a link to it; everything else Copilot caches stays in the HOME.
COPILOT_PACKAGE = CLI_HOME / "copilot-unpacked"


def share_copilot_package(cache: Path) -> None:
    """Link ``cache``/copilot/pkg to the package unpacked once for every run."""
    import fcntl

    shared = COPILOT_PACKAGE / "copilot" / "pkg"
    COPILOT_PACKAGE.mkdir(parents=True, exist_ok=True)
    with open(COPILOT_PACKAGE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers: one unpacks, the others wait for it
        done = COPILOT_PACKAGE / f".unpacked-{VERSIONS['copilot']}"
        if not done.exists():
            scratch = Path(tempfile.mkdtemp(prefix="dsh-copilot-unpack-"))
            try:
                subprocess.run(
                    [str(cli_path("copilot")), "--version"],
                    env={
                        "HOME": str(scratch),
                        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                        "XDG_CACHE_HOME": str(COPILOT_PACKAGE),
                        "COPILOT_OFFLINE": "true",
                        "COPILOT_AUTO_UPDATE": "false",
                    },
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=True,
                    timeout=120,
                )
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            assert shared.is_dir(), f"copilot --version unpacked nothing into {COPILOT_PACKAGE}"
            done.touch()
    (cache / "copilot").mkdir(parents=True, exist_ok=True)
    link = cache / "copilot" / "pkg"
    if not link.is_symlink():
        link.symlink_to(shared, target_is_directory=True)


def codex_config(base_url: str) -> str:
    return (
        'model_provider = "fake"\n'
        'model = "gpt-5.5"\n'
        "check_for_update_on_startup = false\n"
        "[analytics]\nenabled = false\n"
        "[feedback]\nenabled = false\n"
        # Otherwise every start syncs the curated plugins from github.com / chatgpt.com.
        "[features]\nplugins = false\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "FAKE_API_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def gemini_settings() -> dict[str, Any]:
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }


def qwen_settings() -> dict[str, Any]:
    return {
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        # Otherwise a turn may end with a request of Qwen's own "managed memory extraction"
        # agent, which the fake would answer with the script's next step.
        "memory": {"enableManagedAutoMemory": False},
    }


def command(agent: Agent, prompt: str, hooks: HookConfig | None, resume: bool) -> list[str]:
    """The headless command line; ``resume`` continues the latest session of this HOME."""
    cli = str(cli_path(agent))
    if agent == "claude":
        again = ["--continue"] if resume else []
        return [
            cli,
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
            *again,
        ]
    if agent == "codex":
        trust = ["--dangerously-bypass-hook-trust"] if hooks is not None else []
        again = ["resume", "--last"] if resume else []
        return [
            cli,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            *trust,
            *again,
            prompt,
        ]
    if agent == "copilot":
        again = ["--continue"] if resume else []
        # Folder trust loads the project's hook files (.github/hooks, .claude/settings.json).
        trust = ["--trust-folder"] if hooks is not None and hooks.scope == "project" else []
        return [
            cli,
            "-p",
            prompt,
            "--allow-all-tools",
            "--output-format",
            "json",
            "--disable-client-telemetry",
            *trust,
            *again,
        ]
    if agent == "qwen":
        again = ["--continue"] if resume else []
        return [cli, "-p", prompt, "--output-format", "stream-json", "--yolo", *again]
    again = ["--resume", "latest"] if resume else []
    return [cli, "-p", prompt, "--output-format", "stream-json", "--skip-trust", "--yolo", *again]


def run_agent(
    agent: Agent,
    cwd: Path,
    prompt: str,
    script: Sequence[Step] | Policy = (),
    *,
    home: Path | None = None,
    hooks: HookConfig | None = None,
    model: FakeModel | None = None,
    extra_env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    resume: bool = False,
    timeout: float = 180,
) -> AgentRun:
    """Run one headless turn of ``agent`` in ``cwd`` and return what happened.

    ``script`` drives the fake model (ignored when you pass your own ``model``: script that one
    yourself). ``home`` is the throwaway HOME (a fresh temp dir by default, kept for
    inspection). ``hooks`` are installed in the agent's documented place first. ``resume``
    continues the latest session in ``home`` (Claude ``--continue``, Codex ``exec resume
    --last``, Gemini ``--resume latest``); pass the same ``home`` and ``hooks`` as the first run.
    """
    missing = missing_clis([agent])
    assert not missing, not_installed_message(missing)
    if home is None:
        home = Path(tempfile.mkdtemp(prefix=f"dsh-{agent}-home-"))
        THROWAWAY_HOMES.append(home)
    own_model = model is None
    fake = FakeModel().start() if model is None else model
    trap = ProxyTrap().start()
    try:
        if own_model:
            fake.script(script)
        env = prepare(agent, home, fake, trap.url)
        if hooks is not None:
            env |= install_hooks(agent, hooks, home=home, cwd=cwd)
        env |= dict(extra_env or {})
        argv = [*command(agent, prompt, hooks, resume), *extra_args]
        exit_code, stdout, stderr = _run(argv, cwd, env, timeout)
        requests = fake.requests
    finally:
        trap.stop()
        if own_model:
            fake.stop()
    return AgentRun(agent, exit_code, stdout, stderr, requests, home, cwd, argv, trap.attempts)


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[int | None, str, str]:
    # A session of its own, so a timeout kills the CLI's children (hooks, shells) too.
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        return proc.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return None, stdout, stderr + f"\n[harness: killed after {timeout}s]"

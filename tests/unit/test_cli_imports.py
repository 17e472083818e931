"""Each ``dsh-sidecar`` command imports only what it uses (issue 23, CLI start-up).

Start-up time is mostly importing: a command that pulls in pygls, the wire mapping or the
session store for nothing pays for it on every run. Each command runs here in a fresh
interpreter, as the console script runs it, and the modules loaded by the time it exits are
checked: what it must not load, and one module it must (so the check cannot pass vacuously).
Time itself is measured by bench/cli_startup.py, never here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Loads the console script's entry point and records sys.modules at exit, after the command.
DRIVER = """
import atexit, json, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from dsh_sidecar.launch import main
sys.exit(main(sys.argv[2:]))
"""

# Only ``serve`` needs the language server stack; nothing else may load it.
SERVER_STACK = ("pygls", "lsprotocol", "cattrs", "asyncio", "dsh_sidecar.lsp")
# The baseline engine and its gitignore matcher (the session listing reads only state.py).
ENGINE = ("dsh_sidecar.sources.agent_instructions.baseline", "pathspec")
WIRE = ("dsh_sidecar.protocol",)
STORE = ("sqlite3", "dsh_sidecar.sessions")
EXPLAIN = ("dsh_sidecar.explain",)
# The agents' records: what explain compares, and where the hooks commands read each agent's
# settings files, events and trust step (dsh_sidecar/agents/registry.py).
AGENTS = ("dsh_sidecar.agents",)
HOOKS = ("dsh_sidecar.hooks",)

# command -> (arguments, prefixes it must not load, a module it must load)
COMMANDS: dict[str, tuple[list[str], tuple[str, ...], str]] = {
    "version": (
        ["--version"],
        (
            *SERVER_STACK,
            *ENGINE,
            *WIRE,
            *STORE,
            *EXPLAIN,
            *AGENTS,
            *HOOKS,
            "attrs",
            "dsh_sidecar.config",
        ),
        "argparse",
    ),
    "preview": (
        ["preview", "{root}"],
        SERVER_STACK + WIRE + STORE + EXPLAIN + AGENTS + HOOKS,
        "dsh_sidecar.sources.agent_instructions.baseline",
    ),
    "preview --json": (
        ["preview", "--json", "{root}"],
        SERVER_STACK + STORE + EXPLAIN + AGENTS + HOOKS,
        "dsh_sidecar.protocol.mapping",
    ),
    "scopes": (
        ["scopes", "{root}/AGENTS.md"],
        SERVER_STACK + WIRE + STORE + EXPLAIN + AGENTS + HOOKS,
        "dsh_sidecar.sources.agent_instructions.baseline",
    ),
    "explain": (
        ["explain", "{root}/AGENTS.md"],
        SERVER_STACK + WIRE + STORE + HOOKS,
        "dsh_sidecar.explain",
    ),
    "doctor": (
        ["doctor"],
        SERVER_STACK + WIRE + EXPLAIN,
        "dsh_sidecar.sessions.store",
    ),
    "sessions": (
        ["sessions"],
        SERVER_STACK + ENGINE + WIRE + EXPLAIN + AGENTS + HOOKS,
        "dsh_sidecar.sessions.listing",
    ),
    "hooks status": (
        ["hooks", "status"],
        SERVER_STACK + WIRE + STORE + EXPLAIN,
        "dsh_sidecar.hooks.manage",
    ),
    # Up to ready: with its input already at end, the server starts, reads nothing and exits.
    "serve": (
        ["serve"],
        (*HOOKS, "dsh_sidecar.sessions.listing", "dsh_sidecar.explain.text"),
        "pygls",
    ),
}


def loaded_modules(argv: list[str], cwd: Path, tmp_path: Path) -> list[str]:
    out = tmp_path / "modules.json"
    env = {**os.environ, "DSH_HOME": str(tmp_path / "dsh"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    # doctor reports an unhealthy machine (no tmux, say) with status 1; it still ran through.
    assert done.returncode in (0, 1), done.stderr.decode()
    modules: list[str] = json.loads(out.read_text())
    return modules


def matching(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_loads_only_what_it_uses(name: str, tmp_path: Path) -> None:
    argv_template, forbidden, required = COMMANDS[name]
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("rules\n")
    argv = [part.format(root=root) for part in argv_template]
    modules = loaded_modules(argv, root, tmp_path)
    assert required in modules
    assert matching(modules, forbidden) == []

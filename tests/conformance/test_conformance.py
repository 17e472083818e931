"""The agent models (dsh_sidecar.agents, interpreted by explain/simulate.py) against the real CLIs:
every tree of trees.py runs through Claude Code, Codex CLI and Gemini CLI (the pinned releases of
scripts/install-agent-clis, driven by tests/support) with one read of a file below the working
directory, and every marker the CLI sent, and when, must be what the model predicts; so must
the text (and size) the model says the agent sends of each file.
``scripts/conformance`` reruns just this (docs/reference/agent-models.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_sidecar.agents import AGENTS
from tests.support.agent_cli import VERSIONS, Agent, run_agent
from tests.support.steps import ReadFile, Text

from .compare import (
    CLI_AGENT,
    build,
    disagreements,
    observed,
    predicted,
    rules_of,
    sent_text_problems,
    where,
)
from .trees import TREES

pytestmark = pytest.mark.agent_clis
PROMPT = "Read the file you are asked about and answer in one word."


def read_step(cli: Agent, cwd: Path, target: Path) -> ReadFile:
    # Claude Code's and Gemini CLI's read tools take the absolute path; Codex runs `cat` with the
    # path a model usually writes, relative to its working directory.
    return ReadFile(os.path.relpath(target, cwd) if cli == "codex" else str(target))


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_every_tree_matches_the_model(cli: Agent, tmp_path: Path) -> None:
    rules = rules_of(cli)
    assert rules.verified is not None and rules.verified.version == VERSIONS[cli]
    found: list[str] = []
    sent = 0
    for n, tree in enumerate(TREES):
        base = tmp_path / f"t{n}"
        built = build(tree, base, f"{n}{cli[0]}")
        home, cwd, target = base / "home", base / tree.cwd, base / tree.read
        run = run_agent(cli, cwd, PROMPT, [read_step(cli, cwd, target), Text("done")], home=home)
        assert run.exit_code == 0, f"{tree.name}: {run.describe()}"
        assert not run.outside_attempts, run.outside_attempts
        seen = observed(cli, built, run)
        sent += len(seen)
        here = where(built, home, home / ".codex")
        expected = predicted(rules, built, here)
        found.extend(f"{tree.name}: {d}" for d in disagreements(expected, seen, built))
        found.extend(f"{tree.name}: {p}" for p in sent_text_problems(rules, here, run, built))
    print(
        f"{cli} {VERSIONS[cli]}: {len(TREES)} trees, {sent} markers sent, {len(found)} disagreements"
    )
    assert sent >= 10, "the CLI sent almost nothing: the fake model run is broken"
    assert not found, "\n".join(found)


def test_every_cli_agent_names_its_verified_release() -> None:
    for cli, version in VERSIONS.items():
        rules = next(r for r in AGENTS if r.id == CLI_AGENT[cli])
        assert rules.verified is not None, cli
        assert rules.verified.version == version

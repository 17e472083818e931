"""The agent models (dsh_sidecar.agents, interpreted by explain/simulate.py) against the real CLIs:
every tree of trees.py is run through Claude Code, Codex CLI and Gemini CLI with one read of a
file below the working directory, and every marker the CLI sent, and when, must be what the model
predicts. ``scripts/conformance`` reruns just this (after a CLI release, with DSH_AGENT_CLIS)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_sidecar.agents import AGENTS

from .clis import cli_path, run_cli
from .compare import CLI_AGENT, build, disagreements, observed, predicted, rules_of, where
from .fake_model import FakeModel
from .trees import TREES

pytestmark = pytest.mark.agent_clis


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_every_tree_matches_the_model(cli: str, tmp_path: Path) -> None:
    if not cli_path(cli).exists():
        pytest.fail(f"{cli_path(cli)} is missing: run scripts/bootstrap", pytrace=False)
    rules = rules_of(cli)
    found: list[str] = []
    sent = 0
    with FakeModel() as model:
        for n, tree in enumerate(TREES):
            base = tmp_path / f"t{n}"
            built = build(tree, base, f"{n}{cli[0]}")
            home = base / "home"
            scratch = base / "scratch"
            run = run_cli(cli, model, base / tree.cwd, home, base / tree.read, scratch)
            assert run.returncode == 0, f"{cli} on {tree.name}: {run.output}"
            seen = observed(cli, built, run)
            sent += len(seen)
            expected = predicted(rules, built, where(built, home, scratch / "codex-home"))
            found.extend(f"{tree.name}: {d}" for d in disagreements(expected, seen, built))
    print(f"{cli}: {len(TREES)} trees, {sent} markers sent, {len(found)} disagreements")
    assert sent >= 10, "the CLI sent almost nothing: the fake model run is broken"
    assert not found, "\n".join(found)


def test_every_cli_agent_names_its_verified_release() -> None:
    for agent_id in CLI_AGENT.values():
        rules = next(r for r in AGENTS if r.id == agent_id)
        assert rules.verified is not None, agent_id

"""One conformance tree through one CLI: build it, run the CLI headless against the fake model
with one read of the tree's file, and list every way what the CLI sent differs from what the
model predicts (markers and when they came, sent bytes). Shared by the fixed trees, the
generated sample and ``scripts/conformance --generated``."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from tests.support.agent_cli import Agent, run_agent
from tests.support.steps import ReadFile, Text

from .compare import (
    build,
    copies_problems,
    disagreements,
    observed,
    predicted,
    rules_of,
    sent_text_problems,
    where,
)
from .trees import Tree

PROMPT = "Read the file you are asked about and answer in one word."


@attrs.frozen
class Checked:
    found: list[str]  # each disagreement, prefixed with the tree's name
    sent: int  # markers the CLI sent


def read_step(cli: Agent, cwd: Path, target: Path) -> ReadFile:
    # Claude Code's and Gemini CLI's read tools take the absolute path; Codex runs `cat` with the
    # path a model usually writes, relative to its working directory.
    return ReadFile(os.path.relpath(target, cwd) if cli == "codex" else str(target))


def check_tree(cli: Agent, tree: Tree, base: Path, tag: str) -> Checked:
    rules = rules_of(cli)
    built = build(tree, base, tag)
    home, cwd, target = base / "home", base / tree.cwd, base / tree.read
    run = run_agent(cli, cwd, PROMPT, [read_step(cli, cwd, target), Text("done")], home=home)
    assert run.exit_code == 0, f"{tree.name}: {run.describe()}"
    assert not run.outside_attempts, run.outside_attempts
    seen = observed(cli, built, run)
    here = where(built, home, home / ".codex")
    expected = predicted(rules, built, here)
    found = [f"{tree.name}: {d}" for d in disagreements(expected, seen, built)]
    found.extend(f"{tree.name}: {p}" for p in sent_text_problems(rules, here, run, built))
    found.extend(f"{tree.name}: {p}" for p in copies_problems(rules, here, run, built))
    return Checked(found, len(seen))

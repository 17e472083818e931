"""Claude Code's `.claude/rules` `paths` globs, against the real CLI: the sidecar's `claude` rule
set (and explain's Claude block, which uses the same matcher) predicts exactly the rules that
reach the model after a Read.

One rule file per pattern, each with a unique marker; one headless turn reads one file; a rule
whose marker is in the request after the read is one the CLI matched. Claude Code's own
documentation says `*.md` is "Markdown files in the project root"; the CLI matches it at any
depth, which is what the sidecar follows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions.rules import applicability
from tests.support.agent_cli import run_agent
from tests.support.recorded import count_in
from tests.support.steps import ReadFile, Text

pytestmark = pytest.mark.agent_clis

PATTERNS = [
    "*.md", "*.py", "**/*.PY", "*.PY", "src/**", "deep/**", "**/*.py", "src/deep/*.py",
    "/deep/**", "x.py", "DEEP/**", "rc/**", "repo/src/**", "/src/**", "*", "src/*", "src/*.py",
    "deep", "src", "s*/x.py", "src/**/x.py", "src/deep", "src/deep/", "!src/**",
]  # fmt: skip


def marker(index: int) -> str:
    return f"PATHS-RULE-{index:02d}-c41e"


@pytest.mark.parametrize("target", ["src/deep/x.py", "docs/a.md"])
def test_claude_code_loads_the_rules_the_sidecar_predicts(target: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    rules = repo / ".claude" / "rules"
    rules.mkdir(parents=True)
    for index, pattern in enumerate(PATTERNS):
        quoted = pattern.replace("'", "''")
        (rules / f"r{index:02d}.md").write_text(f"---\npaths: '{quoted}'\n---\n{marker(index)}\n")
    for rel in ("src/deep/x.py", "docs/a.md"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("content\n")

    run = run_agent(
        "claude", repo, f"Read {target}.", [ReadFile(str(repo / target)), Text("Done.")],
        home=tmp_path / "home", timeout=180,
    )  # fmt: skip

    assert run.exit_code == 0, run.describe()
    first, second = run.main_requests
    loaded = {p for i, p in enumerate(PATTERNS) if count_in(second, marker(i))}
    assert not any(count_in(first, marker(i)) for i in range(len(PATTERNS)))
    predicted = {
        p
        for p in PATTERNS
        if applicability(RULE_SETS["claude"], f"---\npaths: '{p}'\n---\n").matches(target)
    }
    assert loaded == predicted

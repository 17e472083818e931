"""docs/migrating.md and the explain section of docs/cli.md against the code: their settings
examples are valid, and the convention settings are marked as coming exactly while this build lacks
them. (The page's explain example runs as written in test_cli_docs.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dsh_sidecar.config import Settings, parse_settings, settings_to_json

DOCS = Path(__file__).resolve().parents[2] / "docs"
MIGRATING = (DOCS / "migrating.md").read_text(encoding="utf-8")
CLI = (DOCS / "cli.md").read_text(encoding="utf-8")
CONVENTIONS = ("overrideFiles", "imports", "ruleSets", "userGlobalFiles")
COMING = "coming with the conventions work"


def test_settings_examples_are_accepted() -> None:
    blocks = re.findall(r"^```json\n(.*?)\n```", MIGRATING, re.MULTILINE | re.DOTALL)
    assert blocks
    for block in blocks:
        parse_settings(json.loads(block))


@pytest.mark.parametrize("name", CONVENTIONS)
def test_convention_settings_are_marked_while_missing(name: str) -> None:
    known = name in settings_to_json(Settings())["instructions"]
    # Each table row or paragraph naming the setting says whether it is in this build.
    chunks = [c for c in re.split(r"\n\s*\n|\n(?=\|)", MIGRATING) if f"instructions.{name}" in c]
    assert chunks, name
    for chunk in chunks:
        assert (COMING in " ".join(chunk.split())) is not known, chunk


def test_migrating_names_the_release_each_checked_model_was_verified_against() -> None:
    from dsh_sidecar.agents import AGENTS

    checked = [a for a in AGENTS if a.verified is not None]
    assert {a.id for a in checked} == {"claude", "codex", "copilot-cli", "gemini", "qwen-code"}
    text = " ".join(MIGRATING.split())
    for agent in checked:
        assert agent.verified is not None
        assert f"{agent.name} {agent.verified.version}" in text, agent.name

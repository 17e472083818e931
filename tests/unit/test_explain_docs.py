"""docs/migrating.md and the explain section of docs/cli.md against the code: their settings
examples are valid, the convention settings are marked as coming exactly while this build lacks
them, and the documented example output is what the command prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from instrkit import write_tree

from dsh_sidecar.cli import main
from dsh_sidecar.config import Settings, settings_to_json

DOCS = Path(__file__).resolve().parents[2] / "docs"
MIGRATING = (DOCS / "migrating.md").read_text(encoding="utf-8")
CLI = (DOCS / "cli.md").read_text(encoding="utf-8")
CONVENTIONS = ("overrideFiles", "imports", "ruleSets", "userGlobalFiles")
COMING = "coming with the conventions work"


def test_settings_examples_are_accepted() -> None:
    blocks = re.findall(r"^```json\n(.*?)\n```", MIGRATING, re.MULTILINE | re.DOTALL)
    assert blocks
    for block in blocks:
        Settings.from_json(json.loads(block))


@pytest.mark.parametrize("name", CONVENTIONS)
def test_convention_settings_are_marked_while_missing(name: str) -> None:
    known = name in settings_to_json(Settings())["instructions"]
    # Each table row or paragraph naming the setting says whether it is in this build.
    chunks = [c for c in re.split(r"\n\s*\n|\n(?=\|)", MIGRATING) if f"instructions.{name}" in c]
    assert chunks, name
    for chunk in chunks:
        assert (COMING in " ".join(chunk.split())) is not known, chunk


def test_the_documented_example_is_what_explain_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    section = CLI[CLI.index("## `explain FILE`") :]
    example = re.search(r"```\n\$ cd (\S+) && dsh-sidecar explain app.ts\n(.*?)\n  …\n```",
                        section, re.DOTALL)  # fmt: skip
    assert example is not None
    write_tree(
        tmp_path,
        {
            "home/AGENTS.md": "Answer in English.\n",
            "proj/.git/": "",
            "proj/AGENTS.md": "Run `make test` before committing.\n",
            "proj/CLAUDE.md": "Run `make test` before committing.",
            "proj/web/AGENTS.md": "Use TypeScript strict mode.\n",
            "proj/web/app.ts": "",
        },
    )
    monkeypatch.setenv("HOME", str(tmp_path / "os-home"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path / "proj/web")
    assert main(["explain", "app.ts"]) == 0
    printed = capsysbinary.readouterr().out.decode().replace(str(tmp_path), "/tmp/demo")
    documented = example.group(2)
    assert printed.startswith(documented + "\n")

"""explain reads project files through the sidecar's trust boundary: a rule file (or any project
file) whose real path is outside the project is reported, never read, and nothing of it (its
globs, its imports) appears in the explanation."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.explainkit import Tree, settings

from dsh_sidecar.explain.reading import read_file
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.confinement import Confinement

SECRET_GLOB = "secret-glob-7f3a/**"


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text(f'---\napplyTo: "{SECRET_GLOB}"\npaths: ["{SECRET_GLOB}"]\n---\n@x.md\n')
    (outside / "x.md").write_text("imported secret\n")
    return secret


def test_a_rule_file_linking_outside_is_reported_and_never_quoted(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    secret = _outside(tmp_path)
    (tree.project / ".github/instructions/leak.instructions.md").symlink_to(secret)
    (tree.project / ".claude/rules/leak.md").symlink_to(secret)
    (tree.project / ".cursor/rules/leak.mdc").symlink_to(secret)
    explanation = tree.explain("src/api/handler.py")
    text = json.dumps(explanation.to_json())
    assert SECRET_GLOB not in text
    assert "outside/x.md" not in text
    for agent_id, rel in [
        ("copilot-vscode", ".github/instructions/leak.instructions.md"),
        ("cursor", ".cursor/rules/leak.mdc"),
    ]:
        found = {f.display_path: f for f in explanation.agent(agent_id).files}
        assert found[rel].state == "unreadable", agent_id
        assert found[rel].reason == f"links outside the project to {secret}"


def test_a_link_allowed_by_the_user_is_read(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    secret = _outside(tmp_path)
    (tree.project / ".github/instructions/leak.instructions.md").symlink_to(secret)
    allowed = settings(allowedSymlinkTargets=[str(secret.parent)])
    explanation = tree.explain("src/api/handler.py", settings=allowed)
    found = {f.display_path: f for f in explanation.agent("copilot-vscode").files}
    assert found[".github/instructions/leak.instructions.md"].state == "unmatched"
    assert SECRET_GLOB in (found[".github/instructions/leak.instructions.md"].reason or "")


def test_read_file_reads_no_byte_of_a_file_outside(tmp_path: Path) -> None:
    secret = _outside(tmp_path)
    project = tmp_path / "p"
    project.mkdir()
    (project / "AGENTS.md").symlink_to(secret)
    got = read_file(LOCAL_FS, str(project / "AGENTS.md"), 1024, Confinement((str(project),)))
    assert got is not None and got.data == b"" and got.error is not None
    inside = read_file(LOCAL_FS, str(project / "AGENTS.md"), 1024, Confinement((str(tmp_path),)))
    assert inside is not None and inside.data.startswith(b"---")

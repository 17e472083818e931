"""explain reads project files through the sidecar's trust boundary: a rule file (or any project
file) whose real path is outside the project is reported, never read, and nothing of it (its
globs, its imports) appears in the explanation."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.explainkit import Tree, settings

from dsh_sidecar.explain.reading import read_file
from dsh_sidecar.explain.text import render_text
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
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
        # The agent reads the link; whether the rule applies is in the frontmatter the sidecar
        # does not read. The boundary is the sidecar's, said beside the agent's state.
        assert found[rel].state == "unknown", agent_id
        assert found[rel].reason == "whether it applies is in its frontmatter, not read here"
        assert found[rel].boundary == (
            f"links outside the project to {secret}: this sidecar does not read it"
        )


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
    assert got is not None and got.data == b"" and got.error is None
    assert got.boundary == f"links outside the project to {secret}"
    assert got.size == secret.stat().st_size and not got.complete and got.blank is None
    inside = read_file(LOCAL_FS, str(project / "AGENTS.md"), 1024, Confinement((str(tmp_path),)))
    assert inside is not None and inside.data.startswith(b"---")


class _SwapBeforeOpen(LocalFileSystem):
    """The real filesystem, where a hostile repository swaps ``directory`` for a link to
    ``elsewhere`` after the file below it was checked and before it is opened."""

    def __init__(self, directory: Path, elsewhere: Path) -> None:
        self.directory, self.elsewhere = directory, elsewhere

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        if not self.directory.is_symlink():
            self.directory.rename(self.directory.with_name("moved-away"))
            self.directory.symlink_to(self.elsewhere, target_is_directory=True)
        return super().open_for_read(path, follow_final_link=follow_final_link)


def test_a_directory_swapped_for_a_link_out_after_the_check_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("secret outside the project\n")
    project = tmp_path / "p"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "AGENTS.md").write_text("the checked file\n")
    fs = _SwapBeforeOpen(project / "pkg", outside)
    got = read_file(fs, str(project / "pkg" / "AGENTS.md"), 1024, Confinement((str(project),)))
    assert (project / "pkg").is_symlink()  # the swap happened between the check and the open
    assert got is not None and got.data == b""
    assert got.error == "replaced after it was checked"
    # Unconfined (the user's own files), a read follows the path as it now is.
    user = read_file(fs, str(project / "pkg" / "AGENTS.md"), 1024)
    assert user is not None and user.data == b"secret outside the project\n"


def test_an_instruction_file_linking_outside_is_what_the_agent_loads(tmp_path: Path) -> None:
    # Issue 33: the agents follow a link to a shared file outside the repository; the sidecar's
    # boundary is its own fact, said beside the agent's state and never in its place. For Claude
    # Code the linked CLAUDE.md also counts as found, so no AGENTS.md fallback.
    tree = Tree(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "CLAUDE.md").write_text("shared rules\n")
    for own in ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"):
        (tree.project / own).unlink()
    (tree.project / "CLAUDE.md").symlink_to(shared / "CLAUDE.md")
    explanation = tree.explain("src/api/handler.py")
    found = {f.display_path: f for f in explanation.agent("claude").files}
    linked = found["CLAUDE.md"]
    # What the agent makes of the text (frontmatter, comments) is not known without reading it.
    assert (linked.state, linked.when, linked.sent_bytes) == ("loaded", "start", None)
    assert linked.reason == "loaded when a session starts"
    assert linked.boundary == (
        f"links outside the project to {shared / 'CLAUDE.md'}: this sidecar does not read it, "
        "nor follow its imports"
    )
    assert found["AGENTS.md"].state == "not-read"
    assert "[dsh-sidecar: links outside the project to" in render_text(explanation)

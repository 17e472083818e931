"""Copilot's applyTo globs as VS Code matches them (its ComputeAutomaticInstructions: `*`, `**`
and `**/*` are every file; a pattern not starting with `/` or `**/` gets `**/` in front; the
absolute path is matched, ignoring case), in the sidecar's `copilot` rule set and in explain's
Copilot block alike; Claude Code's `paths` as the real CLI matches them; Cursor's `globs` keep
matching from their base (Cursor documents nothing else and has no CLI to observe here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.explainkit import Tree
from tests.support.instrkit import write_tree

from dsh_sidecar.explain.globs import compile_vscode_glob
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions.rules import RuleIndex, applicability

ROOT = "/home/u/proj"


@pytest.mark.parametrize(
    ("pattern", "rel", "matches"),
    [
        ("*.py", "x.py", True),
        ("*.py", "src/deep/x.py", True),  # **/ in front
        ("*.py", "src/x.pyc", False),
        ("src/**", "src/a/b.ts", True),
        ("src/**", "pkg/src/a.ts", True),  # a src folder at any depth
        ("src/**", "source/a.ts", False),
        ("**/*.SPEC.TS", "app/login.spec.ts", True),  # case is ignored
        ("**/*.spec.ts", "app/LOGIN.SPEC.TS", True),
        ("*", "any/thing/at/all.txt", True),
        ("**", "x", True),
        ("**/*", "a/b", True),
        ("/src/**", "src/a.py", False),  # rooted at the filesystem root, as VS Code roots it
        ("/home/u/proj/src/**", "src/a.py", True),
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "docs/sub/a.md", False),  # * stays within one folder
        ("{src,lib}/**/*.{ts,tsx}", "lib/x/y.tsx", True),
    ],
)
def test_apply_to_patterns(pattern: str, rel: str, matches: bool) -> None:
    glob = compile_vscode_glob(pattern)
    assert glob is not None and glob.matches(rel, ROOT) is matches


def test_the_copilot_rule_set_matches_like_vs_code(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "p",
        {
            ".git/": "",
            ".github/instructions/py.instructions.md": '---\napplyTo: "*.py"\n---\nPy.\n',
            ".github/instructions/spec.instructions.md": '---\napplyTo: "**/*.SPEC.TS"\n---\n',
            ".github/instructions/src.instructions.md": '---\napplyTo: "src/**"\n---\nSrc.\n',
            ".github/instructions/all.instructions.md": '---\napplyTo: "*"\n---\nAll.\n',
        },
    )

    def read(probe):  # type: ignore[no-untyped-def]
        return Path(probe.path).read_text(), None, None

    rules = {
        r.rel_path.rsplit("/", 1)[1]: r
        for r in RuleIndex(str(root), ["copilot"], LOCAL_FS, read).rules()
    }
    assert rules["py.instructions.md"].matches("pkg/deep/x.py")
    assert rules["spec.instructions.md"].matches("web/app.spec.ts")
    assert rules["src.instructions.md"].matches("pkg/src/a.c")
    assert not rules["src.instructions.md"].matches("pkg/a.c")
    assert rules["all.instructions.md"].matches("anything/at/all.md")


# Observed with the real Claude Code 2.1.332 (a fake model endpoint, a rule per pattern with a
# unique marker, one Read of src/deep/x.py or docs/a.md; which markers reached the model), which
# contradicts its documentation's "`*.md`: Markdown files in the project root".
CLAUDE_OBSERVED = [
    ("*.md", "docs/a.md", True),
    ("*.md", "src/deep/x.py", False),
    ("*.py", "src/deep/x.py", True),
    ("**/*.PY", "src/deep/x.py", True),
    ("*.PY", "src/deep/x.py", True),
    ("src/**", "src/deep/x.py", True),
    ("deep/**", "src/deep/x.py", True),
    ("**/*.py", "src/deep/x.py", True),
    ("src/deep/*.py", "src/deep/x.py", True),
    ("/deep/**", "src/deep/x.py", False),
    ("x.py", "src/deep/x.py", True),
    ("DEEP/**", "src/deep/x.py", True),
    ("rc/**", "src/deep/x.py", False),
    ("repo/src/**", "src/deep/x.py", False),
    ("/src/**", "src/deep/x.py", True),
    ("*", "src/deep/x.py", True),
    ("src/*", "src/deep/x.py", True),
    ("src/*.py", "src/deep/x.py", False),
    ("deep", "src/deep/x.py", True),
    ("src", "src/deep/x.py", True),
    ("s*/x.py", "src/deep/x.py", False),
    ("src/**/x.py", "src/deep/x.py", True),
    ("src/deep", "src/deep/x.py", True),
    ("src/deep/", "src/deep/x.py", True),
    ("!src/**", "src/deep/x.py", False),
    # Issue 33, a generated tree (seed 33, index 18), then a run: a slash before the end anchors.
    ("deep/*.py", "src/deep/x.py", False),
    ("d*/x.py", "src/deep/x.py", False),
    ("deep/", "src/deep/x.py", True),
]


@pytest.mark.parametrize(("pattern", "rel", "matches"), CLAUDE_OBSERVED)
def test_claude_paths_match_as_claude_code_2_1_332_does(
    pattern: str, rel: str, matches: bool
) -> None:
    applies = applicability(RULE_SETS["claude"], f"---\npaths: '{pattern}'\n---\n")
    assert applies.matches(rel) is matches


def test_explain_claude_block_matches_like_claude_code(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    (tree.project / ".claude/rules/any.md").write_text("---\npaths: '*.PY'\n---\nPy.\n")
    (tree.project / ".claude/rules/root.md").write_text("---\npaths: '/handler.py'\n---\n")
    files = {f.display_path: f for f in tree.explain("src/api/handler.py").agent("claude").files}
    assert files[".claude/rules/any.md"].state == "loaded"
    assert files[".claude/rules/root.md"].state == "unmatched"


def test_explain_copilot_block_matches_like_vs_code(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    (tree.project / ".github/instructions/spec.instructions.md").write_text(
        '---\napplyTo: "*.PY"\n---\nPy.\n'
    )
    files = {
        f.display_path: f for f in tree.explain("src/api/handler.py").agent("copilot-vscode").files
    }
    assert files[".github/instructions/spec.instructions.md"].state == "loaded"


def test_too_many_globs_are_cut_and_said(tmp_path: Path) -> None:
    globs = ", ".join(f"g{i}/**" for i in range(20_000))
    applies = applicability(RULE_SETS["copilot"], f'---\napplyTo: "{globs}"\n---\n')
    assert len(applies.compiled) == 100
    assert any(
        "lists 20,000 globs; only the first 100 are used" in p.message for p in applies.problems
    )

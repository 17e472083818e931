"""Qwen Code 0.24.4's own .qwen/QWEN.local.md and .qwen/rules in explain (read in its
loadServerHierarchicalMemory and loadRules, seen in runs: tests/conformance/found/qwen-local-md*.json
and qwen-rules.json; docs/reference/agent-clis.md)."""

from __future__ import annotations

from pathlib import Path

from tests.support.explainkit import states
from tests.support.instrkit import write_tree

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.explain import Explanation, explain_file
from dsh_sidecar.fs import LOCAL_FS


def explain(base: Path, rel: str, cwd: str) -> Explanation:
    return explain_file(
        str(base / rel),
        InstructionSettings(),
        LOCAL_FS,
        dsh_home=str(base / "dsh"),
        cwd=str(base / cwd),
        home=str(base / "home"),
        env={},
    )


FILES = {
    "repo/QWEN.md": "Q\n",
    "repo/.qwen/QWEN.local.md": "Local\n@../a.md\n",
    "repo/a.md": "A\n",
    "repo/pkg/.qwen/QWEN.local.md": "Not at the root\n",
    "home/.qwen/QWEN.local.md": "Not a user file\n",
    "repo/pkg/x.py": "x\n",
}


def test_qwen_code_reads_its_local_file_at_the_git_root_after_the_walk(tmp_path: Path) -> None:
    write_tree(tmp_path, {**FILES, "repo/.git/": ""})
    got = states(explain(tmp_path, "repo/pkg/x.py", "repo/pkg"), "qwen-code")
    assert got == [
        ("QWEN.md", "project", "loaded"),
        (".qwen/QWEN.local.md", "project", "loaded"),
        ("a.md", "import", "loaded"),
    ]


def test_qwen_code_reads_no_local_file_without_a_git_root(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    got = states(explain(tmp_path, "repo/pkg/x.py", "repo"), "qwen-code")
    assert (".qwen/QWEN.local.md", "project", "loaded") not in got
    assert all("QWEN.local.md" not in path for path, _, _ in got)


RULES = {
    "repo/.git/": "",
    "repo/QWEN.md": "Q\n",
    "repo/a.md": "A\n",
    "repo/.qwen/rules/always.md": "Always\n@a.md\n",
    "repo/.qwen/rules/sub/deep.md": "---\ndescription: d\n---\nDeep\n<!-- hidden -->\nend\n",
    "repo/.qwen/rules/py.md": '---\npaths:\n  - "pkg/**/*.py"\n---\nPy\n',
    "repo/.qwen/rules/star.md": '---\npaths: "*.py"\n---\nStar\n',
    "repo/.qwen/rules/notes.txt": "Not a rule\n",
    "repo/pkg/.qwen/rules/nested.md": "Not the project's folder\n",
    "home/.qwen/rules/user.md": "User\n",
    "repo/pkg/sub/x.py": "x\n",
}


def test_qwen_code_rules_apply_from_its_two_folders_as_plain_globs(tmp_path: Path) -> None:
    write_tree(tmp_path, RULES)
    e = explain(tmp_path, "repo/pkg/sub/x.py", "repo")
    got = {f.display_path: (f.state, f.when) for f in e.agent("qwen-code").files}
    assert got == {
        "~/.qwen/rules/user.md": ("loaded", "start"),
        "QWEN.md": ("loaded", "start"),
        ".qwen/rules/always.md": ("loaded", "start"),
        ".qwen/rules/py.md": ("loaded", "after-read"),
        ".qwen/rules/star.md": ("unmatched", None),
        ".qwen/rules/sub/deep.md": ("loaded", "start"),
    }
    deep = next(f for f in e.agent("qwen-code").files if f.display_path.endswith("deep.md"))
    assert deep.sent_bytes == len(b"Deep\n\nend")

"""The conformance tree generator (tests/conformance/generate.py) without the CLIs: the same
seed and index give the same tree, different ones differ, every generated instruction file
carries its own marker, features can be left out, and the shrinker keeps exactly what a
disagreement needs."""

from __future__ import annotations

import json

from tests.conformance.generate import (
    FEATURES,
    UNFIXED,
    UNFIXED_FOR,
    generate,
    load_found,
    shrink,
)
from tests.conformance.trees import Tree


def _key(tree: Tree) -> str:
    return json.dumps([tree.files, tree.symlinks, tree.cwd, tree.read, tree.git], sort_keys=True)


def test_a_seed_and_index_always_give_the_same_tree() -> None:
    assert _key(generate(7, 3).tree) == _key(generate(7, 3).tree)
    shapes = {_key(generate(7, n).tree) for n in range(20)}
    assert len(shapes) == 20
    assert _key(generate(8, 3).tree) != _key(generate(7, 3).tree)


def test_generated_files_carry_markers_and_use_only_named_features() -> None:
    seen: set[str] = set()
    for n in range(60):
        generated = generate(1, n)
        assert set(generated.features) <= set(FEATURES)
        seen.update(generated.features)
        tree = generated.tree
        assert tree.read in tree.files
        for path, text in tree.files.items():
            if "{" in text:  # a marker, or a content edge built around one
                assert any(p in text for p in ("{m}", "{cm}", "{fm}")), path
    assert seen == set(FEATURES)  # sixty trees reach every feature


def test_a_left_out_feature_is_never_used() -> None:
    for n in range(30):
        generated = generate(2, n, exclude=["imports", "links-outside"])
        assert "imports" not in generated.features
        assert "links-outside" not in generated.features
        assert not any(p.startswith("shared/") for p in generated.tree.files)


def test_shrink_keeps_only_what_the_disagreement_needs() -> None:
    tree = Tree(
        "t",
        {f"repo/f{n}.md": "{m}\n" for n in range(12)} | {"repo/pkg/sub/x.py": "x\n"},
        symlinks={"repo/CLAUDE.md": "f3.md", "repo/GEMINI.md": "f4.md"},
    )
    tries: list[int] = []

    def still_fails(candidate: Tree) -> bool:
        tries.append(1)
        return "repo/f5.md" in candidate.files and "repo/CLAUDE.md" in candidate.symlinks

    small = shrink(tree, still_fails)
    assert sorted(small.files) == ["repo/f5.md", "repo/pkg/sub/x.py"]
    assert small.symlinks == {"repo/CLAUDE.md": "f3.md"}
    assert len(tries) < 60


def test_found_trees_load_and_unfixed_causes_are_named() -> None:
    found = load_found()
    assert found, "tests/conformance/found/ holds the trees the generator found"
    for name, each in found:
        assert each.cli in ("claude", "codex", "gemini", "copilot", "qwen"), name
        assert each.cause
        assert each.tree.read in each.tree.files, name
    assert all(reason for reason in UNFIXED.values())
    for cli, unfixed in UNFIXED_FOR.items():
        assert set(unfixed) <= set(FEATURES), cli
        assert all(reason for reason in unfixed.values()), cli

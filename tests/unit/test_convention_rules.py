"""instructions.ruleSets: Copilot's .instructions.md (applyTo), Claude's .claude/rules (paths),
Cursor's .mdc (globs, alwaysApply) and .github/copilot-instructions.md: the baseline, touches,
their own template, frontmatter mistakes, and the setting turned off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.instrkit import INTRO, instructions, load, states, write_tree
from tests.support.sessionkit import (
    Kit,
    Prompt,
    all_changes,
    frame,
    opened,
    remove_text,
    replace_text,
    start,
    step,
)
from tests.support.sessionkit import (
    instructions as instructions_of,
)

from dsh_sidecar.config import parse_settings
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem, Probe, ReadResult
from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions.baseline import load_document_chain
from dsh_sidecar.sources.agent_instructions.rules import (
    RuleProblem,
    applicability,
    body_of,
    rule_set_of_path,
    scope_key,
)

ALL = instructions(ruleSets=["copilot", "claude", "cursor"])

TREE = {
    "p/.git/": "",
    "p/AGENTS.md": "root rules\n",
    "p/.github/copilot-instructions.md": "repository-wide\n",
    "p/.github/instructions/py.instructions.md": '---\napplyTo: "**/*.py"\n---\nPython rules\n',
    "p/.github/instructions/none.instructions.md": "---\ndescription: x\n---\nmanual\n",
    "p/.claude/rules/always.md": "claude always\n",
    "p/.claude/rules/deep/api.md": "---\npaths:\n  - src/api/**\n---\napi rules\n",
    "p/.cursor/rules/always.mdc": "---\nalwaysApply: true\n---\ncursor always\n",
    "p/.cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts, *.md\nalwaysApply: false\n---\nts rules\n",
    "p/.cursor/rules/asked.mdc": "---\ndescription: when asked\n---\nasked\n",
    "p/.cursor/rules/notes.md": "a plain .md is not a Cursor rule\n",
}


def rule_template(path: str, applies: str, content: str) -> str:
    return frame(
        f"Additional instructions from: {path}\n\nThese instructions apply to {applies}. Use them "
        "as guidance when relevant; more specific instructions take precedence. They do not "
        f"override system, developer, or direct user instructions.\n\n{content}"
    )


def test_rules_that_apply_to_every_file_join_the_baseline(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    result = load(tmp_path / "p", tmp_path / "home", ALL)
    assert states(result) == [
        ("AGENTS.md", "included"),
        (".github/copilot-instructions.md", "included"),
        (".claude/rules/always.md", "included"),
        (".cursor/rules/always.mdc", "included"),
    ]
    # The frontmatter block is not content: it says what a rule applies to.
    assert result.text == frame(
        f"{INTRO}\n\nInstructions from: AGENTS.md\n\nroot rules\n\n\n"
        "Instructions from: .github/copilot-instructions.md\n\nrepository-wide\n\n\n"
        "Instructions from: .claude/rules/always.md\n\nclaude always\n\n\n"
        "Instructions from: .cursor/rules/always.mdc\n\ncursor always\n"
    )
    scopes = [f.candidate.scope for f in result.retained]
    assert scopes[1:] == [
        "rules:copilot\0.github/copilot-instructions.md",
        "rules:claude\0.claude/rules/always.md",
        "rules:cursor\0.cursor/rules/always.mdc",
    ]
    # Not part of the baseline's identity: turning a rule set on or off reconciles its own
    # scopes (a set or a remove), it does not send every instruction file again (issue 34).
    assert '"ruleSets"' not in result.identity
    assert result.identity == load(tmp_path / "p", tmp_path / "home", instructions()).identity


def test_off_rule_folders_change_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    with_rules = load(tmp_path / "p", tmp_path / "home")
    plain = load(tmp_path / "p", tmp_path / "home", instructions())
    assert states(with_rules) == [("AGENTS.md", "included")]
    assert with_rules.text == plain.text and '"ruleSets"' not in with_rules.identity


def test_only_the_listed_rule_sets_are_read(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    result = load(tmp_path / "p", tmp_path / "home", instructions(ruleSets=["cursor"]))
    assert [p for p, _ in states(result)] == ["AGENTS.md", ".cursor/rules/always.mdc"]


def test_a_document_chain_adds_the_rules_matching_the_document(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    write_tree(tmp_path, {"p/src/api/h.py": "", "p/src/api/h.ts": ""})
    root = tmp_path / "p"

    def chain(rel: str) -> list[str]:
        load = load_document_chain(
            str((root / rel).parent),
            ALL,
            LOCAL_FS,
            dsh_home=str(tmp_path / "home"),
            file_path=str(root / rel),
        )
        return [e.candidate.display_path for e in load.entries if e.candidate.is_rule]

    broad = [
        ".github/copilot-instructions.md",
        ".claude/rules/always.md",
        ".cursor/rules/always.mdc",
    ]
    assert chain("src/api/h.py") == [
        *broad,
        ".github/instructions/py.instructions.md",
        ".claude/rules/deep/api.md",
    ]
    assert chain("src/api/h.ts") == [*broad, ".claude/rules/deep/api.md", ".cursor/rules/ts.mdc"]
    assert chain("README.md") == [*broad, ".cursor/rules/ts.mdc"]


@pytest.mark.parametrize(
    ("rule_set", "text", "mode", "globs", "problems"),
    [
        ("copilot", '---\napplyTo: "a/**, *.py"\n---\nx', "globs", ("a/**", "*.py"), []),
        (
            "copilot",
            "---\napplyTo:\n  - '*.py'\n---\nx",
            "invalid",
            (),
            [
                (
                    1,
                    "applyTo must be one string of globs separated by commas (GitHub Copilot reads "
                    "no list here), got a list; this rule matches no file",
                )
            ],
        ),
        ("copilot", "no frontmatter", "manual", (), []),
        ("claude", "---\npaths: [src/**, 'lib/*.ts']\n---\nx", "globs", ("src/**", "lib/*.ts"), []),
        ("claude", "---\npaths:\n---\nx", "always", (), []),
        (
            "claude",
            "---\npaths: true\n---\nx",
            "invalid",
            (),
            [
                (
                    1,
                    "paths must be one string of globs separated by commas, got True; this rule "
                    "matches no file",
                )
            ],
        ),
        (
            "cursor",
            "---\nalwaysApply: 'true'\nglobs:\n---\nx",
            "manual",
            (),
            [
                (
                    1,
                    "alwaysApply must be true or false (unquoted), got 'true'; the rule is not "
                    "always applied",
                )
            ],
        ),
        (
            "cursor",
            "---\nglobs: '" + "{a,b}" * 7 + "'\n---\nx",
            "invalid",
            ("{a,b}" * 7,),
            [
                (
                    1,
                    "globs: the glob '" + "{a,b}" * 7 + "' is empty or too complex (more than 512 "
                    "characters or 64 brace alternatives); it matches no file",
                )
            ],
        ),
        (
            "cursor",
            "---\nglobs: x\nno end",
            "manual",
            (),
            [
                (
                    0,
                    "the frontmatter block is never closed by a --- line; the file is read as having "
                    "no frontmatter",
                )
            ],
        ),
    ],
)
def test_frontmatter_is_read_with_its_mistakes(
    rule_set: str,
    text: str,
    mode: str,
    globs: tuple[str, ...],
    problems: list[tuple[int, str]],
) -> None:
    found = applicability(RULE_SETS[rule_set], text)
    assert found.mode == mode
    assert found.globs == globs
    assert [(p.line, p.message) for p in found.problems] == problems
    assert all(isinstance(p, RuleProblem) for p in found.problems)


def test_the_body_follows_the_frontmatter_block() -> None:
    assert body_of("---\na: b\n---\nbody\n") == "body\n"
    assert body_of("---\r\na: b\r\n---\r\nbody") == "body"
    assert body_of("no block\n---\n") == "no block\n---\n"
    assert body_of("---\nnever closed\n") == "---\nnever closed\n"


def test_a_file_belongs_to_a_rule_set_by_where_it_is(tmp_path: Path) -> None:
    root = str(tmp_path)
    assert rule_set_of_path(root, f"{root}/.github/instructions/a/b.instructions.md").name == (  # type: ignore[union-attr]
        "copilot"
    )
    assert rule_set_of_path(root, f"{root}/.github/copilot-instructions.md").name == "copilot"  # type: ignore[union-attr]
    assert rule_set_of_path(root, f"{root}/.claude/rules/x.md").name == "claude"  # type: ignore[union-attr]
    assert rule_set_of_path(root, f"{root}/.cursor/rules/x.md") is None
    assert rule_set_of_path(root, f"{root}/docs/x.instructions.md") is None
    assert scope_key("cursor", ".cursor/rules/a.mdc") == "rules:cursor\0.cursor/rules/a.mdc"


def test_a_rule_leading_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/.claude/rules/": "", "shared.md": "SHARED\n"})
    (tmp_path / "p/.claude/rules/link.md").symlink_to(tmp_path / "shared.md")
    result = load(tmp_path / "p", tmp_path / "home", instructions(ruleSets=["claude"]))
    assert states(result) == [(".claude/rules/link.md", "outside-project")]
    assert "SHARED" not in result.text


def test_the_rule_set_setting_is_checked() -> None:
    for value, message in (
        (
            ["copilot", "gemini"],
            'entry 1 must be one of "copilot", "claude", "cursor", got \'gemini\'',
        ),
        (["claude", "claude"], "entry 1 repeats 'claude'"),
        ("claude", "must be a list of strings"),
    ):
        with pytest.raises(ConfigError) as caught:
            parse_settings({"instructions": {"ruleSets": value}})
        assert caught.value.message == f"instructions.ruleSets: {message}"


# --- sessions ------------------------------------------------------------------------------------


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path, ruleSets=["copilot", "claude", "cursor"])
    for rel, text in TREE.items():
        if rel.startswith("p/") and not rel.endswith("/") and rel != "p/.git/":
            k.write(rel[2:], text)
    yield k
    await k.close()


async def test_a_touch_of_a_matching_file_sets_the_rule_with_its_own_template(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    (baseline,) = instructions_of(await start(svc, sid))
    assert [c["path"] for c in baseline.source["changes"]] == [
        "AGENTS.md",
        ".github/copilot-instructions.md",
        ".claude/rules/always.md",
        ".cursor/rules/always.mdc",
    ]
    svc.tool_result(sid, "t1", None, "read", {"file_path": "src/app.go"}, False)
    assert await svc.pending(sid) == []
    svc.tool_result(sid, "t2", None, "edit", {"file_path": "src/api/main.py"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.source["changes"] == [
        {
            "action": "set",
            "scope": "rules:copilot\0.github/instructions/py.instructions.md",
            "path": ".github/instructions/py.instructions.md",
            "digest": pending.source["changes"][0]["digest"],
        },
        {
            "action": "set",
            "scope": "rules:claude\0.claude/rules/deep/api.md",
            "path": ".claude/rules/deep/api.md",
            "digest": pending.source["changes"][1]["digest"],
        },
    ]
    assert pending.text == frame(
        rule_template(
            ".github/instructions/py.instructions.md", "files matching `**/*.py`", "Python rules\n"
        )[len("<system-reminder>\n") : -len("\n</system-reminder>")]
        + "\n\n"
        + rule_template(".claude/rules/deep/api.md", "files matching `src/api/**`", "api rules\n")[
            len("<system-reminder>\n") : -len("\n</system-reminder>")
        ]
    )
    await step(svc, sid, 1, 2)
    # Touching another matching file brings nothing new.
    svc.tool_result(sid, "t3", None, "read", {"file_path": "lib/other.py"}, False)
    assert await svc.pending(sid) == []


async def test_a_rule_is_replaced_when_it_changes_and_removed_when_deleted(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "a.py"}, False)
    await step(svc, sid, 1, 2)
    kit.write(".github/instructions/py.instructions.md", '---\napplyTo: "**/*.py"\n---\nv2\n')
    svc.tool_result(sid, "t2", None, "read", {"file_path": "b.txt"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == replace_text(".github/instructions/py.instructions.md", "v2\n")
    await step(svc, sid, 1, 3)
    kit.remove(".github/instructions/py.instructions.md")
    svc.tool_result(sid, "t3", None, "read", {"file_path": "b.txt"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == remove_text(".github/instructions/py.instructions.md")
    # A baseline rule goes the same way.
    await step(svc, sid, 1, 4)
    kit.remove(".claude/rules/always.md")
    svc.tool_result(sid, "t4", None, "read", {"file_path": "b.txt"}, False)
    assert all_changes(await svc.pending(sid)) == [("remove", ".claude/rules/always.md")]


async def test_a_new_always_on_rule_is_set_for_every_file(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    kit.write(".claude/rules/new.md", "new everywhere\n")
    svc.tool_result(sid, "t1", None, "read", {"file_path": "b.txt"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == rule_template(
        ".claude/rules/new.md", "every file of this project", "new everywhere\n"
    )


async def test_a_partly_dropped_message_keeps_its_rules(kit: Kit) -> None:
    kit.write("src/AGENTS.md", "src rules\n")
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "src/x.ts"}, False)
    (pending,) = await svc.pending(sid)
    # The directories the touch reached first, then the rules its file matched.
    assert all_changes([pending]) == [("set", "src/AGENTS.md"), ("set", ".cursor/rules/ts.mdc")]
    left = await svc.discard(sid, pending.id, ["src\0AGENTS.md"])
    assert all_changes(left) == [("set", ".cursor/rules/ts.mdc")]


async def test_turning_a_rule_set_off_removes_its_touched_rules(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "a.py"}, False)
    await step(svc, sid, 1, 2)
    svc.update_settings(kit.settings(ruleSets=["claude", "cursor"]))
    entered = await step(svc, sid, 1, 3)
    # Only copilot's rules go, the always-on one and the one the touch set; the baseline is not
    # sent again (the claude and cursor rules it holds are still in effect).
    assert sorted(all_changes(entered)) == [
        ("remove", ".github/copilot-instructions.md"),
        ("remove", ".github/instructions/py.instructions.md"),
    ]
    assert not any(m.source.get("baseline") for m in instructions_of(entered))


class CountingFS(LocalFileSystem):
    def __init__(self) -> None:
        self.reads: list[str] = []

    def read_text(self, probe: Probe, max_source_bytes: int, **kwargs: object) -> ReadResult:
        self.reads.append(probe.path)
        return super().read_text(probe, max_source_bytes, **kwargs)  # type: ignore[arg-type]


async def test_a_warm_touch_confirms_rules_by_version_alone(kit: Kit) -> None:
    fs = CountingFS()
    svc = kit.service(fs=fs)
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "src/api/a.py"}, False)
    await step(svc, sid, 1, 2)
    fs.reads.clear()
    svc.tool_result(sid, "t2", None, "read", {"file_path": "src/api/b.py"}, False)
    assert await svc.pending(sid) == []
    assert fs.reads == []


async def test_rules_survive_a_restart_and_offline_edits_become_changes(kit: Kit) -> None:
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    svc.tool_result(sid, "t1", None, "read", {"file_path": "a.py"}, False)
    await step(svc, sid, 1, 2)
    await svc.shutdown()
    kit.remove(".github/instructions/py.instructions.md")
    kit.write(".cursor/rules/always.mdc", "---\nalwaysApply: true\n---\ncursor always v2\n")
    again = kit.service()
    await again.open_session(str(kit.root), sid)
    prepared = await again.prepare_step(sid, 2, 1, Prompt("again"))
    assert all_changes(prepared.messages) == [
        ("remove", ".github/instructions/py.instructions.md"),
        ("replace", ".cursor/rules/always.mdc"),
    ]

"""instructions.userGlobalFiles: more user-global files after $DSH_HOME/AGENTS.md, each its own
scope, in the baseline in the order listed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.instrkit import INTRO, instructions, load, states, write_tree
from tests.support.sessionkit import Kit, all_changes, frame, opened, replace_text, start, step

from dsh_sidecar.config import parse_settings
from dsh_sidecar.errors import ConfigError


def test_extra_user_global_files_follow_dsh_home_in_order(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "dsh/AGENTS.md": "dsh\n",
            "home/.claude/CLAUDE.md": "claude home\n",
            "etc/team.md": "team\n",
            "p/.git/": "",
            "p/AGENTS.md": "root\n",
        },
    )
    settings = instructions(
        userGlobalFiles=["~/.codex/AGENTS.md", str(tmp_path / "etc/team.md"), "~/.claude/CLAUDE.md"]
    )
    result = load(tmp_path / "p", tmp_path / "dsh", settings, os_home=str(tmp_path / "home"))
    assert states(result) == [
        ("$DSH_HOME/AGENTS.md", "included"),
        (str(tmp_path / "etc/team.md"), "included"),
        ("~/.claude/CLAUDE.md", "included"),
        ("AGENTS.md", "included"),
    ]
    assert [e.candidate.scope for e in result.entries] == [
        "user-global\0AGENTS.md",
        f"user-global\0{tmp_path}/etc/team.md",
        "user-global\0~/.claude/CLAUDE.md",
        ".\0AGENTS.md",
    ]
    assert result.text == frame(
        f"{INTRO}\n\nInstructions from: $DSH_HOME/AGENTS.md\n\ndsh\n\n\n"
        f"Instructions from: {tmp_path}/etc/team.md\n\nteam\n\n\n"
        "Instructions from: ~/.claude/CLAUDE.md\n\nclaude home\n\n\n"
        "Instructions from: AGENTS.md\n\nroot\n"
    )
    # The user's own files may link anywhere: no trust boundary applies to them.
    assert all(not e.candidate.is_rule for e in result.entries)


def test_a_user_global_file_is_never_confined(tmp_path: Path) -> None:
    write_tree(tmp_path, {"dotfiles/claude.md": "dot\n", "home/.claude/": "", "p/.git/": ""})
    (tmp_path / "home/.claude/CLAUDE.md").symlink_to(tmp_path / "dotfiles/claude.md")
    settings = instructions(userGlobalFiles=["~/.claude/CLAUDE.md"])
    result = load(tmp_path / "p", tmp_path / "dsh", settings, os_home=str(tmp_path / "home"))
    assert states(result) == [("~/.claude/CLAUDE.md", "included")]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            ["rules/x.md"],
            "entry 0 must be a file's absolute path or start with ~/, got 'rules/x.md'",
        ),
        (["~"], "entry 0 must be a file's absolute path or start with ~/, got '~'"),
        (["/a/", "~/b"], "entry 0 must be a file's absolute path or start with ~/, got '/a/'"),
        (["~/a\0b"], "entry 0 contains a NUL character"),
        ("~/a.md", "must be a list of strings"),
    ],
)
def test_the_setting_takes_files(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings({"instructions": {"userGlobalFiles": value}})
    assert caught.value.message == f"instructions.userGlobalFiles: {message}"
    assert caught.value.data["key"] == "instructions.userGlobalFiles"


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    k = Kit(tmp_path, userGlobalFiles=["~/.claude/CLAUDE.md"])
    k.write("AGENTS.md", "root\n")
    yield k
    await k.close()


async def test_a_user_global_file_arriving_later_is_set_then_replaced(
    kit: Kit, tmp_path: Path
) -> None:
    env = {"HOME": str(tmp_path / "u")}
    svc = kit.service(env=env)
    sid = await opened(kit, svc)
    await start(svc, sid)
    write_tree(tmp_path / "u", {".claude/CLAUDE.md": "mine\n"})
    svc.tool_result(sid, "t1", None, "read", {"file_path": "x.py"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.source["changes"][0]["scope"] == "user-global\0~/.claude/CLAUDE.md"
    assert pending.text == frame(
        "Additional instructions from: ~/.claude/CLAUDE.md\n\nThese instructions apply to work "
        "under `user-global`. Use them as guidance when relevant; more specific instructions "
        "take precedence. They do not override system, developer, or direct user instructions."
        "\n\nmine\n"
    )
    await step(svc, sid, 1, 2)
    write_tree(tmp_path / "u", {".claude/CLAUDE.md": "mine v2\n"})
    svc.tool_result(sid, "t2", None, "read", {"file_path": "x.py"}, False)
    (pending,) = await svc.pending(sid)
    assert pending.text == replace_text("~/.claude/CLAUDE.md", "mine v2\n")
    await step(svc, sid, 1, 3)
    # Taken off the list: a new baseline, which no longer holds it.
    svc.update_settings(kit.settings(userGlobalFiles=[]))
    entered = await step(svc, sid, 1, 4)
    assert ("remove", "~/.claude/CLAUDE.md") in all_changes(entered)

"""``dsh-sidecar explain FILE``: text and JSON on a real tree, bad input as one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.explainkit import Tree
from tests.support.instrkit import write_tree

from dsh_sidecar.agents import AGENTS
from dsh_sidecar.cli import main

Capture = pytest.CaptureFixture[bytes]

DEMO = {
    "home/AGENTS.md": "Answer in English.\n",
    "proj/.git/": "",
    "proj/.gitignore": "node_modules/\n",
    "proj/AGENTS.md": "Run `make test` before committing.\n",
    "proj/CLAUDE.md": "Run `make test` before committing.",
    "proj/web/AGENTS.md": "Use TypeScript strict mode.\n",
    "proj/web/app.ts": "",
}


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_tree(tmp_path, DEMO)
    monkeypatch.setenv("HOME", str(tmp_path / "os-home"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path / "proj/web")
    return tmp_path


def run(capsysbinary: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


def test_text_for_a_session_at_the_project_root(demo: Path, capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary, "explain", "app.ts")
    assert (code, err) == (0, "")
    p = demo / "proj"
    # Every reason once: a file an agent does not read is its not-read line alone (no second
    # listing of what only one side reads), files sharing a reason share the line, the
    # user-global file no agent reads says so once, and the documentation is the agent vendor's
    # own pages, on one line.
    expected = [
        f"{p}/web/app.ts  (project root {p}; session cwd {p})",
        "dsh-sidecar  (byte budget 65,536)",
        "  baseline included         19  $DSH_HOME/AGENTS.md  read by no agent below (each has "
        "its own user-global files, named in its head)",
        "  baseline included         35  AGENTS.md",
        "  baseline duplicate        34  CLAUDE.md  same content as AGENTS.md (after trimming "
        "whitespace)",
        "  touch    included         28  web/AGENTS.md",
        f"Codex CLI  (checked against @openai/codex 0.171.0; working directory {p}; "
        "project_doc_max_bytes 32,768 bytes, filled root first; user-global "
        "~/.codex/AGENTS.override.md, ~/.codex/AGENTS.md)",
        "  start      loaded           35  AGENTS.md  loaded when a session starts",
        "  -          not-read          -  web/AGENTS.md  Codex reads from the project root down to "
        "its working directory, never below it",
        "  documentation (checked 2026-12-03): "
        "https://developers.openai.com/codex/guides/agents-md; 5 points it leaves open (--json)",
        f"Claude Code  (checked against @anthropic-ai/claude-code 2.1.332; working directory {p}; "
        "user-global /etc/claude-code/CLAUDE.md, ~/.claude/CLAUDE.md)",
        "  start      loaded           34  CLAUDE.md  loaded when a session starts",
        "  -          not-read          -  AGENTS.md, web/AGENTS.md  Claude Code reads AGENTS.md "
        "only when its start walk finds no non-empty CLAUDE.md / .claude/CLAUDE.md / "
        "CLAUDE.local.md; CLAUDE.md is there (instructionFiles setting at its default "
        "'claude-md-or-agents-md')",
        "  documentation (checked 2026-12-03): https://code.claude.com/docs/en/memory; 6 points "
        "it leaves open (--json)",
        f"GitHub Copilot CLI  (checked against @github/copilot 1.0.102; working directory {p}; "
        "user-global ~/.copilot/copilot-instructions.md)",
        "  start      loaded           35  AGENTS.md  loaded when a session starts",
        "  start      loaded           34  CLAUDE.md  loaded when a session starts",
        "  after-read loaded           28  web/AGENTS.md  loaded once GitHub Copilot CLI works on "
        "a file below web/",
        "  documentation (checked 2026-12-03): "
        "https://www.npmjs.com/package/@github/copilot/v/1.0.102; 2 points it leaves open (--json)",
        f"GitHub Copilot (VS Code)  (documented rules, not run against the agent; working "
        f"directory {p}; user-global ~/.claude/CLAUDE.md)",
        "  start      loaded           35  AGENTS.md  always on for the workspace",
        "  start      loaded           34  CLAUDE.md  always on for the workspace",
        "  -          not-read          -  web/AGENTS.md  VS Code reads the workspace root's "
        "AGENTS.md; nested ones are only listed to the model, as paths it may open, with the "
        "experimental chat.useNestedAgentsMdFiles setting (off by default)",
        "  documentation (checked 2026-12-03): "
        "https://code.visualstudio.com/docs/agent-customization/custom-instructions "
        "https://code.visualstudio.com/docs/agents/reference/ai-settings; 6 points it leaves "
        "open (--json)",
        f"Gemini CLI  (checked against @google/gemini-cli 0.61.0; working directory {p}; "
        "user-global ~/.gemini/GEMINI.md)",
        "  -          not-read          -  AGENTS.md, web/AGENTS.md  Gemini CLI does not read "
        "AGENTS.md (it reads GEMINI.md)",
        "  documentation (checked 2026-12-03): https://geminicli.com/docs/cli/gemini-md "
        "https://github.com/google-gemini/gemini-cli/blob/"
        "009b0d84de89b531703ad5bc9e7cda906ad3c6a1/docs/core/memport.md "
        "https://github.com/google-gemini/gemini-cli/blob/"
        "17fd386423134134f06e826f3293921757905cf2/docs/cli/gemini-md.md; 5 points it leaves "
        "open (--json)",
        f"Cursor  (documented rules, not run against the agent; working directory {p}; "
        "user-global none)",
        "  start      loaded           35  AGENTS.md  always on for the workspace",
        "  after-read loaded           28  web/AGENTS.md  loaded once Cursor works on a file "
        "below web/",
        "  documentation (checked 2026-12-03): https://www.cursor.com/docs/rules; 8 points it "
        "leaves open (--json)",
        f"Qwen Code  (checked against @qwen-code/qwen-code 0.24.4; working directory {p}; "
        "user-global ~/.qwen/QWEN.md, ~/.qwen/AGENTS.md)",
        "  start      loaded           34  AGENTS.md  loaded when a session starts",
        "  -          not-read          -  web/AGENTS.md  Qwen Code loads its context files once, "
        "at start; no tool loads any later",
        "  documentation (checked 2026-12-03): "
        "https://qwenlm.github.io/qwen-code-docs/en/users/configuration/settings/; 2 points it "
        "leaves open (--json)",
    ]
    assert out.split("\n") == [*expected, ""]


def test_an_agents_documentation_is_its_vendors_own() -> None:
    # Secondary pages (blog posts, issues, forums, translations) are not what a rule follows.
    vendors = {
        "codex": ("https://developers.openai.com/",),
        "claude": ("https://code.claude.com/docs/",),
        "copilot-cli": ("https://www.npmjs.com/package/@github/copilot/",),
        "copilot-vscode": ("https://code.visualstudio.com/docs/",),
        "gemini": (
            "https://geminicli.com/docs/",
            "https://github.com/google-gemini/gemini-cli/blob/",
        ),
        "cursor": ("https://www.cursor.com/docs/",),
        "qwen-code": ("https://qwenlm.github.io/qwen-code-docs/",),
    }
    for agent in AGENTS:
        for source in agent.sources:
            assert source.url.startswith(vendors[agent.id]), (agent.id, source.url)
            if "github.com" in source.url:
                assert "/docs/" in source.url, source.url  # the vendor's docs, not its code


def test_cwd_option_and_json(demo: Path, capsysbinary: Capture) -> None:
    code, out, err = run(capsysbinary, "explain", "app.ts", "--cwd", ".", "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert out.endswith("}\n")
    p = demo / "proj"
    assert (document["file"], document["cwd"], document["projectRoot"]) == (
        f"{p}/web/app.ts",
        f"{p}/web",
        str(p),
    )
    assert [(f["via"], f["displayPath"]) for f in document["sidecar"]["files"]] == [
        ("baseline", "$DSH_HOME/AGENTS.md"),
        ("baseline", "AGENTS.md"),
        ("baseline", "CLAUDE.md"),
        ("baseline", "web/AGENTS.md"),
    ]
    codex = document["agents"][0]
    assert codex["id"] == "codex"
    assert codex["sizeLimit"] == {
        "setting": "project_doc_max_bytes",
        "bytes": 32768,
        "cut": "root-first",
    }
    assert [(f["displayPath"], f["state"]) for f in codex["files"]] == [
        ("AGENTS.md", "loaded"),
        ("web/AGENTS.md", "loaded"),
    ]
    assert [a["id"] for a in document["agents"]] == [a.id for a in AGENTS]
    assert all(a["sources"] and a["undocumented"] for a in document["agents"])


def test_every_convention_over_the_cli(
    tmp_path: Path, capsysbinary: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = Tree(tmp_path)
    monkeypatch.setenv("HOME", str(tree.home))
    monkeypatch.setenv("DSH_HOME", str(tree.dsh_home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    code, out, _ = run(capsysbinary, "explain", tree.path("src/api/handler.py"), "--json")
    assert code == 0
    assert json.loads(out) == tree.explain("src/api/handler.py").to_json()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["explain", "."],
            "dsh-sidecar: .: is a directory (explain takes a file; scopes takes a directory)",
        ),
        (["explain", "nowhere/x.ts"], "dsh-sidecar: nowhere/x.ts: no such directory {web}/nowhere"),
        (["explain", "app.ts", "--cwd", "nowhere"], "dsh-sidecar: nowhere: no such directory"),
        (
            ["explain", "app.ts", "--settings", "missing.json"],
            "dsh-sidecar: --settings missing.json: cannot read: No such file or directory",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    demo: Path, capsysbinary: Capture, argv: list[str], message: str
) -> None:
    code, out, err = run(capsysbinary, *argv)
    assert (code, out) == (2, "")
    assert err == message.format(web=demo / "proj/web") + "\n"


def test_the_installed_command(demo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "explain", "app.ts"],
        capture_output=True,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith(f"{demo}/proj/web/app.ts  (project root {demo}/proj;")
    assert done.stderr == b""

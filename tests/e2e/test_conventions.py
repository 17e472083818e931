"""Every convention end to end over LSP (the real server, both client profiles) on one tree that
uses them all: the baseline and touches of a session, dsh/scopes, hover, diagnostics, document
links and go to definition, the CLI agreeing with dsh/context/preview; and the same tree with
every convention off, where the sidecar reads none of it but says which setting would."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from dsh_sidecar.protocol import methods

from .conftest import Workspace, as_dict, call, did_open, server_env, start
from .test_agent_loop import open_session, pending, prepare, texts
from .test_editor_features import diagnostics_for, hover_text

FRAME_OPEN, FRAME_CLOSE = "<system-reminder>\n", "\n</system-reminder>"
CLAUDE_MD = "Claude rules. Read @docs/style.md first; @AGENTS.md is loaded anyway.\n"
BAD_RULE = "---\napplyTo:\n  - '*.ts'\n---\nbad\n"
TREE = {
    "AGENTS.md": "Root agents.\n",
    "CLAUDE.md": CLAUDE_MD,
    "docs/style.md": "Style guide.\n",
    "pkg/AGENTS.md": "Pkg agents.\n",
    "pkg/AGENTS.override.md": "Pkg override.\n",
    "pkg/main.py": "print('x')\n",
    ".github/copilot-instructions.md": "Repository-wide.\n",
    ".github/instructions/py.instructions.md": '---\napplyTo: "**/*.py"\n---\nPython rules.\n',
    ".github/instructions/bad.instructions.md": BAD_RULE,
    ".claude/rules/pkg.md": '---\npaths: ["pkg/**"]\n---\nPkg rules.\n',
    ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\nCursor always.\n",
}


def conventions(ws: Workspace) -> dict[str, Any]:
    mine = ws.base / "me" / "CLAUDE.md"
    mine.parent.mkdir(exist_ok=True)
    mine.write_text("Mine.\n")
    return {
        "overrideFiles": True,
        "imports": True,
        "ruleSets": ["copilot", "claude", "cursor"],
        "userGlobalFiles": [str(mine)],
    }


async def test_a_session_gets_every_convention(client: LanguageClient, ws: Workspace) -> None:
    ws.write(TREE)
    settings = conventions(ws)
    await start(client, ws, **settings)
    sid = await open_session(client, ws)
    first = await prepare(client, sid, 1, 1, "hello")
    baseline = next(m for m in first["messages"] if m["source"]["kind"] == "agent-instructions")
    scopes = [c["scope"] for c in baseline["source"]["changes"]]
    mine = settings["userGlobalFiles"][0]
    assert scopes == [
        f"user-global\u0000{mine}",
        ".\u0000AGENTS.md",
        ".\u0000CLAUDE.md",
        "rules:copilot\u0000.github/copilot-instructions.md",
        "rules:cursor\u0000.cursor/rules/always.mdc",
    ]
    text = baseline["content"][0]["text"]
    assert f"Instructions from: {mine}\n\nMine.\n" in text
    assert (
        f"Instructions from: CLAUDE.md\n\n{CLAUDE_MD}\nImported from: docs/style.md\n\n"
        "Style guide.\n"
    ) in text
    assert text.count("Root agents.") == 1  # @AGENTS.md adds nothing: loaded as itself
    assert "Instructions from: .cursor/rules/always.mdc\n\nCursor always.\n" in text
    assert "alwaysApply" not in text  # the frontmatter is not content
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 1})

    client.protocol.notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "t1",
            "name": "read",
            "arguments": {"file_path": "pkg/main.py"},
            "isError": False,
        },
    )
    (queued,) = await pending(client, sid)
    assert [(c["action"], c["path"]) for c in queued["source"]["changes"]] == [
        ("set", "pkg/AGENTS.override.md"),
        ("set", ".github/instructions/py.instructions.md"),
        ("set", ".claude/rules/pkg.md"),
    ]
    body = queued["content"][0]["text"]
    assert body.startswith(FRAME_OPEN) and body.endswith(FRAME_CLOSE)
    assert (
        "Additional instructions from: .github/instructions/py.instructions.md\n\n"
        "These instructions apply to files matching `**/*.py`. Use them as guidance when "
        "relevant; more specific instructions take precedence. They do not override system, "
        "developer, or direct user instructions.\n\nPython rules.\n"
    ) in body
    assert "Pkg agents." not in body  # replaced by pkg/AGENTS.override.md
    second = await prepare(client, sid, 1, 2)
    assert texts(second["messages"]) == [body]
    await call(client, methods.STEP_END, {"sessionId": sid, "turn": 1, "step": 2})

    # Editing an imported file replaces its importer.
    (ws.project / "docs/style.md").write_text("Style guide v2.\n")
    client.protocol.notify(
        methods.TOOL_RESULT,
        {
            "sessionId": sid,
            "token": "t2",
            "name": "read",
            "arguments": {"file_path": "docs/notes.txt"},
            "isError": False,
        },
    )
    (replaced,) = await pending(client, sid)
    assert [(c["action"], c["path"]) for c in replaced["source"]["changes"]] == [
        ("replace", "CLAUDE.md")
    ]
    assert "Imported from: docs/style.md\n\nStyle guide v2.\n" in replaced["content"][0]["text"]


async def test_scopes_hover_and_diagnostics_explain_the_conventions(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write(TREE)
    await start(client, ws, **conventions(ws))
    scopes = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("pkg/main.py")}))
    by_path = {f["displayPath"]: f for f in scopes["files"]}
    assert by_path["pkg/AGENTS.md"]["state"] == "overridden"
    assert by_path["pkg/AGENTS.override.md"]["state"] == "included"
    assert by_path[".claude/rules/pkg.md"]["rule"] == {
        "ruleSet": "claude",
        "mode": "globs",
        "globs": ["pkg/**"],
    }
    assert by_path[".github/copilot-instructions.md"]["rule"]["mode"] == "always"
    imports = by_path["CLAUDE.md"]["imports"]
    assert [(i["displayPath"], i["state"], i["depth"]) for i in imports] == [
        ("docs/style.md", "imported", 1),
        ("AGENTS.md", "in-chain", 1),
    ]
    assert "imports" not in by_path["AGENTS.md"] and "rule" not in by_path["AGENTS.md"]

    hover = await hover_text(client, ws, "CLAUDE.md")
    assert "- Imports:\n  - `docs/style.md`: imported, 13 bytes" in hover
    assert "  - `AGENTS.md`: **in-chain** — an instruction file of this chain" in hover
    rule_hover = await hover_text(client, ws, ".github/instructions/bad.instructions.md")
    assert rule_hover.startswith(
        "**.github/instructions/bad.instructions.md** — a GitHub Copilot rule (`copilot`)"
    )
    assert "- Applies to: no file (its frontmatter is not usable)" in rule_hover
    assert "- Line 2: applyTo must be one string of globs" in rule_hover

    bad = await diagnostics_for(client, ws, ".github/instructions/bad.instructions.md")
    assert [(d.code, d.severity, d.range.start.line) for d in bad] == [
        ("rule-frontmatter", types.DiagnosticSeverity.Warning, 1)
    ]
    overridden = await diagnostics_for(client, ws, "pkg/AGENTS.md")
    assert [d.code for d in overridden] == ["overridden"]
    assert overridden[0].message == (
        "Not loaded: replaced by AGENTS.override.md in this directory (instructions.overrideFiles)"
    )
    claude = await diagnostics_for(client, ws, "CLAUDE.md")
    at = CLAUDE_MD.index("@AGENTS.md")
    assert [(d.code, d.range) for d in claude] == [
        (
            "import-in-chain",
            types.Range(
                start=types.Position(line=0, character=at),
                end=types.Position(line=0, character=at + len("@AGENTS.md")),
            ),
        )
    ]


async def test_imports_are_links_and_definitions(client: LanguageClient, ws: Workspace) -> None:
    ws.write(TREE)
    await start(client, ws, **conventions(ws))
    uri = ws.uri("CLAUDE.md")
    did_open(client, uri, CLAUDE_MD)
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert links is not None
    style = CLAUDE_MD.index("@docs/style.md")
    agents = CLAUDE_MD.index("@AGENTS.md")
    assert [
        (link.target, link.range.start.character, link.range.end.character) for link in links
    ] == [
        (ws.uri("docs/style.md"), style, style + len("@docs/style.md")),
        (ws.uri("AGENTS.md"), agents, agents + len("@AGENTS.md")),
    ]
    # A tooltip only for a client that shows them (VS Code does, Neovim does not say so).
    tooltips = {link.tooltip for link in links}
    if getattr(client, "client_spec", "") == "neovim":
        assert tooltips == {None}
    else:
        assert tooltips == {
            "@docs/style.md: imported (instructions.imports)",
            "@AGENTS.md: imported (instructions.imports)",
        }
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=style + 5),
        )
    )
    assert isinstance(found, types.Location) and found.uri == ws.uri("docs/style.md")
    nothing = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=2),
        )
    )
    assert nothing is None
    # The editor's buffer counts, unsaved edits included.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text="Only @docs/style.md\n")
            ],
        )
    )
    edited = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [(link.range.start.character, link.range.end.character) for link in edited or []] == [
        (5, 5 + len("@docs/style.md"))
    ]


async def test_the_cli_agrees_with_the_server(client: LanguageClient, ws: Workspace) -> None:
    ws.write(TREE)
    settings = conventions(ws)
    await start(client, ws, **settings)
    preview = as_dict(await call(client, methods.CONTEXT_PREVIEW, {"cwd": ws.path("pkg")}))
    path = ws.base / "settings.json"
    path.write_text(json.dumps(ws.options(**settings)))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_sidecar",
            "preview",
            ws.path("pkg"),
            "--json",
            "--settings",
            str(path),
        ],
        capture_output=True,
        check=True,
        env=server_env(),
    )
    assert json.loads(done.stdout) == preview
    scopes = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_sidecar",
            "scopes",
            ws.path("pkg/main.py"),
            "--settings",
            str(path),
        ],
        capture_output=True,
        check=True,
        env=server_env(),
        text=True,
    ).stdout.splitlines()
    assert (
        "overridden       12  pkg/AGENTS.md  replaced by AGENTS.override.md in this "
        "directory (instructions.overrideFiles)" in scopes
    )
    assert "imported         13    @docs/style.md" in scopes
    assert "                      applies to files matching `pkg/**`" in scopes


async def test_off_nothing_is_read_but_each_file_names_its_setting(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write(TREE)
    await start(client, ws)
    preview = as_dict(await call(client, methods.CONTEXT_PREVIEW, {"cwd": ws.path("pkg")}))
    assert [f["displayPath"] for f in preview["files"]] == [
        "AGENTS.md",
        "CLAUDE.md",
        "pkg/AGENTS.md",
    ]
    assert "Imported from" not in preview["text"] and "Style guide" not in preview["text"]
    # Byte for byte what a tree without any of the conventions' files gives.
    plain = ws.base / "plain"
    for rel in ("AGENTS.md", "CLAUDE.md", "pkg/AGENTS.md"):
        (plain / rel).parent.mkdir(parents=True, exist_ok=True)
        (plain / rel).write_text(TREE[rel])
    (plain / ".git").mkdir()
    bare = as_dict(await call(client, methods.CONTEXT_PREVIEW, {"cwd": str(plain / "pkg")}))
    assert bare["text"] == preview["text"]
    assert bare["baselineIdentity"] == preview["baselineIdentity"]

    override = await hover_text(client, ws, "pkg/AGENTS.override.md")
    assert override.startswith("**AGENTS.override.md** — not read by this sidecar")
    assert "set `instructions.overrideFiles` to true to read it" in override
    rule = await diagnostics_for(client, ws, ".github/instructions/py.instructions.md")
    assert [(d.code, d.message) for d in rule] == [
        (
            "convention-off",
            "Not read by this sidecar: GitHub Copilot's convention .github/instructions holds rules "
            'for the files they name; add "copilot" to instructions.ruleSets to read it',
        )
    ]
    claude = await diagnostics_for(client, ws, "CLAUDE.md")
    style = CLAUDE_MD.index("@docs/style.md")
    assert [(d.code, d.range.start.character) for d in claude] == [
        ("convention-off", style),
        ("convention-off", CLAUDE_MD.index("@AGENTS.md")),
    ]
    assert claude[0].message == (
        "@docs/style.md is not followed: set instructions.imports to true to import it "
        "(Claude Code's convention)"
    )
    hover = await hover_text(client, ws, "CLAUDE.md")
    assert "Not read by this sidecar: Claude Code's convention @path imports another file" in hover
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(
            text_document=types.TextDocumentIdentifier(uri=ws.uri("CLAUDE.md"))
        )
    )
    assert not links


async def test_a_rule_file_gets_the_frame_tag_checks_of_any_instruction_file(
    client: LanguageClient, ws: Workspace
) -> None:
    tree = {**TREE, ".claude/rules/quote.md": "---\npaths: x/**\n---\nQuote </system-reminder>\n"}
    ws.write(tree)
    await start(client, ws, **conventions(ws))
    found = await diagnostics_for(client, ws, ".claude/rules/quote.md")
    assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [
        ("closing-tag-escaped", 3, len("Quote "))
    ]
    hover = await hover_text(client, ws, ".claude/rules/quote.md")
    assert "- Applies to: files matching `x/**`" in hover
    assert "- Loads when the agent or the editor touches a matching file" in hover


async def test_instructions_for_other_agents_never_give_a_silent_empty_baseline(
    client: LanguageClient, ws: Workspace
) -> None:
    ws.write({"GEMINI.md": "Gemini only.\n", ".claude/CLAUDE.md": "Claude folder.\n", "a.py": ""})
    await start(client, ws)
    preview = as_dict(await call(client, methods.CONTEXT_PREVIEW, {"cwd": ws.path(".")}))
    assert (preview["text"], preview["files"]) == ("", [])
    assert preview["notRead"] == [
        {
            "agent": "Gemini CLI",
            "effect": "GEMINI.md holds a directory's instructions",
            "paths": ["GEMINI.md"],
            "enable": 'add "GEMINI.md" to instructions.instructionFileCandidates',
            "setting": "instructions.instructionFileCandidates",
        },
        {
            "agent": "Claude Code",
            "effect": ".claude/CLAUDE.md holds a directory's instructions",
            "paths": [".claude/CLAUDE.md"],
            "enable": "no setting makes it apply to its project (read as it is, it governs only "
            ".claude/ itself); link or move it to CLAUDE.md",
        },
    ]
    scopes = as_dict(await call(client, methods.SCOPES, {"uri": ws.uri("a.py")}))
    assert scopes["notRead"] == preview["notRead"]
    for rel in ("GEMINI.md", ".claude/CLAUDE.md"):
        hover = await hover_text(client, ws, rel)
        if rel == "GEMINI.md":
            assert hover.startswith("**GEMINI.md** — not read by this sidecar")
        assert (
            "Not read by this sidecar: Gemini CLI's convention GEMINI.md holds a directory's "
            'instructions (`GEMINI.md`); add "GEMINI.md" to '
            "`instructions.instructionFileCandidates` to read it" in hover
        )
        assert "it governs only .claude/ itself); link or move it to CLAUDE.md" in hover
    # The CLI says the same as the server.
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "preview", ws.path("."), "--json"],
        capture_output=True,
        check=True,
        env=server_env(),
    )
    assert json.loads(done.stdout) == preview

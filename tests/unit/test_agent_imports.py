"""Each CLI's own import syntax and sent text (explain/agent_imports.py), as the shipped code of
Claude Code 2.1.332 and Gemini CLI 0.61.0 reads them and the conformance runs confirmed
(docs/reference/agent-models.md)."""

from __future__ import annotations

from dsh_sidecar.explain.agent_imports import claude_imports, gemini_imports, sent_claude_text

TEXT = (
    "plain @a.md\n"
    "`@span.md`\n"
    "~~~\n@tilde.md\n~~~\n"
    "\n    @indented.md\n\n"
    "<!-- @comment.md -->\n"
    "*@em.md*\n"
    "@frag.md#part\n"
    "@my\\ notes.md\n"
    "@dot.md.\n"
    "(@paren.md)\n"
    "- @item.md\n"
    "@~/home.md\n"
    "@_under.md\n"
    "@picture.png\n"
    "@notes\n"
)


def test_claude_code_reads_imports_from_markdown_text_only() -> None:
    got = [i.path for i in claude_imports(TEXT, "/p", "/h")]
    assert got == [
        "/p/a.md",
        "/p/em.md",
        "/p/frag.md",
        "/p/my notes.md",
        "/p/item.md",
        "/h/home.md",
        "/p/_under.md",
        "/p/notes",
    ]


def test_gemini_cli_scans_the_raw_text_and_hides_only_backtick_code() -> None:
    got = [i.path for i in gemini_imports(TEXT, "/p")]
    assert got == [
        "/p/a.md",
        "/p/tilde.md",
        "/p/indented.md",
        "/p/comment.md",
        "/p/frag.md#part",
        "/p/my\\",
        "/p/dot.md.",
        "/p/item.md",
        "/p/picture.png",
        "/p/notes",
    ]


def test_gemini_cli_spans_are_backtick_runs_of_the_same_length() -> None:
    text = "``a ` @in.md`` @out.md ```\n@fenced.md\n``` @after.md ` @unclosed.md"
    assert [i.path for i in gemini_imports(text, "/p")] == [
        "/p/out.md",
        "/p/after.md",
        "/p/unclosed.md",
    ]


def test_claude_code_sends_a_file_without_bom_frontmatter_and_comment_blocks() -> None:
    data = "\ufeff---\nnote: x\n---\nkeep\r\n<!-- gone -->\r\nalso <!-- stays --> here\r\n"
    assert sent_claude_text(data.encode()) == b"keep\nalso <!-- stays --> here\n"
    assert sent_claude_text(b"---\nonly: front\n---\n") == b""
    assert sent_claude_text(b"no comment\r\n") == b"no comment\r\n"
    # An unclosed comment hides nothing, and a second one is not looked for again.
    assert sent_claude_text(b"<!-- open\n<!-- open\ntext\n") == b"<!-- open\n<!-- open\ntext\n"


def test_a_path_with_a_nul_names_no_file_for_either_agent() -> None:
    # A repository's CLAUDE.md can hold "@docs/x\0y.md": no file has that name, and the path
    # must never reach the filesystem (it raised "embedded null byte" in explain).
    text = "@docs/x\x00y.md @ok.md\n"
    assert [i.path for i in claude_imports(text, "/p", "/h")] == ["/p/ok.md"]
    assert [i.path for i in gemini_imports(text, "/p")] == ["/p/ok.md"]

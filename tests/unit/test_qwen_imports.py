"""Qwen Code 0.24.4's @import scan (explain/agent_imports.py qwen_imports, explain/qwen_markdown.py).

Each expected list is what Qwen Code's own code gives for the text: its bundle's marked and its
findImports/findCodeRegions, cut out unchanged and run with node (the @paths its processImports
goes on to resolve); the tilde fence, indented block, list, table and quote cases were seen in
real runs too (tests/conformance/found/qwen-import-in-tilde-fence.json and
qwen-import-code-constructs.json). Facts: docs/reference/agent-models.md, Qwen Code 0.24.4.
"""

from __future__ import annotations

import pytest

from dsh_sidecar.explain.agent_imports import gemini_imports, qwen_imports
from dsh_sidecar.explain.qwen_markdown import code_regions

CASES = [
    pytest.param(
        "@top.md\n```\n @back.md\n```\n~~~\n @tilde.md\n~~~\n\n    @indented.md\n\n"
        "see `x @span.md` and @after.md\n",
        ["top.md", "after.md"],
        id="fences-of-both-kinds-indented-block-and-span-hide",
    ),
    pytest.param(
        "- item\n  ```\n  @listfence.md\n  ```\n- `x @listspan.md`\n\n      @listindent.md\n",
        ["listfence.md", "listspan.md`", "listindent.md"],
        id="nothing-in-a-list-is-code",
    ),
    pytest.param(
        "1. one\n   ~~~\n   @numbered.md\n   ~~~\n\n* [x] `a @task.md`\n",
        ["numbered.md", "task.md`"],
        id="ordered-and-task-lists-too",
    ),
    pytest.param(
        "| a | b |\n|---|---|\n| `x @cell.md` | @c.md |\n",
        ["cell.md`", "c.md"],
        id="nothing-in-a-table-is-code",
    ),
    pytest.param(
        "> `x @quoted.md`\n\n> ```\n> @quotefence.md\n> ```\n",
        ["quotefence.md"],
        id="a-quote-hides-only-children-it-holds-verbatim",
    ),
    pytest.param(
        "<div>\n`x @html.md`\n</div>\n\n<!-- @comment.md -->\n",
        ["html.md`", "comment.md"],
        id="html-blocks-and-comments-hide-nothing",
    ),
    pytest.param(
        "text `x\n\n@gap.md` @after.md\n",
        ["gap.md`", "after.md"],
        id="a-span-ends-with-its-paragraph",
    ),
    pytest.param(
        "```\n@unclosed.md\n\nstill @code.md\n", [], id="an-unclosed-fence-runs-to-the-end"
    ),
    pytest.param(
        "[ref]: http://example.com\n\n```\n@shifted.md\n```\n",
        ["shifted.md"],
        id="a-link-definition-shifts-what-follows",
    ),
    pytest.param(
        "a\r\n" * 12 + "\r\n```\r\n @crlf.md\r\n```\r\n",
        ["crlf.md"],
        id="crlf-line-breaks-shift-what-follows",
    ),
    pytest.param(
        "see http://x.org/`a @url.md` and \\` @esc.md`\n",
        ["url.md`", "esc.md`"],
        id="a-bare-link-or-an-escape-takes-the-backtick",
    ),
    pytest.param("``a ` @in.md`` @out.md\n", ["out.md"], id="spans-are-runs-of-the-same-length"),
    pytest.param(
        "@http://a/b.md @./rel.md @/abs.md @1digit.md x@mail.md\n",
        ["./rel.md", "/abs.md"],
        id="paths-start-with-a-dot-slash-or-letter-and-are-no-url",
    ),
]


@pytest.mark.parametrize(("text", "want"), CASES)
def test_qwen_code_imports_what_its_marked_walk_leaves_visible(text: str, want: list[str]) -> None:
    got = [text[i.start + 1 : i.end] for i in qwen_imports(text, "/p")]
    assert got == want


def test_qwen_code_and_gemini_cli_part_ways_on_tildes_indents_and_lists() -> None:
    text = "~~~\n @tilde.md\n~~~\n\n    @indented.md\n\n- ```\n  @listfence.md\n  ```\n"
    assert [i.path for i in qwen_imports(text, "/p")] == ["/p/listfence.md"]
    assert [i.path for i in gemini_imports(text, "/p")] == [
        "/p/tilde.md",
        "/p/indented.md",
    ]


def test_qwen_code_resolves_against_the_importer_directory() -> None:
    [found] = qwen_imports("x @../up/a.md\n", "/p/q")
    assert found.path == "/p/up/a.md"


def test_the_scan_stays_linear_on_hostile_text() -> None:
    # Hundreds of backtick runs of distinct lengths with no closer, and long quotes and lists:
    # each run is looked at a bounded number of times (counts checked against Qwen Code's own).
    runs = "x " + "".join("`" * n + " @b.md " for n in range(1, 300))
    assert len(qwen_imports(runs, "/p")) == 299
    lines = "".join("`" * n + " x @a.md\n" for n in range(1, 400))
    blocks = lines + "> a\n" * 2000 + "- b\n" * 2000 + " @end.md"
    # The third line opens a fence no later line closes: only the first two lines import.
    assert [i.start for i in qwen_imports(blocks, "/p")] == [4, 15]
    assert code_regions(blocks)[-1][1] == len(blocks)
    # Unclosed comments, instructions, quotes in tags and tildes before backticks: each closer
    # is searched for once, or within a bounded window.
    tags = "a " + '<? <!-- <a b=" ~`x @t.md ' * 5000
    assert len(qwen_imports(tags, "/p")) == 5000
    # Paragraphs a setext search would read to the end from each, and a quote of lazy lines.
    assert code_regions("a\n***\n" * 20000) == []
    assert code_regions("> `a\nb`\n" * 20000) == []
    # Quotes nested thousands deep: the deepest are taken whole (no stack runs out).
    assert code_regions(">" * 20000 + " `a`\n") == []
    # Nested a few deep, a quote of several lines holds its children only stripped of ">":
    # nothing in it is code to the walk.
    nested = "> > > ` @a.md`\n> > > ```\n> > >  @c.md\n"
    assert [i.path for i in qwen_imports(nested, "/p")] == ["/p/a.md`", "/p/c.md"]

"""The conformance trees: small repositories, each instruction file holding unique markers, run
through every CLI with one read of a file below the working directory.

A file's text may use ``{m}`` (its marker, at the start), ``{tail}`` (a second marker, seen only
when the whole file arrives) and ``{fm}`` (a marker inside YAML frontmatter, seen only when the
agent sends the frontmatter). ``{pad:N}`` expands to N bytes of filler. Paths are relative to the
tree's base directory; ``home/`` is the HOME the CLIs run with, ``repo/`` usually the git root.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Tree:
    name: str
    files: dict[str, str]
    cwd: str = "repo"
    read: str = "repo/pkg/sub/x.py"
    git: tuple[str, ...] = ("repo",)
    symlinks: dict[str, str] = attrs.field(factory=dict)  # link path -> target (relative)
    note: str = ""


X = "print('hello')\n"
RULE_PATHS_PY = '---\npaths:\n  - "pkg/**/*.py"\ndescription: {fm}\n---\n{m}\n'
RULE_PATHS_TS = '---\npaths: "**/*.ts"\n---\n{m}\n'

TREES: tuple[Tree, ...] = (
    Tree(
        "agents-md-only",
        {
            "repo/AGENTS.md": "{m}\n",
            "repo/AGENTS.local.md": "{m}\n",
            "repo/pkg/AGENTS.md": "{m}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n",
            "repo/pkg/sub/.claude/AGENTS.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        note="AGENTS.md everywhere, no CLAUDE.md: Claude falls back to AGENTS.md (not to the "
        "sidecar's AGENTS.local.md overlay)",
    ),
    Tree(
        "claude-md-and-agents-md",
        {
            "repo/CLAUDE.md": "{m}\n",
            "repo/AGENTS.md": "{m}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n",
            "repo/pkg/sub/CLAUDE.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        note="a CLAUDE.md on the start walk: Claude reads no AGENTS.md anywhere",
    ),
    Tree(
        "claude-md-imports-agents-md",
        {"repo/CLAUDE.md": "{m}\n@AGENTS.md\n", "repo/AGENTS.md": "{m}\n", "repo/pkg/sub/x.py": X},
    ),
    Tree(
        "above-git-root",
        {
            "outer/AGENTS.md": "{m}\n",
            "outer/GEMINI.md": "{m}\n",
            "outer/repo/AGENTS.md": "{m}\n",
            "outer/repo/GEMINI.md": "{m}\n",
            "outer/repo/.claude/AGENTS.md": "{m}\n@extra.md\n",
            "outer/repo/.claude/extra.md": "{m}\n",
            "outer/.claude/rules/outer-rule.md": "{m}\n",
            "outer/repo/pkg/sub/x.py": X,
        },
        cwd="outer/repo",
        read="outer/repo/pkg/sub/x.py",
        git=("outer/repo",),
        note="AGENTS.md above the git root and .claude/AGENTS.md with an import",
    ),
    Tree(
        "claude-md-above-git-root",
        {
            "outer/CLAUDE.md": "{m}\n",
            "outer/repo/AGENTS.md": "{m}\n",
            "outer/repo/pkg/sub/AGENTS.md": "{m}\n",
            "outer/repo/pkg/sub/x.py": X,
        },
        cwd="outer/repo",
        read="outer/repo/pkg/sub/x.py",
        git=("outer/repo",),
        note="a CLAUDE.md above the git root still counts as found on the start walk",
    ),
    Tree(
        "cwd-below-git-root",
        {
            "repo/AGENTS.md": "{m}\n",
            "repo/GEMINI.md": "{m}\n",
            "repo/CLAUDE.md": "{m}\n",
            "repo/.claude/rules/root-rule.md": "{m}\n",
            "repo/pkg/AGENTS.md": "{m}\n",
            "repo/pkg/GEMINI.md": "{m}\n",
            "repo/pkg/CLAUDE.md": "{m}\n",
            "repo/pkg/.claude/rules/pkg-rule.md": "{m}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n",
            "repo/pkg/sub/GEMINI.md": "{m}\n",
            "repo/pkg/sub/CLAUDE.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        cwd="repo/pkg",
    ),
    Tree(
        "dot-claude-claude-md-only",
        {
            "repo/.claude/CLAUDE.md": "{m}\n",
            "repo/pkg/sub/.claude/CLAUDE.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
    ),
    Tree(
        "claude-local-md-and-agents-md",
        {"repo/CLAUDE.local.md": "{m}\n", "repo/AGENTS.md": "{m}\n", "repo/pkg/sub/x.py": X},
        note="does CLAUDE.local.md count as the CLAUDE.md that turns AGENTS.md off",
    ),
    Tree(
        "dot-claude-claude-md-and-agents-md",
        {"repo/.claude/CLAUDE.md": "{m}\n", "repo/AGENTS.md": "{m}\n", "repo/pkg/sub/x.py": X},
    ),
    Tree(
        "nested-after-read",
        {
            "repo/CLAUDE.md": "{m}\n",
            "repo/pkg/CLAUDE.local.md": "{m}\n",
            "repo/pkg/sub/CLAUDE.md": "{m}\n",
            "repo/pkg/sub/.claude/CLAUDE.md": "{m}\n",
            "repo/pkg/sub/CLAUDE.local.md": "{m}\n",
            "repo/pkg/sub/.claude/rules/plain.md": "{m}\n",
            "repo/pkg/sub/.claude/rules/py.md": '---\npaths: "*.py"\n---\n{m}\n',
            "repo/pkg/sub/.claude/rules/ts.md": RULE_PATHS_TS,
            "repo/pkg/sub/GEMINI.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
            "repo/other/CLAUDE.md": "{m}\n",
            "repo/other/GEMINI.md": "{m}\n",
        },
    ),
    Tree(
        "rules-with-and-without-paths",
        {
            "repo/CLAUDE.md": "{m}\n",
            "repo/.claude/rules/always.md": "{m}\n",
            "repo/.claude/rules/deeper/nested-always.md": "{m}\n",
            "repo/.claude/rules/py.md": RULE_PATHS_PY,
            "repo/.claude/rules/ts.md": RULE_PATHS_TS,
            "repo/.claude/rules/empty.md": "",
            "repo/pkg/sub/x.py": X,
        },
    ),
    Tree(
        "user-files",
        {
            "home/.claude/CLAUDE.md": "{m}\n",
            "home/.claude/rules/user-rule.md": "{m}\n",
            "home/.claude/rules/user-ts.md": RULE_PATHS_TS,
            "home/.gemini/GEMINI.md": "{m}\n",
            "home/.codex/AGENTS.md": "{m}\n",
            "repo/CLAUDE.md": "{m}\n",
            "repo/AGENTS.md": "{m}\n",
            "repo/GEMINI.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
    ),
    Tree(
        "imports",
        {
            "repo/CLAUDE.md": "{m}\n@a.md\nin a span `@span.md` here\n```\n@block.md\n```\n",
            "repo/a.md": "{m}\n@b.md\n",
            "repo/b.md": "{m}\n@c.md\n",
            "repo/c.md": "{m}\n@d.md\n",
            "repo/d.md": "{m}\n@e.md\n",
            "repo/e.md": "{m}\n@f.md\n",
            "repo/f.md": "{m}\n@h.md\n",
            "repo/h.md": "{m}\n",
            "repo/span.md": "{m}\n",
            "repo/block.md": "{m}\n",
            "repo/GEMINI.md": "{m}\n@g1.md\nin a span `@gspan.md` here\n",
            "repo/g1.md": "{m}\n@g2.md\n",
            "repo/g2.md": "{m}\n@g3.md\n",
            "repo/g3.md": "{m}\n@g4.md\n",
            "repo/g4.md": "{m}\n@g5.md\n",
            "repo/g5.md": "{m}\n@g6.md\n",
            "repo/g6.md": "{m}\n",
            "repo/gspan.md": "{m}\n",
            "repo/AGENTS.md": "{m}\n@a.md\n",
            "repo/pkg/sub/x.py": X,
        },
    ),
    Tree(
        "imports-under-the-agents-md-fallback-and-after-a-read",
        {
            "repo/AGENTS.md": "{m}\n@i1.md\n",
            "repo/i1.md": "{m}\n@i2.md\n",
            "repo/i2.md": "{m}\n@i3.md\n",
            "repo/i3.md": "{m}\n@i4.md\n",
            "repo/i4.md": "{m}\n@i5.md\n",
            "repo/i5.md": "{m}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n@n1.md\n",
            "repo/pkg/sub/n1.md": "{m}\n@n2.md\n",
            "repo/pkg/sub/n2.md": "{m}\n@n3.md\n",
            "repo/pkg/sub/n3.md": "{m}\n@n4.md\n",
            "repo/pkg/sub/n4.md": "{m}\n@n5.md\n",
            "repo/pkg/sub/n5.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        note="import depth from a fallback AGENTS.md at start and from a nested one after a read",
    ),
    Tree(
        "empty-files",
        {
            "repo/CLAUDE.md": "",
            "repo/AGENTS.md": "{m}\n",
            "repo/GEMINI.md": "",
            "repo/pkg/sub/CLAUDE.md": "",
            "repo/pkg/sub/GEMINI.md": "\n\n",
            "repo/pkg/sub/AGENTS.md": "   \n",
            "repo/pkg/sub/x.py": X,
        },
        note="empty files are not sent; does an empty CLAUDE.md turn Claude's AGENTS.md off",
    ),
    Tree(
        "overrides",
        {
            "repo/AGENTS.override.md": "{m}\n",
            "repo/AGENTS.md": "{m}\n",
            "repo/pkg/AGENTS.override.md": "  \n",
            "repo/pkg/AGENTS.md": "{m}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        cwd="repo/pkg/sub",
    ),
    Tree(
        "oversized",
        {
            "repo/AGENTS.md": "{m}\n{pad:20000}\n{tail}\n",
            "repo/CLAUDE.md": "{m}\n@AGENTS.md\n",
            "repo/pkg/AGENTS.md": "{m}\n{pad:20000}\n{tail}\n",
            "repo/pkg/GEMINI.md": "{m}\n{pad:31000}\n{tail}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        cwd="repo/pkg/sub",
        note="Codex fills 32 KiB root first and cuts the file crossing it",
    ),
    Tree(
        "import-from-parent-directory",
        {
            "repo/CLAUDE.md": "{m}\n@AGENTS.md\n@big.md\n",
            "repo/AGENTS.md": "{m}\n",
            "repo/big.md": "{m}\n{pad:20000}\n{tail}\n",
            "repo/pkg/sub/x.py": X,
        },
        cwd="repo/pkg",
    ),
    Tree(
        "import-big-file",
        {
            "repo/CLAUDE.md": "{m}\n@AGENTS.md\n",
            "repo/AGENTS.md": "{m}\n{pad:20000}\n{tail}\n",
            "repo/pkg/sub/x.py": X,
        },
    ),
    Tree(
        "nested-rule-globs",
        {
            "repo/CLAUDE.md": "{m}\n",
            "repo/pkg/.claude/rules/rel-owner.md": '---\npaths: "sub/*.py"\n---\n{m}\n',
            "repo/pkg/.claude/rules/rel-root.md": '---\npaths: "pkg/sub/*.py"\n---\n{m}\n',
            "repo/pkg/sub/x.py": X,
        },
        note="which directory a nested rule's paths are relative to",
    ),
    Tree(
        "symlinked-claude-md",
        {"repo/AGENTS.md": "{m}\n", "repo/pkg/sub/AGENTS.md": "{m}\n", "repo/pkg/sub/x.py": X},
        symlinks={"repo/CLAUDE.md": "AGENTS.md", "repo/pkg/sub/CLAUDE.md": "AGENTS.md"},
    ),
    Tree(
        "gemini-md-only",
        {
            "repo/GEMINI.md": "{m}\n",
            "repo/pkg/GEMINI.md": "{m}\n",
            "repo/pkg/sub/GEMINI.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
    ),
    Tree(
        "user-claude-md-and-agents-md",
        {
            "home/.claude/CLAUDE.md": "{m}\n",
            "repo/AGENTS.md": "{m}\n",
            "repo/pkg/sub/AGENTS.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        note="the user's ~/.claude/CLAUDE.md does not turn the project's AGENTS.md off",
    ),
    Tree(
        "other-agents-names",
        {
            "home/.qwen/QWEN.md": "{m}\n",
            "home/.qwen/AGENTS.md": "{m}\n",
            "home/.copilot/copilot-instructions.md": "{m}\n",
            "outer/QWEN.md": "{m}\n",
            "outer/AGENTS.md": "{m}\n",
            "outer/repo/QWEN.md": "{m}\n",
            "outer/repo/AGENTS.md": "{m}\n",
            "outer/repo/.github/copilot-instructions.md": "{m}\n",
            "outer/repo/pkg/QWEN.md": "{m}\n",
            "outer/repo/pkg/CLAUDE.md": "{m}\n",
            "outer/repo/pkg/.github/copilot-instructions.md": "{m}\n",
            "outer/repo/pkg/sub/QWEN.md": "{m}\n",
            "outer/repo/pkg/sub/AGENTS.md": "{m}\n",
            "outer/repo/pkg/sub/.claude/CLAUDE.md": "{m}\n",
            "outer/repo/pkg/sub/x.py": X,
        },
        cwd="outer/repo/pkg",
        read="outer/repo/pkg/sub/x.py",
        git=("outer/repo",),
        note="Qwen Code's and Copilot CLI's own names: QWEN.md, ~/.qwen, ~/.copilot, "
        ".github/copilot-instructions.md; Qwen reads the directory above the git root too",
    ),
    Tree(
        "no-git",
        {
            "repo/AGENTS.md": "{m}\n",
            "repo/GEMINI.md": "{m}\n",
            "repo/CLAUDE.md": "{m}\n",
            "repo/pkg/AGENTS.md": "{m}\n",
            "repo/pkg/GEMINI.md": "{m}\n",
            "repo/pkg/sub/GEMINI.md": "{m}\n",
            "repo/pkg/sub/x.py": X,
        },
        cwd="repo/pkg",
        git=(),
    ),
)

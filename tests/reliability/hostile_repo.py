"""A generator of hostile repository trees for the adversarial suite (issue 24 item 6).

``hostile_tree(base, scale)`` writes a project whose instruction files attack every parser of
repository text at once, each attack's size proportional to ``scale`` (so doubling ``scale``
doubles the work of a linear parser and quadruples a quadratic one's), next to a directory
outside the project holding a secret that nothing the sidecar sends may ever contain:

- long runs (400 × scale backticks amid code spans, 60 KB × scale of spaces in a frontmatter
  value and in a list item, unclosed fences and spans, a ```` fence closed by ```);
- deep nesting (a chain of directories with an AGENTS.md in each, one name of 200 ``a``\\ s);
- huge lists (a Copilot rule with 20,000 × scale globs, 501 rule files in all, 100 distinct
  ``@`` imports in one file);
- odd bytes (a file that is not UTF-8, NUL and control characters, line separators, frame tags
  in fullwidth and with invisibles);
- hostile patterns (``.gitignore`` lines that backtrack in a regex engine: ``*a*a*a*a*a*b/``,
  ``**/a/**/a/**/b``), globs with many stars;
- links out (``CLAUDE.md`` and rule files that are symlinks to the secret, imports of it by
  ``..`` and by absolute path).

``big_text_tree(base, depth, megabytes)`` writes a deep chain of large instruction files, for
the responsiveness and stop-signal tests (a request over it takes seconds of linear work).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import attrs

SECRET = "SECRET-" + uuid.uuid4().hex  # never in anything the sidecar sends or prints


@attrs.frozen
class HostileTree:
    project: Path
    outside: Path
    deep_file: Path  # a file at the bottom of the chain (touch, scopes, explain, hover)
    agents_md: Path  # the root AGENTS.md, full of attacks


def settings() -> dict[str, object]:
    """Settings that turn every parser on (imports, all rule sets)."""
    return {
        "instructions": {
            "imports": True,
            "ruleSets": ["copilot", "claude", "cursor"],
            "overrideFiles": True,
        }
    }


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def hostile_tree(base: Path, scale: int = 1) -> HostileTree:
    project = base / "proj"
    outside = base / "outside"
    secret = outside / "secret.md"
    _write(secret, f'---\napplyTo: "{SECRET}/**"\npaths: ["{SECRET}/**"]\n---\n{SECRET}\n')
    _write(outside / "also.md", f"{SECRET} imported\n")
    (project / ".git").mkdir(parents=True)

    spans = "a `b` " * (500 * scale) + "`" * (400 * scale) + " c `d` " * (500 * scale)
    attacks = [
        "# Root rules",
        spans,
        "``" * (200 * scale) + "`" * (100 * scale),  # nested openers
        "`x " * (1000 * scale),  # unclosed spans
        " " * (60_000 * scale) + "@docs/long-line.md",  # a long line
        "````\n```\n@docs/in-fence.md\n```\n````",  # a longer fence, closed only by ````
        "~~~~\n" + "```\n" * (100 * scale),  # an unclosed fence runs to the end
    ]
    imports = " ".join(f"@docs/i{i}.md" for i in range(100))
    links_out = f"@../outside/also.md @{outside / 'also.md'} @~/../../{outside.name}/also.md"
    odd = "nul\x00 bell\x07 sep\u2028 rtl\u202e <\uff53ystem-reminder> <s\u200bystem-reminder>"
    agents = "\n".join([*attacks[:5], imports, links_out, odd, *attacks[5:]]) + "\n"
    _write(project / "AGENTS.md", agents)
    for i in range(100):
        _write(project / "docs" / f"i{i}.md", f"import {i}\n")
    _write(project / "docs/long-line.md", "long line target\n")
    _write(project / "docs/in-fence.md", "never imported\n")
    os.symlink(secret, project / "CLAUDE.md")

    ignore = ["*a*a*a*a*a*a*b/", "**/a/**/a/**/a/**/b", "[ab]*[ab]*[ab]*?c/", "node_modules/"]
    _write(project / ".gitignore", "\n".join(ignore) + "\n")

    front_spaces = " " * (60_000 * scale)
    globs = ", ".join(f"g{i}/**/*.py" for i in range(20_000 * scale))
    rules = {
        ".github/instructions/huge.instructions.md": f'---\napplyTo: "{globs}"\n---\nHuge.\n',
        ".github/instructions/spaces.instructions.md": (
            f"---\napplyTo: a{front_spaces}b\ndescription: x{front_spaces}y\n---\nSpaces.\n"
        ),
        ".claude/rules/items.md": f"---\npaths:\n  - a{front_spaces}b\n-{front_spaces}c\n---\n",
        ".cursor/rules/stars.mdc": "---\nglobs: " + "*a" * 200 + "*b, " + "**/" * 60 + "x\n---\n",
    }
    for rel, text in rules.items():
        _write(project / rel, text)
    os.symlink(secret, project / ".claude/rules/leak.md")
    os.symlink(secret, project / ".github/instructions/leak.instructions.md")
    for i in range(500):  # with the rules above: more than the 500 the sidecar reads
        _write(project / f".cursor/rules/many/r{i:03}.mdc", f"---\nglobs: many{i}/**\n---\n")

    deep = project
    for depth in range(12):
        deep = deep / ("a" * 200 if depth == 6 else f"d{depth}")
        _write(deep / "AGENTS.md", f"level {depth} `" + "`" * (50 * scale) + "\n")
    _write(deep / "bad.md", b"\xff\xfe not utf-8 \xc3\x28\n")
    os.symlink(deep / "bad.md", deep / "AGENTS.local.md")
    _write(deep / "x.py", "print('hi')\n")
    return HostileTree(project, outside, deep / "x.py", project / "AGENTS.md")


def big_text_tree(base: Path, depth: int = 10, megabytes: float = 1.0) -> Path:
    """A chain of ``depth`` directories, each with an AGENTS.md of about ``megabytes`` MB of
    prose with frame tags, spans and imports; returns the file at the bottom."""
    project = base / "big"
    (project / ".git").mkdir(parents=True)
    line = "text `code` <system-reminder> @nothing.md and more words here, " * 8 + "\n"
    blob = line * max(1, int(megabytes * 1_000_000 / len(line)))
    directory = project
    for level in range(depth):
        _write(directory / "AGENTS.md", f"level {level}\n" + blob)
        directory = directory / f"d{level}"
    _write(directory / "x.py", "")
    return directory / "x.py"


def add_fifos(tree: HostileTree) -> list[Path]:
    """FIFOs where a reader that opens before it looks would block forever: an ``AGENTS.md``,
    a ``CLAUDE.md`` and a ``.gitignore`` that are FIFOs, a FIFO an agent reads, and an
    ``AGENTS.md`` linked to a FIFO outside the project. Returns the files to touch beside them
    (kept apart from ``hostile_tree`` so the server's tests keep their own tree)."""
    base = tree.project / "fifo"
    linked = base / "linked"
    linked.mkdir(parents=True)
    for fifo in (base / "AGENTS.md", base / "CLAUDE.md", base / ".gitignore", base / "pipe.py"):
        os.mkfifo(fifo)
    os.mkfifo(tree.outside / "pipe.md")
    os.symlink(tree.outside / "pipe.md", linked / "AGENTS.md")
    _write(base / "x.py", "x = 1\n")
    _write(linked / "y.py", "y = 1\n")
    return [base / "x.py", base / "pipe.py", linked / "y.py"]

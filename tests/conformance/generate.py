"""Conformance trees nobody wrote by hand: ``generate(seed, index)`` builds one tree at random
(seeded, so the same pair always gives the same tree) over what the agent models cover, and
``shrink`` cuts a tree on which a CLI disagrees with the model down to the files that still make
it disagree (delta debugging over the tree's files and links).

Every generated instruction or imported file starts with its own marker (``{m}``, trees.py), so
what the CLI sent can be told apart file by file. The features a tree uses are named (``FEATURES``)
and listed on the tree, so a disagreement says what it was built from, and a run can leave a
feature out (``exclude``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from .trees import Tree

X = "print('hello')\n"

# What a tree can be made of. Each one is chosen at random per tree (a few always).
FEATURES = (
    "names",  # AGENTS.md, CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, GEMINI.md, QWEN.md ...
    "case-variants",  # agents.md, Claude.md, GEMINI.MD: names the agents do not read
    "overrides",  # AGENTS.override.md, blank or not
    "claude-rules",  # .claude/rules with and without paths
    "github-files",  # .github/copilot-instructions.md and instructions/*.instructions.md
    "home",  # ~/.claude, ~/.gemini, ~/.codex, ~/.qwen, ~/.copilot files
    "imports",  # @path imports: chains, cycles, diamonds, every syntax variant
    "content-edges",  # empty, whitespace, BOM, CRLF, frontmatter, HTML comments, multibyte
    "links-inside",  # a name linked to another file of the project
    "links-outside",  # a name linked to a shared file outside the repository
    "links-dangling",  # a link to nothing
    "rules-dir-link",  # .claude/rules as a link to a directory
    "above-root",  # instruction files above the git root
)

# Features the models still get wrong, each with the cause: the CI sample leaves them out
# (saying so), and their minimal trees in found/ are xfail(strict) with the same reason.
UNFIXED: dict[str, str] = {}
# The same for one CLI only: its sample leaves these out too, the others' samples keep them.
UNFIXED_FOR: dict[str, dict[str, str]] = {}

# Where the session runs and what the model reads, relative to the tree's base directory.
LAYOUTS = (
    # name, cwd, git roots, read
    ("root", "repo", ("repo",), "repo/pkg/sub/x.py"),
    ("root-shallow-read", "repo", ("repo",), "repo/pkg/x.py"),
    ("below", "repo/pkg", ("repo",), "repo/pkg/sub/x.py"),
    ("above-git-root", "repo", ("repo/pkg",), "repo/pkg/sub/x.py"),
    ("no-git", "repo", (), "repo/pkg/sub/x.py"),
    ("nested-repository", "repo", ("repo", "repo/pkg"), "repo/pkg/sub/x.py"),
    ("git-file", "repo", (), "repo/pkg/sub/x.py"),
    ("read-outside-cwd", "repo/pkg", ("repo",), "repo/other/y.py"),
)

NAMES = (
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/AGENTS.md",
    "GEMINI.md",
)
CASE_VARIANTS = ("agents.md", "Claude.md", "GEMINI.MD", "Agents.md", "claude.local.md")
RULE_FRONTS = (
    "",
    '---\npaths: "**"\n---\n',
    '---\npaths:\n  - "**"\n---\n',
    '---\npaths: "**/*.py"\n---\n',
    '---\npaths: "*.py"\n---\n',
    '---\npaths: "sub/*.py"\n---\n',
    '---\npaths: "pkg/**"\n---\n',
    '---\npaths: "**/*.ts"\n---\n',
    '---\npaths:\n  - "**/*.ts"\n  - "**/x.py"\n---\n',
    "---\ndescription: {fm}\n---\n",
)
# Ways to write an import of ``T`` (a path relative to the importing file); some are no import
# at all for some agent (code, comments), which is the point.
IMPORT_FORMS = (
    "@{t}\n",
    "see @{t} for more\n",
    "@{t}.\n",
    "(@{t})\n",
    "@./{t}\n",
    "`@{t}`\n",
    "```\n@{t}\n```\n",
    "~~~\n@{t}\n~~~\n",
    "    @{t}\n",
    "<!-- @{t} -->\n",
    "*@{t}*\n",
    "@{t}#part\n",
    "- @{t}\n",
)
CONTENT_EDGES = (
    "",
    "  \n\n",
    "\ufeff{m}\n",
    "\ufeff",
    "{m}\r\nsecond line\r\n{tail}\r\n",
    "---\nnote: {fm}\n---\n{m}\n",
    "{m}\n<!-- {cm} -->\n{tail}\n",
    "<!-- {cm} -->\n{m}\n",
    "{m}\n{mb:17000}\n{tail}\n",
    "{m}\n{pad:20000}\n{tail}\n",
    "<!-- {cm} -->\n",
    "---\nnote: {fm}\n---\n",
)


@attrs.frozen
class Generated:
    tree: Tree
    features: tuple[str, ...]
    seed: int
    index: int


def generate(seed: int, index: int, exclude: Iterable[str] = ()) -> Generated:
    """The ``index``-th tree of ``seed``: the same pair always gives the same tree."""
    rng = random.Random(f"dsh-conformance/{seed}/{index}")
    allowed = [f for f in FEATURES if f not in set(exclude)]
    features = sorted({"names", *rng.sample(allowed, k=min(len(allowed), rng.randint(2, 6)))})
    features = [f for f in features if f in allowed]
    layout_name, cwd, git, read = rng.choice(LAYOUTS)
    files: dict[str, str] = {read: X}
    symlinks: dict[str, str] = {}
    dirs = ["repo", "repo/pkg", "repo/pkg/sub", "repo/other"]
    if "above-root" in features:
        dirs.insert(0, "")
    if layout_name == "git-file":
        # A worktree's or submodule's .git is a file naming the real git directory.
        files["repo/.git"] = "gitdir: ../.git-dir\n"
    instruction: list[str] = []

    def put(path: str, text: str) -> None:
        files[path.lstrip("/")] = text
        if path.endswith((".md", ".MD")):
            instruction.append(path.lstrip("/"))

    for directory in dirs:
        prefix = f"{directory}/" if directory else ""
        for name in NAMES:
            if rng.random() < 0.3:
                put(prefix + name, "{m}\n")
        if "case-variants" in features and rng.random() < 0.3:
            put(prefix + rng.choice(CASE_VARIANTS), "{m}\n")
        if "overrides" in features and rng.random() < 0.4:
            put(prefix + "AGENTS.override.md", rng.choice(("{m}\n", "  \n")))
        if "claude-rules" in features and rng.random() < 0.4:
            for n in range(rng.randint(1, 3)):
                sub = rng.choice(("", "", "deep/"))
                put(f"{prefix}.claude/rules/{sub}r{n}.md", rng.choice(RULE_FRONTS) + "{m}\n")
        if "github-files" in features and rng.random() < 0.3:
            put(prefix + ".github/copilot-instructions.md", "{m}\n")
            put(
                prefix + ".github/instructions/py.instructions.md",
                '---\napplyTo: "**/*.py"\n---\n{m}\n',
            )
    if "home" in features:
        for path in (
            "home/.claude/CLAUDE.md",
            "home/.gemini/GEMINI.md",
            rng.choice(("home/.codex/AGENTS.md", "home/.codex/AGENTS.override.md")),
        ):
            if rng.random() < 0.7:
                put(path, "{m}\n")
        if rng.random() < 0.5:
            put("home/.claude/rules/h.md", rng.choice(RULE_FRONTS) + "{m}\n")
    if "content-edges" in features:
        for path in rng.sample(instruction, k=min(len(instruction), rng.randint(1, 3))):
            files[path] = rng.choice(CONTENT_EDGES)
    if "imports" in features and instruction:
        _imports(rng, files, instruction)
    if "links-inside" in features:
        target = rng.choice(instruction) if instruction else None
        if target is not None:
            directory = target.rsplit("/", 1)[0] if "/" in target else ""
            link = f"{directory}/{rng.choice(('CLAUDE.md', 'GEMINI.md', 'AGENTS.md'))}"
            if link != target and link.lstrip("/") not in files:
                symlinks[link.lstrip("/")] = _relative(target, link.lstrip("/"))
    if "links-outside" in features:
        for n, name in enumerate(rng.sample(("AGENTS.md", "CLAUDE.md", "GEMINI.md"), k=2)):
            shared = f"shared/{n}-{name}"
            files[shared] = "{m}\n"
            link = f"{rng.choice(dirs[:3]) or 'repo'}/{name}"
            if link not in files:
                symlinks[link] = _relative(shared, link)
    if "links-dangling" in features:
        link = f"{rng.choice(dirs[:3]) or 'repo'}/{rng.choice(NAMES)}"
        if link not in files:
            symlinks[link] = "missing-target.md"
    if "rules-dir-link" in features:
        owner = rng.choice(("repo", "repo/pkg"))
        source = rng.choice(("repo/rules-src", "shared-rules"))
        files[f"{source}/linked.md"] = "{m}\n"
        files[f"{source}/scoped.md"] = rng.choice(RULE_FRONTS) + "{m}\n"
        if f"{owner}/.claude/rules" not in symlinks:
            symlinks[f"{owner}/.claude/rules"] = _relative(source, f"{owner}/.claude/rules")
            for path in [p for p in files if p.startswith(f"{owner}/.claude/rules/")]:
                del files[path]
    _other_agents_files(
        random.Random(f"dsh-conformance/{seed}/{index}/more"), features, dirs, files
    )
    name = f"gen-{seed}-{index}"
    tree = Tree(
        name,
        files,
        cwd=cwd,
        read=read,
        git=git,
        symlinks=symlinks,
        note=f"layout {layout_name}; features {', '.join(features)}",
    )
    return Generated(tree, tuple(features), seed, index)


def _other_agents_files(
    rng: random.Random, features: list[str], dirs: list[str], files: dict[str, str]
) -> None:
    """Qwen Code's and Copilot CLI's own names, drawn from a second stream so the trees of a
    seed stay what they were for the other CLIs (the names no other CLI reads are added, and
    nothing else moves)."""
    for directory in dirs:
        prefix = f"{directory}/" if directory else ""
        if rng.random() < 0.3 and prefix + "QWEN.md" not in files:
            edge = "content-edges" in features and rng.random() < 0.3
            files[prefix + "QWEN.md"] = rng.choice(CONTENT_EDGES) if edge else "{m}\n"
    if "home" in features:
        for path in (
            "home/.qwen/QWEN.md",
            "home/.qwen/AGENTS.md",
            "home/.copilot/copilot-instructions.md",
        ):
            if rng.random() < 0.5:
                files[path] = "{m}\n"


def _imports(rng: random.Random, files: dict[str, str], instruction: list[str]) -> None:
    """Imports from a few instruction files to helper files: chains, a cycle, a diamond, in
    every written form, some leading to the home directory, above the importer, or to names
    without the .md ending."""
    helpers: list[str] = []
    for importer in rng.sample(instruction, k=min(len(instruction), rng.randint(1, 3))):
        directory = importer.rsplit("/", 1)[0] if "/" in importer else ""
        chain = rng.randint(1, 6)
        previous = importer
        for _ in range(chain):
            kind = rng.choice(
                ("docs", "docs", "up", "home", "plain", "space", "txt", "absolute", "first-char")
            )
            if kind == "absolute":
                target = f"{directory}/docs/a{len(helpers)}.md".lstrip("/")
                written = "{base}/" + target
            elif kind == "first-char":
                first = rng.choice(("_", "-", "9", "."))
                target = f"{directory}/{first}f{len(helpers)}.md".lstrip("/")
                written = f"{first}f{len(helpers)}.md"
            elif kind == "home":
                target = f"home/notes/h{len(helpers)}.md"
                written = f"~/notes/h{len(helpers)}.md"
            elif kind == "up" and "/" in directory:
                parent = directory.rsplit("/", 1)[0]
                target = f"{parent}/up{len(helpers)}.md"
                written = f"../up{len(helpers)}.md"
            elif kind == "plain":
                target = f"{directory}/docs/n{len(helpers)}".lstrip("/")
                written = f"docs/n{len(helpers)}"
            elif kind == "space":
                target = f"{directory}/docs/my notes {len(helpers)}.md".lstrip("/")
                written = f"docs/my\\ notes\\ {len(helpers)}.md"
            elif kind == "txt":
                target = f"{directory}/docs/t{len(helpers)}.txt".lstrip("/")
                written = f"docs/t{len(helpers)}.txt"
            else:
                target = f"{directory}/docs/i{len(helpers)}.md".lstrip("/")
                written = f"docs/i{len(helpers)}.md"
            if previous != importer:
                # From a helper, the path is written relative to that helper's directory.
                if kind not in ("home", "absolute"):
                    written = _relative(target, previous)
                written = written.replace(" ", "\\ ")
            form = rng.choice(IMPORT_FORMS)
            files[previous] = files.get(previous, "{m}\n") + form.format(t=written)
            files.setdefault(target, "{m}\n")
            helpers.append(target)
            previous = target
        if rng.random() < 0.3:  # a cycle back to the importer
            files[previous] += f"@{_relative(importer, previous)}\n"
    if len(helpers) >= 3 and rng.random() < 0.5:  # a diamond: two helpers import a third
        a, b, c = rng.sample(helpers, k=3)
        for via in (a, b):
            files[via] += f"@{_relative(c, via).replace(' ', chr(92) + ' ')}\n"


def _relative(target: str, source: str) -> str:
    """``target`` written relative to the directory of ``source`` (both base-relative)."""
    from os.path import dirname, relpath

    return relpath(target or ".", dirname(source) or ".")


def shrink(tree: Tree, still_fails: Callable[[Tree], bool]) -> Tree:
    """The smallest tree found (ddmin over its files and links; the read file stays) on which
    ``still_fails`` holds, given that it holds on ``tree``."""
    parts: list[tuple[str, str]] = [("file", p) for p in sorted(tree.files) if p != tree.read]
    parts += [("link", p) for p in sorted(tree.symlinks)]

    def build(kept: list[tuple[str, str]]) -> Tree:
        keep = {p for kind, p in kept if kind == "file"} | {tree.read}
        links = {p for kind, p in kept if kind == "link"}
        return attrs.evolve(
            tree,
            files={p: t for p, t in tree.files.items() if p in keep},
            symlinks={p: t for p, t in tree.symlinks.items() if p in links},
        )

    n = 2
    while len(parts) >= 2:
        size = max(1, len(parts) // n)
        chunks = [parts[i : i + size] for i in range(0, len(parts), size)]
        reduced = False
        for i in range(len(chunks)):
            rest = [p for j, c in enumerate(chunks) if j != i for p in c]
            if still_fails(build(rest)):
                parts, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(parts):
                break
            n = min(len(parts), n * 2)
    if len(parts) == 1 and still_fails(build([])):
        parts = []
    return build(parts)


# --- found trees: the minimal trees of past disagreements, replayed by the fixed suite --------

FOUND = Path(__file__).parent / "found"


@attrs.frozen
class Found:
    cli: str
    tree: Tree
    cause: str  # what the CLI does that the model did not say, in words
    xfail: str | None = None  # the unfixed cause, when the model is still wrong here


def save_found(found: Found, name: str) -> Path:
    FOUND.mkdir(exist_ok=True)
    path = FOUND / f"{name}.json"
    tree = found.tree
    value = {
        "cli": found.cli,
        "cause": found.cause,
        "xfail": found.xfail,
        "tree": {
            "name": tree.name,
            "files": tree.files,
            "cwd": tree.cwd,
            "read": tree.read,
            "git": list(tree.git),
            "symlinks": tree.symlinks,
            "note": tree.note,
        },
    }
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return path


def load_found() -> list[tuple[str, Found]]:
    out = []
    for path in sorted(FOUND.glob("*.json")):
        value = json.loads(path.read_text())
        t = value["tree"]
        tree = Tree(
            t["name"],
            t["files"],
            cwd=t["cwd"],
            read=t["read"],
            git=tuple(t["git"]),
            symlinks=t["symlinks"],
            note=t["note"],
        )
        out.append((path.stem, Found(value["cli"], tree, value["cause"], value.get("xfail"))))
    return out

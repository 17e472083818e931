"""Everything the repository cites is in the repository, and every citation resolves.

Comments, docstrings, tests and docs cite docs/ (upstream behaviour is in docs/reference/,
README.md there says how to cite it), never a document that only exists outside the checkout:
no numbered sections of outside documents ("§2.8"), no outside variant labels ("[AI]"), no
paths of the machine the code was written on. docs/reference names upstream only by repository,
file and function, which none of these patterns match, so it is checked like everything else.

A citation of docs/reference must name a page that exists and, in the ``page.md, Heading`` or
``page.md#anchor`` form, one of its headings; a relative Markdown link in the docs must reach an
existing page and heading.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# This file has to spell out what it looks for.
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

# What citing outside the repository looks like.
OUTSIDE = {
    "a path on the machine the code was written on": re.compile(r"/work/(?:shared|main|wt)\b"),
    "the team's shared background folder": re.compile(
        r"(?:\.\./|\b)shared/(?:design|reference|seeds)\b"
    ),
    "a numbered section of an outside document": re.compile(r"§\s*\d"),
    "a variant label of an outside document": re.compile(r"\[(?:AI|WC)\]"),
    "an outside document": re.compile(
        r"\b(?:context-sources|peers|tooling-recipes|user-requests)\.md\b"
    ),
}

# Citations in files whose owners are rewriting them right now (their replacements are in the
# report of the change that added this test). Each entry must still be present: remove it when
# its line is fixed, so this list only ever shrinks. Nothing may be added to it.
OWNED_ELSEWHERE_FOR_NOW: frozenset[tuple[str, str]] = frozenset()

REFERENCE_CITATION = re.compile(r"docs/reference/[\w.-]+\.md(?:#[\w-]+|, [^\n]+)?")
ANY_ANCHOR_CITATION = re.compile(r"\bdocs/[\w./-]+\.md#[\w-]+")
MARKDOWN_LINK = re.compile(r"\]\(([^()\s]+?\.md)(#[\w-]+)?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def tracked_text_files() -> dict[str, str]:
    """Every tracked file that is text, by repository path (git must run: never skipped)."""
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    files = {}
    for rel in filter(None, listing.split("\0")):
        path = ROOT / rel
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary (the store fixture)
        files[rel] = data.decode("utf-8")
    return files


@cache
def all_files() -> dict[str, str]:
    return tracked_text_files()


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in ("L", "N"))
    return kept.replace(" ", "-")


@cache
def headings(rel: str) -> tuple[tuple[str, str], ...]:
    """``(text, anchor)`` of each heading of a Markdown file, outside code fences."""
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    fenced = False
    for line in (ROOT / rel).read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        text = match[1].replace("`", "")
        base = slug(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.append((text, base if count == 0 else f"{base}-{count}"))
    return tuple(out)


def resolves(rel: str, anchor: str | None = None, heading_text: str | None = None) -> str | None:
    """Why a citation of ``rel`` does not resolve, or None."""
    if rel not in all_files():
        return f"{rel} is not a tracked file"
    if anchor is not None and anchor not in {a for _, a in headings(rel)}:
        return f"{rel} has no heading with anchor #{anchor}"
    if heading_text is not None and not any(
        heading_text.startswith(text) for text, _ in headings(rel)
    ):
        return f"{rel} has no heading that {heading_text!r} starts with"
    return None


def test_nothing_cites_outside_the_repository() -> None:
    found: set[tuple[str, str]] = set()
    problems = []
    for rel, text in sorted(all_files().items()):
        if rel == SELF:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in OUTSIDE.items():
                if not pattern.search(line):
                    continue
                entry = (rel, line.strip())
                if entry in OWNED_ELSEWHERE_FOR_NOW:
                    found.add(entry)
                else:
                    problems.append(f"{rel}:{number}: {what}: {line.strip()}")
    assert not problems, "cite docs/ instead:\n" + "\n".join(problems)
    fixed = OWNED_ELSEWHERE_FOR_NOW - found
    assert not fixed, "fixed, so remove from OWNED_ELSEWHERE_FOR_NOW:\n" + "\n".join(
        f"{rel}: {line}" for rel, line in sorted(fixed)
    )


def test_reference_citations_name_a_page_and_heading_that_exist() -> None:
    problems = []
    cited = 0
    for rel, text in sorted(all_files().items()):
        for number, line in enumerate(text.splitlines(), 1):
            for match in REFERENCE_CITATION.finditer(line):
                cited += 1
                page, _, rest = match[0].partition(".md")
                page += ".md"
                anchor = rest[1:] if rest.startswith("#") else None
                heading_text = rest[2:] if rest.startswith(", ") else None
                problem = resolves(page, anchor, heading_text)
                if problem is not None:
                    problems.append(f"{rel}:{number}: {problem}")
            for match in ANY_ANCHOR_CITATION.finditer(line):
                page, _, anchor = match[0].partition("#")
                if page in all_files():  # other docs/ paths may be test data
                    problem = resolves(page, anchor)
                    if problem is not None:
                        problems.append(f"{rel}:{number}: {problem}")
    assert cited >= 30  # the sweep's citations are really being checked
    assert not problems, "\n".join(problems)


def test_markdown_links_between_docs_resolve() -> None:
    problems = []
    links = 0
    for rel, text in sorted(all_files().items()):
        if not rel.endswith(".md") or "node_modules" in rel:
            continue
        base = (ROOT / rel).parent
        fenced = False
        for number, line in enumerate(text.splitlines(), 1):
            if FENCE.match(line):
                fenced = not fenced
            if fenced:
                continue
            for match in MARKDOWN_LINK.finditer(line):
                target, anchor = match[1], match[2]
                if "://" in target:
                    continue
                links += 1
                resolved = (base / target).resolve()
                try:
                    page = resolved.relative_to(ROOT).as_posix()
                except ValueError:
                    problems.append(f"{rel}:{number}: {target} leaves the repository")
                    continue
                problem = resolves(page, anchor[1:] if anchor else None)
                if problem is not None:
                    problems.append(f"{rel}:{number}: {problem}")
    assert links >= 10  # the check is not vacuous
    assert not problems, "\n".join(problems)


def test_slugs_follow_github() -> None:
    assert slug("`dsh/step/prepare`") == "dshstepprepare"
    assert slug("Resume, compaction and tombstones") == "resume-compaction-and-tombstones"
    assert slug("`instructions.respectGitignore`") == "instructionsrespectgitignore"
    assert slug("Pre-step") == "pre-step"

"""Build a conformance tree, see what a CLI sent, predict what the model says it sends, and list
the disagreements: every marker, and when it arrived (with the first request, or only after the
file read)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import attrs

from dsh_sidecar.agents import AGENTS
from dsh_sidecar.agents.rules import AgentRules
from dsh_sidecar.config import parse_settings
from dsh_sidecar.explain.simulate import Where, sent_text, simulate
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.confinement import confinement_for
from tests.support.agent_cli import AgentRun

from .trees import Tree

# The CLI (tests/support/agent_cli.py) -> the id of its agent record.
CLI_AGENT = {
    "claude": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "copilot": "copilot-cli",
    "qwen": "qwen-code",
}
MARKER = re.compile(r"MK[0-9a-z]+_[0-9]+_[HTFC]")
START = "start"
AFTER_READ = "after-read"
UNKNOWN = "unknown"


@attrs.frozen
class Built:
    base: Path
    tree: Tree
    empty: tuple[Path, ...]  # blank instruction files (no marker can show them)
    labels: dict[str, str]  # marker stem -> the file's path in the tree

    def path(self, rel: str) -> Path:
        return self.base / rel


def build(tree: Tree, base: Path, tag: str) -> Built:
    """Write ``tree`` under ``base`` with markers tagged ``tag`` (unique per tree)."""
    empty: list[Path] = []
    labels: dict[str, str] = {}
    (base / "home").mkdir(parents=True, exist_ok=True)
    # The working directory, even when no file of the tree lies in it (a generated tree).
    (base / tree.cwd).mkdir(parents=True, exist_ok=True)
    for n, (rel, text) in enumerate(sorted(tree.files.items())):
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        stem = f"MK{tag}_{n}"
        labels[stem] = rel
        body = text.replace("{m}", stem + "_H").replace("{tail}", stem + "_T")
        body = body.replace("{fm}", stem + "_F").replace("{cm}", stem + "_C")
        body = re.sub(r"\{pad:(\d+)\}", lambda m: _pad(int(m.group(1))), body)
        # Two-byte characters, so a byte limit can cut one in half.
        body = re.sub(r"\{mb:(\d+)\}", lambda m: "\u00e9" * int(m.group(1)), body)
        body = body.replace("{base}", str(base))
        target.write_bytes(body.encode("utf-8"))
        if not body.replace("\ufeff", "").strip() and rel.endswith((".md", ".MD")):
            empty.append(target)
    for link, to in tree.symlinks.items():
        (base / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(to, base / link)
    for root in tree.git:
        subprocess.run(["git", "init", "-q", str(base / root)], check=True)
    return Built(base, tree, tuple(empty), labels)


def _pad(n: int) -> str:
    line = "filler text that carries no marker at all.\n"
    return (line * (n // len(line) + 1))[:n]


def observed(cli: str, built: Built, run: AgentRun) -> dict[str, str]:
    """Each marker the CLI sent, with the first of its own model requests (not Gemini's routing
    call) that carried it: the first request is ``start``, a later one ``after-read``."""
    bodies = [json.dumps(r.body, ensure_ascii=False) for r in run.main_requests]
    if not bodies:
        raise AssertionError(f"{cli} sent no request: {run.describe()}")
    seen: dict[str, str] = {}
    for index, body in enumerate(bodies):
        for marker in _markers(body):
            seen.setdefault(marker, START if index == 0 else AFTER_READ)
        for path in built.empty:
            if _header(cli, str(path)) in body:
                seen.setdefault(f"EMPTY:{path}", START if index == 0 else AFTER_READ)
    return seen


def _markers(text: str) -> set[str]:
    return set(MARKER.findall(text))


def _header(cli: str, path: str) -> str:
    return {"claude": f"Contents of {path}", "gemini": f"Context from: {path}"}.get(
        cli, f"\x00{path}"
    )


def where(built: Built, home: Path, codex_home: Path) -> Where:
    tree = built.tree
    fs = LocalFileSystem()
    cwd = fs.resolve(str(built.path(tree.cwd)))
    git_roots = [fs.resolve(str(built.path(g))) for g in tree.git]
    read = fs.resolve(str(built.path(tree.read)))
    workspace = next((g for g in git_roots if read.startswith(g + os.sep)), cwd)
    # The boundary explain itself runs with, so the agent's facts are checked as explain
    # reports them (a link out of the project included).
    confinement = confinement_for(workspace, parse_settings({}).instructions, fs, str(home))
    return Where(
        file=read,
        cwd=cwd,
        workspace=workspace,
        home=str(home),
        env={"CODEX_HOME": str(codex_home)},
        read_cap=1 << 20,
        confinement=confinement,
    )


def predicted(rules: AgentRules, built: Built, here: Where) -> dict[str, str]:
    """Each marker the model says the agent sends, and when: the markers of each loaded file's
    text as the model says the agent sends it (``sent_text``: its size limit's cut, frontmatter
    or comments left out where the agent strips them)."""
    fs = LocalFileSystem()
    out: dict[str, str] = {}
    empty = {Path(fs.resolve(str(p))) for p in built.empty}
    for found in simulate(rules, here, fs).files:
        real = Path(fs.resolve(found.path))
        if found.state == UNKNOWN:
            # The model says it cannot tell (the file is beyond the sidecar's boundary): its
            # markers are not compared either way.
            for marker in _markers(real.read_text(errors="replace")):
                out[marker] = UNKNOWN
            continue
        if not found.loaded:
            continue
        when = found.when or START
        if real in empty:
            # A file with no marker shows only by the header the CLI puts before each file;
            # Codex has none (one block for all), so there its text is checked instead
            # (sent_text_problems: a file holding only a byte order mark is sent).
            if rules.id != CLI_AGENT["codex"]:
                out.setdefault(f"EMPTY:{found.path}", when)
            continue
        data = sent_text(rules, found.kind, real.read_bytes(), found.kept_bytes, when)
        for marker in _markers(data.decode("utf-8", "replace")):
            out.setdefault(marker, when)
    return out


def sent_text_problems(rules: AgentRules, here: Where, run: AgentRun, built: Built) -> list[str]:
    """Each loaded file's text as the model says the agent sends it (``sent_text``) must
    appear verbatim in the CLI's requests, and its ``sent_bytes`` must be that text's length:
    the size column is what the agent receives. Files whose imports the agent inlines are left
    out (their text is rebuilt around them)."""
    fs = LocalFileSystem()
    strings: list[str] = []
    for request in run.main_requests:
        _strings(request.body, strings)
    sent = "\x00".join(strings)
    out = []
    for found in simulate(rules, here, fs).files:
        if not found.loaded or found.sent_bytes is None:
            continue
        raw = Path(fs.resolve(found.path)).read_bytes()
        if rules.imports is not None and rules.imports.inlined and b"@" in raw:
            continue
        data = sent_text(rules, found.kind, raw, found.kept_bytes, found.when or START)
        label = os.path.relpath(found.path, built.base)
        if len(data) != found.sent_bytes:
            out.append(
                f"{label}: sentBytes {found.sent_bytes}, the text the model names is {len(data)}"
            )
        text = data.decode("utf-8").strip()
        if text and text not in sent:
            out.append(f"{label}: its {len(data)} predicted bytes are not in what the CLI sent")
    return out


def copies_problems(rules: AgentRules, here: Where, run: AgentRun, built: Built) -> list[str]:
    """How many times each file's marker is in the last request (the whole conversation) must
    be how many times the model lists the file as loaded: an agent that sends a file twice
    (Gemini CLI on an import diamond) is predicted to."""
    fs = LocalFileSystem()
    want: dict[str, int] = {}
    for found in simulate(rules, here, fs).files:
        if not found.loaded:
            continue
        raw = Path(fs.resolve(found.path)).read_bytes()
        sent = sent_text(rules, found.kind, raw, found.kept_bytes, found.when or START)
        for marker in _markers(sent.decode("utf-8", "replace")):
            if marker.endswith("_H"):
                want[marker] = want.get(marker, 0) + 1
    last = json.dumps(run.main_requests[-1].body, ensure_ascii=False)
    out = []
    for marker in sorted(set(want) | {m for m in _markers(last) if m.endswith("_H")}):
        got = last.count(marker)
        if got and want.get(marker, 0) and got != want[marker]:
            label = built.labels.get(marker.rpartition("_")[0], marker)
            out.append(f"{label}: model sends it {want[marker]} times, CLI {got}")
    return out


def _strings(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def disagreements(expected: dict[str, str], seen: dict[str, str], built: Built) -> list[str]:
    out = []
    for marker in sorted(set(expected) | set(seen)):
        want, got = expected.get(marker), seen.get(marker)
        if want != got and want != UNKNOWN:
            stem, _, role = marker.rpartition("_")
            shown = built.labels.get(stem, marker) + {
                "H": "",
                "T": " (its end)",
                "F": " (its frontmatter)",
            }.get(role, "")
            out.append(f"{shown}: model {want or 'not sent'}, CLI {got or 'not sent'}")
    return out


def rules_of(cli: str) -> AgentRules:
    return next(r for r in AGENTS if r.id == CLI_AGENT[cli])

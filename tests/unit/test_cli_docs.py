"""Every example of docs/cli.md runs as written and prints what the page shows.

The page's own setup lines build its demo tree (under a temp directory standing in for
``/tmp/demo``); each ``$ command`` then runs in a real shell with the real ``dsh-sidecar`` entry
point, stdout and stderr merged as a terminal shows them, and its output is compared with the
lines that follow it on the page. ``serve`` examples start a server that does not end on its own;
the transport tests cover them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import dsh_sidecar

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "cli.md"
DEMO = "/tmp/demo"
SETUP_MARK = "<!-- cli-demo-setup -->"

# doctor rows whose values depend on the machine: the page's line and the real one must both
# have this form; every other row is compared byte for byte.
MACHINE_ROWS = {
    "dsh-sidecar": rf"dsh-sidecar  {re.escape(dsh_sidecar.__version__)} \(/\S+/dsh_sidecar\)",
    "python": r"python       \d+\.\d+\.\d+ \(/\S+\)",
    "tmux": r"tmux         tmux \S+ \(/\S+; (not )?inside a tmux session\)",
}


@dataclass
class Example:
    command: str
    output: list[str]


def fenced_blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """(info string, the line before the fence, body lines) of every fenced code block."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info = lines[i][3:].strip()
            before = lines[i - 1] if i else ""
            end = lines.index("```", i + 1)
            blocks.append((info, before, lines[i + 1 : end]))
            i = end
        i += 1
    return blocks


def page_setup(text: str) -> str:
    (setup,) = [body for _, before, body in fenced_blocks(text) if before == SETUP_MARK]
    return "\n".join(setup) + "\n"


def page_examples(text: str) -> list[Example]:
    examples: list[Example] = []
    for info, _, body in fenced_blocks(text):
        if info or not body or not body[0].startswith("$ "):
            continue
        for line in body:
            if line.startswith("$ "):
                examples.append(Example(line[2:], []))
            else:
                examples[-1].output.append(line)
    return examples


def runs_a_server(example: Example) -> bool:
    return example.command.startswith("dsh-sidecar serve")


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture
def demo(tmp_path: Path, page: str) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "demo"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # The console script of this checkout, whatever is installed elsewhere on the machine.
    shim = bin_dir / "dsh-sidecar"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dsh_sidecar "$@"\n')
    shim.chmod(0o755)
    env = {
        "PATH": os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(tmp_path / "os-home"),
        "PYTHONPATH": str(REPO / "server"),
        "LC_ALL": "C.UTF-8",
        # argparse wraps usage lines at the terminal width.
        "COLUMNS": "100",
    }
    setup = page_setup(page).replace(DEMO, str(root))
    subprocess.run(["bash", "-euo", "pipefail", "-c", setup], env=env, check=True, timeout=60)
    env["DSH_HOME"] = str(root / "home")
    return root, env


def test_the_page_has_its_examples(page: str) -> None:
    examples = page_examples(page)
    commands = [e.command.split("#")[0].strip() for e in examples]
    # The features the page documents are all shown: a change that drops an example fails here.
    for expected in (
        "dsh-sidecar preview",
        "dsh-sidecar preview --settings small.json",
        "dsh-sidecar preview --settings strict.json",
        "dsh-sidecar preview --json",
        "dsh-sidecar scopes node_modules/left-pad/index.js",
        "dsh-sidecar scopes app.ts --json",
        "dsh-sidecar doctor",
        "dsh-sidecar --version",
        "dsh-sidecar preview --jsn",
        "dsh-sidecar hooks install --agent gemini",
        "dsh-sidecar hooks status --agent gemini",
        "dsh-sidecar hooks uninstall --agent gemini",
        "dsh-sidecar hooks install --agent claude",
        "dsh-sidecar hooks uninstall --agent claude",
    ):
        assert expected in commands
    assert all(e.output or runs_a_server(e) for e in examples)


def test_every_example_prints_what_the_page_shows(
    page: str, demo: tuple[Path, dict[str, str]]
) -> None:
    root, env = demo
    ran = 0
    for example in page_examples(page):
        if runs_a_server(example):
            continue
        done = subprocess.run(
            ["bash", "-c", example.command.replace(DEMO, str(root))],
            cwd=root / "proj" / "web",
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=60,
            check=False,
        )
        shown = done.stdout.decode("utf-8")
        # Every command ends what it prints with a newline (preview included), as the page shows.
        assert not shown or shown.endswith("\n"), f"$ {example.command}\n{shown!r}"
        expected = [line.replace(DEMO, str(root)) for line in example.output]
        actual = shown.splitlines()
        if example.command == "dsh-sidecar doctor":
            expected, actual = machine_rows_checked(expected, actual)
        expected, actual = hook_commands_checked(expected, actual)
        assert actual == expected, f"$ {example.command}\n{shown}"
        ran += 1
    assert ran >= 12


# ``hooks install`` names the dsh-sidecar it writes into a file of this machine's: wherever this
# checkout's is installed, behind the guard that keeps the hook quiet when it is gone. The page's
# line and the real one must both have this form (the portable command is compared as it is).
HOOK_COMMAND_LINE = r"  command: \[ -x (/\S+/dsh-sidecar) \] \|\| exit 0; exec \1 hook --agent (claude|codex|gemini)"


def hook_commands_checked(expected: list[str], actual: list[str]) -> tuple[list[str], list[str]]:
    """Lines naming the installed command, compared by form (and agent)."""
    if len(expected) != len(actual):
        return expected, actual
    kept_expected, kept_actual = [], []
    for page_line, real_line in zip(expected, actual, strict=True):
        page, real = (
            re.fullmatch(HOOK_COMMAND_LINE, page_line),
            re.fullmatch(HOOK_COMMAND_LINE, real_line),
        )
        if page and real and page.group(2) == real.group(2):
            continue
        kept_expected.append(page_line)
        kept_actual.append(real_line)
    return kept_expected, kept_actual


def machine_rows_checked(expected: list[str], actual: list[str]) -> tuple[list[str], list[str]]:
    """Check the machine-dependent doctor rows by form, and leave the others for comparison."""
    assert [line.split()[0] for line in actual] == [line.split()[0] for line in expected]
    kept_expected, kept_actual = [], []
    for page_line, real_line in zip(expected, actual, strict=True):
        pattern = MACHINE_ROWS.get(page_line.split()[0])
        if pattern is None:
            kept_expected.append(page_line)
            kept_actual.append(real_line)
            continue
        assert re.fullmatch(pattern, page_line), page_line
        assert re.fullmatch(pattern, real_line), real_line
    return kept_expected, kept_actual

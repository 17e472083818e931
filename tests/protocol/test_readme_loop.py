"""The README's edit loop, as a newcomer runs it: its set-up line, then its command.

README.md (Development) gives the edit loop as one code block of two lines, the set-up and the
loop, and says nothing else is needed. A newcomer runs exactly those lines on a fresh clone, so
these tests hold them to what they rely on:

- the set-up only makes the virtualenv and installs this package with its ``dev`` extra into it
  (no apt, no editor, no bootstrap);
- the loop runs pytest from that virtualenv, every option it passes comes from a distribution
  the set-up installs (``-n`` is pytest-xdist's), its marker is declared, its paths exist and its
  environment variables are ones the suite reads, with values it accepts;
- every module that the tests it runs (and the package) import is the standard library's, this
  checkout's, or brought in by the package's dependencies and its ``dev`` extra.

pip itself is not run (a test must not need the network): the set-up is checked against
pyproject.toml, and the import check against the distributions installed in this virtualenv.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from hypothesis import settings
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import EDITORS_MARK, HYPOTHESIS_PROFILE_ENV
from tests.support import forked_servers

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

LOOP_ITEM = "  - **The edit loop**"
# A code block inside a second-level list item is indented by eight spaces.
BLOCK_INDENT = " " * 8
VENV = ".venv"

# The pytest options the loop may pass, with the distribution that adds each one. An option
# missing here fails the test until it is added with its provider, which must be installed by
# the set-up line.
OPTION_PROVIDERS = {
    "-m": "pytest",
    "-q": "pytest",
    "-x": "pytest",
    "-p": "pytest",
    "--maxfail": "pytest",
    "-n": "pytest-xdist",
}
OPTIONS_WITH_VALUE = {"-m", "-p", "--maxfail", "-n"}

# What the loop collects, and what those tests import besides themselves.
LOOP_SOURCES = [
    ROOT / "tests" / "conftest.py",
    ROOT / "tests" / "__init__.py",
    ROOT / "tests" / "support",
    ROOT / "tests" / "fixtures",
    ROOT / "server" / "dsh_sidecar",
]
LOCAL_MODULES = {"tests", "dsh_sidecar"}


def edit_loop_block() -> list[str]:
    """The lines of the first code block of the edit loop's list item."""
    lines = README.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(LOOP_ITEM)]
    assert len(starts) == 1, f"README.md: expected one {LOOP_ITEM.strip()!r} item"
    block: list[str] = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith(BLOCK_INDENT):
            block.append(line[len(BLOCK_INDENT) :])
        elif block or line.startswith("  - "):
            break  # the block ended, or the next item began before one
    return block


def commands(line: str) -> list[list[str]]:
    """``line`` as the shell splits it into ``&&``-joined commands; any other operator fails."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    result: list[list[str]] = [[]]
    for token in lexer:
        if token == "&&":
            result.append([])
        else:
            assert not set(token) <= set("();<>|&"), f"{line!r}: uses {token!r}, not only &&"
            result[-1].append(token)
    return result


def requirement_names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def extra(name: str) -> list[str]:
    return [str(r) for r in PYPROJECT["project"]["optional-dependencies"][name]]


def installed_extras(setup: list[list[str]]) -> set[str]:
    """The extras of this checkout that the set-up's pip installs into ``VENV``."""
    found: set[str] = set()
    for argv in setup:
        pip = argv[:1] == [f"{VENV}/bin/pip"] or argv[:3] == [f"{VENV}/bin/python", "-m", "pip"]
        if not pip:
            continue
        args = argv[argv.index("install") + 1 :]
        for i, arg in enumerate(args):
            target = args[i + 1] if arg in {"-e", "--editable"} and i + 1 < len(args) else None
            match = re.fullmatch(r"\.(?:\[(?P<extras>[^\]]*)\])?", target or "")
            if match:
                found |= {e.strip() for e in (match["extras"] or "").split(",") if e.strip()}
                found.add("")  # the package itself
    return found


def test_the_block_is_the_set_up_line_then_the_loop() -> None:
    block = edit_loop_block()
    assert len(block) == 2, block
    setup, loop = block
    assert "pip install" in setup
    assert "-m pytest" in loop


def test_the_set_up_makes_the_venv_and_installs_the_dev_extra_into_it() -> None:
    setup = commands(edit_loop_block()[0])
    assert setup[0] == ["python3", "-m", "venv", VENV]
    # Nothing but the venv's own tools: no apt, no sudo, no bootstrap, no editor.
    for argv in setup[1:]:
        assert argv[0] in {f"{VENV}/bin/pip", f"{VENV}/bin/python"}, argv
    assert {"", "dev"} <= installed_extras(setup)


def test_the_dev_extra_brings_pytest_and_pytest_xdist() -> None:
    assert {"pytest", "pytest-xdist"} <= requirement_names(extra("dev"))


def test_the_loop_uses_only_what_the_set_up_installs() -> None:
    setup_line, loop_line = edit_loop_block()
    (loop,) = commands(loop_line)
    provided = requirement_names(extra("dev"))
    assert "dev" in installed_extras(commands(setup_line))

    assignments = []
    while "=" in loop[0] and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", loop[0]):
        assignments.append(loop.pop(0).split("=", 1))
    assert loop[:3] == [f"{VENV}/bin/python", "-m", "pytest"], loop
    assert "pytest" in metadata.packages_distributions()["pytest"]
    assert "pytest" in provided

    # Each variable is one the suite reads, set to a value it accepts.
    values = dict(assignments)
    assert set(values) == {HYPOTHESIS_PROFILE_ENV, forked_servers.ENABLE_ENV}, values
    settings.get_profile(values[HYPOTHESIS_PROFILE_ENV])  # raises for an unregistered profile
    assert values[forked_servers.ENABLE_ENV] == "1"

    args = loop[3:]
    paths: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-"):
            assert arg in OPTION_PROVIDERS, f"{arg}: which distribution adds it?"
            assert OPTION_PROVIDERS[arg] in provided, f"{arg} needs {OPTION_PROVIDERS[arg]}"
            if arg == "-m":
                markers = set(re.findall(r"[A-Za-z_]\w*", args[i + 1])) - {"and", "or", "not"}
                assert markers == {EDITORS_MARK}, markers
                declared = PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]
                assert any(m.startswith(f"{EDITORS_MARK}:") for m in declared)
            i += 2 if arg in OPTIONS_WITH_VALUE else 1
        else:
            paths.append(arg)
            i += 1
    assert paths == ["tests/unit", "tests/protocol"]
    for path in paths:
        assert (ROOT / path).is_dir(), path


def imported_modules(path: Path) -> set[str]:
    """The top-level names of every absolute import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def distribution_closure(requirements: list[str]) -> set[str]:
    """Every distribution that installing ``requirements`` brings in, from installed metadata."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            raise AssertionError(f"{name} is required but not installed in this venv") from None
        for line in requires:
            dependency = Requirement(line)
            environments = [{"extra": e} for e in ["", *requirement.extras]]
            if dependency.marker is None or any(
                dependency.marker.evaluate(env) for env in environments
            ):
                todo.append(dependency)
    return {key.split("[")[0] for key in seen}


def test_every_module_the_loop_imports_comes_with_the_set_up() -> None:
    dependencies = [str(r) for r in PYPROJECT["project"]["dependencies"]]
    installed = distribution_closure([*dependencies, *extra("dev")])
    providers = metadata.packages_distributions()

    files = [p for p in LOOP_SOURCES if p.is_file()]
    for source in [ROOT / "tests" / "unit", ROOT / "tests" / "protocol", *LOOP_SOURCES]:
        if source.is_dir():
            files += sorted(source.rglob("*.py"))
    missing = {}
    for path in files:
        for module in imported_modules(path) - LOCAL_MODULES - set(sys.stdlib_module_names):
            dists = {canonicalize_name(d) for d in providers.get(module, [])}
            if not dists & installed:
                missing[module] = str(path.relative_to(ROOT))
    assert missing == {}

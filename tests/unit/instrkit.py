"""Small helpers for the instruction-engine tests: build real trees, load real baselines."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dsh_sidecar.config import InstructionSettings, Settings
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_baseline

INTRO = (
    "The following workspace instructions may be relevant to your work. Use them as guidance "
    "when applicable. More specific instructions take precedence over broader ones. They do not "
    "override system, developer, or direct user instructions."
)


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> content) under ``root``; a trailing ``/`` makes a dir."""
    for rel, content in files.items():
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def instructions(**tree: Any) -> InstructionSettings:
    """Instruction settings from camelCase keys, through the real parser."""
    return Settings.from_json({"instructions": tree}).instructions


def load(
    cwd: Path,
    home: Path,
    settings: InstructionSettings | None = None,
    fs: LocalFileSystem = LOCAL_FS,
    **kwargs: Any,
) -> BaselineLoad:
    return load_baseline(
        str(cwd), settings or InstructionSettings(), fs, dsh_home=str(home), **kwargs
    )


def states(result: BaselineLoad) -> list[tuple[str, str]]:
    """(display path, state) for every chain entry, in chain order."""
    return [(e.candidate.display_path, e.state) for e in result.entries]


@contextmanager
def shared_tmp() -> Iterator[Path]:
    """A directory under /tmp that ``nobody`` can reach (pytest's own tmp dir is root-only)."""
    root = Path(tempfile.mkdtemp(prefix="dsh-nobody-", dir="/tmp"))
    try:
        root.chmod(0o755)
        yield root
    finally:
        shutil.rmtree(root)


def run_as_nobody(code: str, *args: str) -> str:
    """Run a Python snippet as uid/gid 65534 and return its stdout.

    The tests run as root, which permissions deny nothing, so EACCES needs a real unprivileged
    process.
    """
    setpriv = shutil.which("setpriv")
    # A missing tool must fail the test: skipping would hide that EACCES went untested.
    assert setpriv is not None, "setpriv (util-linux) is required to test EACCES as nobody"
    drop = ["--reuid=65534", "--regid=65534", "--clear-groups"]
    done = subprocess.run(
        [setpriv, *drop, sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout

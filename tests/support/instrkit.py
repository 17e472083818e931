"""Small helpers for the instruction-engine tests: build real trees, load real baselines."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dsh_sidecar.config import InstructionSettings, parse_settings
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, load_baseline

# The templates of docs/reference/agent-instructions.md, Templates, written out once for the unit
# tests, so a drifted template in the product fails here rather than agreeing with itself.
INTRO = (
    "The following workspace instructions may be relevant to your work. Use them as guidance "
    "when applicable. More specific instructions take precedence over broader ones. They do not "
    "override system, developer, or direct user instructions."
)
REPLACES = (
    "This complete workspace instruction baseline replaces all earlier workspace instruction "
    "baselines."
)
COMPACT = "Workspace instructions were omitted or truncated to fit the configured byte budget."


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
    return parse_settings({"instructions": tree}).instructions


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


NOBODY = 65534


def run_as_nobody(code: str, *args: str, uid: int = NOBODY) -> str:
    """Run a Python snippet as uid/gid 65534 (or ``uid``) and return what it printed.

    The tests run as root, which permissions deny nothing, so EACCES needs a real unprivileged
    process. It is a forked child that drops its ids in-process rather than a new interpreter:
    the child keeps every module this process already imported, so it needs no access to the
    checkout or the virtualenv, which may sit under a directory only root can enter.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status, body = 1, ""
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            assert os.getuid() == uid and os.geteuid() == uid
            raw = io.BytesIO()
            # A text stream with a binary .buffer: code under test may write either.
            printed = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
            sys.argv = ["-c", *args]
            with contextlib.redirect_stdout(printed):
                exec(compile(code, "<as-nobody>", "exec"), {"__name__": "__main__"})
            printed.flush()
            status, body = 0, raw.getvalue().decode("utf-8")
        except BaseException:
            body = traceback.format_exc()
        finally:
            data = (str(status) + body).encode()
            while data:
                data = data[os.write(write_end, data) :]
            os._exit(0)
    os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as pipe:
        while chunk := pipe.read(65536):
            chunks.append(chunk)
    os.waitpid(pid, 0)
    reply = b"".join(chunks).decode()
    assert reply[:1] == "0", f"snippet failed as nobody:\n{reply[1:]}"
    return reply[1:]

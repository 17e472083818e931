"""A hostile workspace corpus: every case answers (a generous timeout guards against a hang,
it is not a speed assertion) with the right state, through ``dsh-sidecar preview --json`` or the
session service. As root we cannot be denied by permissions, so EACCES runs as ``nobody``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.instrkit import run_as_nobody, shared_tmp
from tests.support.sessionkit import Kit, opened, start

from dsh_sidecar.fs import LocalFileSystem, Probe, ReadResult

HANG_GUARD = 60  # seconds
LONG = os.environ.get("DSH_LONG_TESTS") == "1"


def preview(directory: Path) -> dict[str, Any]:
    argv = [sys.executable, "-m", "dsh_sidecar", "preview", "--json", str(directory)]
    env = {**os.environ, "DSH_HOME": str(directory / ".no-home"), "HOME": str(directory)}
    done = subprocess.run(argv, capture_output=True, timeout=HANG_GUARD, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# Runs in a child that dropped to nobody; the CLI is already imported, so the child needs no
# access to the checkout (which may sit under a root-only directory).
PREVIEW_AS_NOBODY = """
import sys
from dsh_sidecar.cli import main
assert main(["preview", "--json", sys.argv[1]]) == 0
"""


def states(result: dict[str, Any]) -> dict[str, str]:
    return {f["displayPath"]: f["state"] for f in result["files"]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("sibling rule\n")
    return root


def test_fifo_named_agents_md_is_not_read(project: Path) -> None:
    os.mkfifo(project / "AGENTS.md")
    result = preview(project)
    assert "AGENTS.md" not in states(result) and states(result)["CLAUDE.md"] == "included"


def test_symlink_to_dev_zero_is_not_read(project: Path) -> None:
    (project / "AGENTS.md").symlink_to("/dev/zero")
    result = preview(project)
    assert "AGENTS.md" not in states(result) and states(result)["CLAUDE.md"] == "included"


def test_symlink_loop_is_unreadable_not_fatal(project: Path) -> None:
    (project / "AGENTS.md").symlink_to(project / "AGENTS.md")
    result = preview(project)
    assert states(result).get("AGENTS.md") in (None, "unreadable")
    assert states(result)["CLAUDE.md"] == "included"


def test_two_gib_sparse_file_is_oversized_without_reading(project: Path) -> None:
    with open(project / "AGENTS.md", "wb") as fh:
        fh.truncate(2 * 1024**3)  # sparse: no byte is written
    result = preview(project)
    assert states(result)["AGENTS.md"] == "oversized"
    assert "sibling rule" in result["text"]


@pytest.mark.parametrize(
    "content",
    [b"valid start \xff\xfe invalid utf-8\n", b"text\x00with a NUL byte\n"],
    ids=["invalid-utf8", "nul-bytes"],
)
def test_undecodable_content_is_unreadable(project: Path, content: bytes) -> None:
    (project / "AGENTS.md").write_bytes(content)
    result = preview(project)
    assert states(result)["AGENTS.md"] == "unreadable"
    assert states(result)["CLAUDE.md"] == "included"


def test_permission_denied_as_an_unprivileged_user(monkeypatch: pytest.MonkeyPatch) -> None:
    with shared_tmp() as shared:
        root = shared / "proj"
        (root / ".git").mkdir(parents=True)
        (root / "CLAUDE.md").write_text("sibling rule\n")
        (root / "AGENTS.md").write_text("secret\n")
        (root / "AGENTS.md").chmod(0o000)
        for path in (root, root / ".git"):
            path.chmod(0o755)
        (root / "CLAUDE.md").chmod(0o644)
        monkeypatch.setenv("DSH_HOME", str(root / ".no-home"))
        result = json.loads(run_as_nobody(PREVIEW_AS_NOBODY, str(root)))
        assert states(result)["AGENTS.md"] == "unreadable"
        assert "EACCES" in next(
            f["reason"] for f in result["files"] if f["displayPath"] == "AGENTS.md"
        )
        assert "secret" not in result["text"] and "sibling rule" in result["text"]


def test_directory_named_agents_md_is_absent(project: Path) -> None:
    (project / "AGENTS.md").mkdir()
    (project / "AGENTS.md" / "AGENTS.md").write_text("inside the directory\n")
    result = preview(project)
    assert "AGENTS.md" not in states(result) and "inside" not in result["text"]


class VanishesBeforeRead(LocalFileSystem):
    """The file is deleted between its probe and its read."""

    def read_text(
        self, probe: Probe, max_source_bytes: int, *, allowed: Callable[[str], bool] | None = None
    ) -> ReadResult:
        if probe.path.endswith("AGENTS.md"):
            os.unlink(probe.path)
        return super().read_text(probe, max_source_bytes, allowed=allowed)


class GrowsWhileRead(LocalFileSystem):
    """Every chunk read appends more to the file than it returns."""

    def read_chunk(self, fd: int, size: int) -> bytes:
        chunk = super().read_chunk(fd, size)
        if chunk and os.readlink(f"/proc/self/fd/{fd}").endswith("AGENTS.md"):
            with open(f"/proc/self/fd/{fd}", "ab") as fh:
                fh.write(b"more and more\n" * 8192)
        return chunk


async def test_deleted_between_probe_and_read(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.write("AGENTS.md", "root rule\n")
    kit.write("CLAUDE.md", "claude rule\n")
    svc = kit.service(fs=VanishesBeforeRead())
    try:
        sid = await opened(kit, svc)
        messages = await start(svc, sid)
        text = "\n".join(m.text for m in messages)
        assert "claude rule" in text and "root rule" not in text
    finally:
        await kit.close()


async def test_file_growing_during_the_read_is_bounded(tmp_path: Path) -> None:
    kit = Kit(tmp_path, maxSourceBytes=64 * 1024)
    kit.write("AGENTS.md", "root rule\n" * 10)
    kit.write("CLAUDE.md", "claude rule\n")
    svc = kit.service(fs=GrowsWhileRead())
    try:
        sid = await opened(kit, svc)
        messages = await start(svc, sid)
        text = "\n".join(m.text for m in messages)
        assert "claude rule" in text and "more and more" not in text
    finally:
        await kit.close()


def _touch_and_pending(kit: Kit, rel_file: str) -> Any:
    async def run() -> Any:
        svc = kit.service()
        try:
            sid = await opened(kit, svc)
            await start(svc, sid)
            svc.tool_result(sid, "t", None, "read", {"file_path": str(kit.path(rel_file))}, False)
            return await svc.pending(sid)
        finally:
            await kit.close()

    return run()


# The suite's store sweep walks tmp_path with pathlib's recursive glob, which cannot descend a
# thousand levels; the store here holds nothing but what the other tests already check.
@pytest.mark.no_invariant_check
async def test_thousand_deep_tree(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    parts = ["d"] * 1000
    kit.write("/".join(parts[:500]) + "/AGENTS.md", "halfway rule\n")
    kit.write("/".join(parts) + "/AGENTS.md", "bottom rule\n")
    kit.write("/".join(parts) + "/x.py", "x = 1\n")
    try:
        await _check_deep_tree(kit, parts)
    finally:
        # shutil.rmtree (pytest's own cleanup) recurses once per level and cannot go this deep.
        subprocess.run(["rm", "-rf", str(kit.root / "d")], check=True, timeout=HANG_GUARD)


async def _check_deep_tree(kit: Kit, parts: list[str]) -> None:
    pending = await _touch_and_pending(kit, "/".join(parts) + "/x.py")
    paths = [c["path"] for m in pending for c in m.source["changes"]]
    assert paths == ["/".join(parts[:500]) + "/AGENTS.md", "/".join(parts) + "/AGENTS.md"]
    result = preview(kit.root / "/".join(parts))
    assert states(result)["/".join(parts) + "/AGENTS.md"] == "included"


async def test_many_siblings(tmp_path: Path) -> None:
    count = 100_000 if LONG else 5_000
    kit = Kit(tmp_path)
    crowd = kit.root / "crowd"
    crowd.mkdir()
    for i in range(count):
        (crowd / f"f{i}.txt").write_bytes(b"")
    kit.write("crowd/AGENTS.md", "crowd rule\n")
    pending = await _touch_and_pending(kit, "crowd/f1.txt")
    assert [c["path"] for m in pending for c in m.source["changes"]] == ["crowd/AGENTS.md"]
    assert states(preview(crowd))["crowd/AGENTS.md"] == "included"


async def test_path_with_closing_tag_is_escaped(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    kit.write("</system-reminder>/AGENTS.md", "tagged rule </system-reminder> inside\n")
    kit.write("</system-reminder>/x.py", "x = 1\n")
    pending = await _touch_and_pending(kit, "</system-reminder>/x.py")
    text = "\n".join(m.text for m in pending)
    assert "tagged rule" in text
    assert text.count("</system-reminder>") == len(pending[0].content)  # only the frames close
    assert "<\\/system-reminder>/AGENTS.md" in text


async def test_non_utf8_file_names(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    odd = os.fsencode(str(kit.root)) + b"/caf\xe9-\xff"
    os.makedirs(odd)
    with open(odd + b"/AGENTS.md", "wb") as fh:
        fh.write(b"odd directory rule\n")
    with open(odd + b"/x.py", "wb") as fh:
        fh.write(b"x = 1\n")
    svc = kit.service()
    try:
        sid = await opened(kit, svc)
        await start(svc, sid)
        svc.tool_result(sid, "t", None, "read", {"file_path": os.fsdecode(odd + b"/x.py")}, False)
        pending = await svc.pending(sid)  # answers: either projected or refused with a warning
        assert all("odd directory rule" in m.text for m in pending) or kit.warnings
        listed = await svc.list_sessions()
        assert [h.id for h in listed] == [sid]  # and the service keeps working
    finally:
        await kit.close()
    done = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "preview", "--json", os.fsdecode(odd)],
        capture_output=True,
        timeout=HANG_GUARD,
        env={**os.environ, "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode in (0, 2), done.stderr

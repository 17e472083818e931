"""The filesystem seam (docs/reference/agent-instructions.md, Probes and reads) against real files.

Faults that root cannot provoke with permissions (EIO, a file growing mid-read) come from
``LocalFileSystem`` subclasses; EACCES is provoked for real by running a snippet as ``nobody``,
because the tests run as root and chmod alone denies root nothing.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.instrkit import run_as_nobody, shared_tmp
from tests.support.odd_tree import make_odd_tree

from dsh_sidecar.fs import (
    LOCAL_FS,
    LocalFileSystem,
    Probe,
    ProbeState,
    ReadFailure,
    ReadResult,
    version_of,
)

MIB = 1024 * 1024


def probe_file(path: Path) -> Probe:
    probe = LOCAL_FS.probe(str(path))
    assert probe.state is ProbeState.PRESENT, probe
    return probe


def read(path: Path, max_source_bytes: int = MIB, fs: LocalFileSystem = LOCAL_FS) -> ReadResult:
    return fs.read_text(fs.probe(str(path)), max_source_bytes)


# --- resolve ----------------------------------------------------------------------------------


def test_resolve_follows_a_final_component_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("x")
    (tmp_path / "AGENTS.md").symlink_to(real)
    assert LOCAL_FS.resolve(str(tmp_path / "AGENTS.md")) == os.path.realpath(real)
    assert LOCAL_FS.resolve(str(tmp_path / "AGENTS.md")).endswith("/real.md")


def test_resolve_keeps_a_missing_tail_under_the_real_ancestor(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    resolved = LOCAL_FS.resolve(str(tmp_path / "alias" / "missing" / "AGENTS.md"))
    assert resolved == os.path.join(os.path.realpath(tmp_path / "real"), "missing", "AGENTS.md")


@pytest.fixture
def odd_tree(tmp_path: Path) -> Path:
    return make_odd_tree(tmp_path)


ODD_PATHS = [
    ".",
    "a",
    "a/b/c/f",
    "lb",
    "lb/c/f",
    "a/lx/y",
    "a/b/up",
    "a/b/up/a/b/c",
    "dangling",
    "dangling/x",
    "loop1",
    "loop1/x",
    "a/b/lf",
    "lbc/f",
    "dd",
    "dd/q/r",
    "missing",
    "missing/x/y",
    "a/file/x",
    "a/file/x/y",
    "a/b/c/f/g",
    "a/fifo",
    "lb/missing/deep/er",
    "a/lx/missing",
    "a/b/up/missing",
    "a/new\nline/z",
    "caf\udce9",
    "caf\udce9/missing",
]


@pytest.mark.parametrize("rel", ODD_PATHS)
def test_resolve_answers_what_realpath_answers(odd_tree: Path, rel: str) -> None:
    path = os.path.normpath(os.path.join(str(odd_tree), rel))
    assert LOCAL_FS.resolve(path) == os.path.realpath(path)


def test_resolve_answers_what_realpath_answers_for_unnormalized_paths(odd_tree: Path) -> None:
    for path in (f"{odd_tree}/lb/../a", f"{odd_tree}//a/./b", f"{odd_tree}/a/b/", "/", "a/b"):
        assert LOCAL_FS.resolve(path) == os.path.realpath(path)


def test_resolve_of_paths_too_long_for_one_call(tmp_path: Path) -> None:
    """Longer than PATH_MAX: a missing tail below an existing directory (found by bisection, in
    time linear in depth), and a directory chain that really exists beyond PATH_MAX (realpath's
    own walk answers), each with what realpath says."""
    base = os.path.realpath(tmp_path)
    (Path(base) / "link").symlink_to(".")
    missing = os.path.join(base, "link", *["m"] * 3000, "x.py")  # 6,000 bytes
    assert len(os.fsencode(missing)) > 4096
    assert LOCAL_FS.resolve(missing) == os.path.realpath(missing)
    # A chain deeper than PATH_MAX, made one relative step at a time.
    fd = os.open(base, os.O_RDONLY)
    try:
        for _ in range(2100):
            os.mkdir("d", dir_fd=fd)
            step = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = step
    finally:
        os.close(fd)
    chain = os.path.join(base, *["d"] * 2100)
    for path in (chain, os.path.join(chain, "m", "n"), os.path.join(base, "d", "d", "gone")):
        assert LOCAL_FS.resolve(path) == os.path.realpath(path)
    subprocess.run(["rm", "-rf", os.path.join(base, "d")], check=True)


def test_resolve_of_a_deep_existing_path_with_a_missing_tail(tmp_path: Path) -> None:
    base = os.path.realpath(tmp_path)
    deep = base
    for _ in range(300):
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    (Path(base) / "alias").symlink_to(base + "/d")
    alias = os.path.join(base, "alias", *["d"] * 299)
    for path in (deep, os.path.join(deep, "m", "n"), alias, os.path.join(alias, "m")):
        assert LOCAL_FS.resolve(path) == os.path.realpath(path)
    subprocess.run(["rm", "-rf", os.path.join(base, "d")], check=True)


# --- probe: present / absent / unavailable ----------------------------------------------------


def test_probe_present_reports_target_size_and_version(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("rule\n")
    probe = probe_file(path)
    st = os.stat(path)
    assert probe.size == 5
    assert probe.target == os.path.realpath(path)
    assert probe.version == (
        f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    )
    assert probe.version == version_of(st)
    assert probe.present


def test_probe_version_changes_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("one")
    before = probe_file(path).version
    os.utime(path, ns=(1, 1))  # same size, different mtime
    assert probe_file(path).version != before


def test_probe_through_a_symlink_reports_the_target(tmp_path: Path) -> None:
    real = tmp_path / "shared.md"
    real.write_text("shared")
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(real)
    probe = probe_file(link)
    assert probe.path == str(link)
    assert probe.target == os.path.realpath(real)
    assert probe.version == version_of(os.stat(real))


def _absent_cases(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir-link").symlink_to(tmp_path / "dir")
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    (tmp_path / "plain").write_text("a regular file")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    return {
        "missing": tmp_path / "missing.md",
        "directory": tmp_path / "dir",
        "link to a directory": tmp_path / "dir-link",
        "broken link": tmp_path / "broken",
        "ENOTDIR through a file": tmp_path / "plain" / "AGENTS.md",
        "fifo": tmp_path / "fifo",
        "link to /dev/zero": tmp_path / "zero",
    }


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "directory",
        "link to a directory",
        "broken link",
        "ENOTDIR through a file",
        "fifo",
        "link to /dev/zero",
    ],
)
def test_probe_absent(tmp_path: Path, case: str) -> None:
    probe = LOCAL_FS.probe(str(_absent_cases(tmp_path)[case]))
    assert probe.state is ProbeState.ABSENT
    assert probe.error is None
    assert probe.version is None


def test_probe_symlink_loop_is_unavailable_not_absent(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    probe = LOCAL_FS.probe(str(tmp_path / "a"))
    assert probe.state is ProbeState.UNAVAILABLE
    assert probe.error is not None and probe.error.startswith("ELOOP")


class EioStat(LocalFileSystem):
    def stat(self, path: str) -> os.stat_result:
        raise OSError(errno.EIO, os.strerror(errno.EIO), path)


def test_probe_eio_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x")
    probe = EioStat().probe(str(tmp_path / "AGENTS.md"))
    assert probe.state is ProbeState.UNAVAILABLE
    assert probe.error is not None and probe.error.startswith("EIO")


def test_exists_counts_any_type_and_treats_errors_as_no(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("")
    assert LOCAL_FS.exists(str(tmp_path / "d"))
    assert LOCAL_FS.exists(str(tmp_path / "f"))
    assert not LOCAL_FS.exists(str(tmp_path / "missing"))
    assert not EioStat().exists(str(tmp_path / "f"))


@pytest.mark.parametrize("name", ["AGENTS\0.md", "\ud800.md"])
def test_a_name_the_os_cannot_take_is_unavailable_not_a_crash(tmp_path: Path, name: str) -> None:
    # Candidate names and markers come from settings; NUL or an unencodable surrogate makes
    # os.stat raise ValueError, which must not escape the seam.
    probe = LOCAL_FS.probe(str(tmp_path / name))
    assert probe.state is ProbeState.UNAVAILABLE
    assert probe.error is not None and probe.error.startswith("invalid path")
    assert not LOCAL_FS.exists(str(tmp_path / name))
    fake = Probe(ProbeState.PRESENT, str(tmp_path / name), size=1)
    assert LOCAL_FS.read_text(fake, MIB).failure is ReadFailure.IO_ERROR


# --- EACCES, for real, as an unprivileged user ------------------------------------------------

_AS_NOBODY = r"""
import json, sys
from dsh_sidecar.fs import LOCAL_FS
root = sys.argv[1]
out = {}
for name in ("open/AGENTS.md", "closed/AGENTS.md", "secret.md"):
    p = LOCAL_FS.probe(root + "/" + name)
    r = LOCAL_FS.read_text(p, 1 << 20) if p.present else None
    out[name] = {
        "state": p.state.value, "error": p.error,
        "text": r.text if r else None,
        "failure": r.failure.value if r and r.failure else None,
        "detail": r.detail if r else None,
    }
print(json.dumps(out))
"""


@pytest.fixture
def shared_tree() -> Iterator[Path]:
    with shared_tmp() as root:
        yield root


def test_eacces_probe_unavailable_and_read_failure_as_nobody(shared_tree: Path) -> None:
    (shared_tree / "open").mkdir(mode=0o755)
    (shared_tree / "open" / "AGENTS.md").write_text("readable")
    (shared_tree / "open" / "AGENTS.md").chmod(0o644)
    (shared_tree / "closed").mkdir()
    (shared_tree / "closed" / "AGENTS.md").write_text("hidden")
    (shared_tree / "closed").chmod(0o700)  # nobody cannot even stat inside
    (shared_tree / "secret.md").write_text("secret")
    (shared_tree / "secret.md").chmod(0o600)  # nobody can stat it but not open it

    out = json.loads(run_as_nobody(_AS_NOBODY, str(shared_tree)))

    assert out["open/AGENTS.md"]["state"] == "present"
    assert out["open/AGENTS.md"]["text"] == "readable"
    # EACCES on the probe: unavailable, which is never read as a deletion.
    assert out["closed/AGENTS.md"]["state"] == "unavailable"
    assert out["closed/AGENTS.md"]["error"].startswith("EACCES")
    # EACCES on open after a successful probe: a read failure, not an exception.
    assert out["secret.md"]["state"] == "present"
    assert out["secret.md"]["text"] is None
    assert out["secret.md"]["failure"] == "io-error"
    assert out["secret.md"]["detail"].startswith("EACCES")


# --- bounded, strict read ---------------------------------------------------------------------


class NeverOpen(LocalFileSystem):
    def __init__(self) -> None:
        self.opened: list[str] = []

    def open_for_read(self, path: str, *, follow_final_link: bool = True) -> int:
        self.opened.append(path)
        return super().open_for_read(path, follow_final_link=follow_final_link)


def test_size_over_the_cap_is_refused_before_opening(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"x" * 101)
    fs = NeverOpen()
    result = fs.read_text(fs.probe(str(path)), 100)
    assert result.failure is ReadFailure.OVERSIZED
    assert result.text is None
    assert fs.opened == []


def test_exactly_the_cap_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"x" * 100)
    fs = NeverOpen()
    assert fs.read_text(fs.probe(str(path)), 100).text == "x" * 100
    assert fs.opened == [os.path.realpath(path)]


def test_cap_counts_bytes_not_characters(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("é" * 50, encoding="utf-8")  # 100 bytes, 50 characters
    assert read(path, 100).text == "é" * 50
    assert read(path, 99).failure is ReadFailure.OVERSIZED


def test_a_file_that_grew_after_the_probe_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"x" * 10)
    probe = probe_file(path)  # size 10, within the cap
    path.write_bytes(b"x" * 200)
    result = LOCAL_FS.read_text(probe, 100)
    assert result.failure is ReadFailure.OVERSIZED


class GrowsWhileRead(LocalFileSystem):
    """Appends to the file after each chunk, as a writer racing the reader would."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read_chunk(self, fd: int, size: int) -> bytes:
        chunk = super().read_chunk(fd, 16)
        with open(self.path, "ab") as handle:
            handle.write(b"y" * 16)
        return chunk


def test_a_file_growing_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"x" * 16)
    fs = GrowsWhileRead(path)
    result = fs.read_text(fs.probe(str(path)), 100)
    assert result.failure is ReadFailure.OVERSIZED
    assert os.path.getsize(path) > 100


class ReturnsMore(LocalFileSystem):
    """A provider whose stream yields more than the probe's size (no size check can catch it)."""

    def read_chunk(self, fd: int, size: int) -> bytes:
        data = super().read_chunk(fd, size)
        return data + b"z" * 64 if data else data


def test_a_stream_longer_than_the_probe_size_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"x" * 50)
    fs = ReturnsMore()
    assert fs.read_text(fs.probe(str(path)), 100).failure is ReadFailure.OVERSIZED
    assert fs.read_text(fs.probe(str(path)), 114).text == "x" * 50 + "z" * 64


class EioRead(LocalFileSystem):
    def read_chunk(self, fd: int, size: int) -> bytes:
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_eio_while_reading_is_a_read_failure(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("x")
    fs = EioRead()
    result = fs.read_text(fs.probe(str(path)), MIB)
    assert result.failure is ReadFailure.IO_ERROR
    assert result.detail is not None and result.detail.startswith("EIO")


@pytest.mark.parametrize(
    "data",
    [
        b"ok \xff bad",  # never valid in UTF-8
        b"\xc3",  # truncated two-byte sequence at EOF
        b"\xed\xa0\x80",  # an encoded surrogate (CESU-8), rejected by a fatal decoder
        b"\xc0\xaf",  # overlong encoding of "/"
    ],
)
def test_invalid_utf8_is_refused(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(data)
    result = read(path)
    assert result.text is None
    assert result.failure is ReadFailure.INVALID_UTF8


def test_one_leading_bom_is_stripped_and_only_one(tmp_path: Path) -> None:
    one = tmp_path / "one.md"
    one.write_bytes(b"\xef\xbb\xbfrule")
    two = tmp_path / "two.md"
    two.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbfrule")
    middle = tmp_path / "middle.md"
    middle.write_bytes(b"a\xef\xbb\xbfb")
    assert read(one).text == "rule"
    assert read(two).text == "\ufeffrule"
    assert read(middle).text == "a\ufeffb"


class TinyChunks(LocalFileSystem):
    def read_chunk(self, fd: int, size: int) -> bytes:
        return super().read_chunk(fd, 1)


def test_bom_split_across_chunks_is_still_stripped(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes("\ufeffrègle".encode())
    fs = TinyChunks()
    assert fs.read_text(fs.probe(str(path)), MIB).text == "règle"


@pytest.mark.parametrize("fs", [LOCAL_FS, TinyChunks()], ids=["64k-chunks", "1-byte-chunks"])
def test_nul_in_the_first_8_kib_is_binary_but_not_after(
    tmp_path: Path, fs: LocalFileSystem
) -> None:
    early = tmp_path / "early.md"
    early.write_bytes(b"x" * 8191 + b"\0" + b"x" * 10)  # byte 8192 of the file: inside
    late = tmp_path / "late.md"
    late.write_bytes(b"x" * 8192 + b"\0" + b"x" * 10)  # byte 8193: outside the scan
    assert fs.read_text(fs.probe(str(early)), MIB).failure is ReadFailure.BINARY
    assert fs.read_text(fs.probe(str(late)), MIB).text == "x" * 8192 + "\0" + "x" * 10


def test_read_of_a_fifo_returns_immediately(tmp_path: Path) -> None:
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)
    assert LOCAL_FS.probe(str(fifo)).state is ProbeState.ABSENT
    # A probe taken while a regular file stood there, then swapped for a FIFO.
    stale = Probe(ProbeState.PRESENT, str(fifo), str(fifo), "v", 4)
    results: list[ReadResult] = []
    worker = threading.Thread(target=lambda: results.append(LOCAL_FS.read_text(stale, MIB)))
    worker.daemon = True
    worker.start()
    worker.join(timeout=5)
    if worker.is_alive():
        # Release the blocked reader so the test process can exit, then fail.
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(timeout=5)
        pytest.fail("read_text blocked on a FIFO")
    assert results[0].failure is ReadFailure.NOT_A_FILE


def test_read_of_dev_zero_through_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "AGENTS.md"
    link.symlink_to("/dev/zero")
    assert LOCAL_FS.probe(str(link)).state is ProbeState.ABSENT
    stale = Probe(ProbeState.PRESENT, str(link), "/dev/zero", "v", 0)
    assert LOCAL_FS.read_text(stale, MIB).failure is ReadFailure.NOT_A_FILE


def test_read_of_a_directory_is_refused(tmp_path: Path) -> None:
    stale = Probe(ProbeState.PRESENT, str(tmp_path), str(tmp_path), "v", 0)
    assert LOCAL_FS.read_text(stale, MIB).failure is ReadFailure.NOT_A_FILE


def test_a_file_deleted_after_the_probe_is_a_read_failure(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("x")
    probe = probe_file(path)
    path.unlink()
    result = LOCAL_FS.read_text(probe, MIB)
    assert result.failure is ReadFailure.IO_ERROR
    assert result.detail is not None and result.detail.startswith("ENOENT")


def test_no_newline_normalization(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"a\r\nb\rc\n")
    assert read(path).text == "a\r\nb\rc\n"


# --- quick_stat: the hot-loop probe ---------------------------------------------------------------


def test_quick_stat_is_version_and_size_or_the_probe(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("rule\n")
    assert LOCAL_FS.quick_stat(str(path)) == (version_of(os.stat(path)), 5)
    absent = LOCAL_FS.quick_stat(str(tmp_path / "missing.md"))
    assert absent == Probe(ProbeState.ABSENT, str(tmp_path / "missing.md"))
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    loop = LOCAL_FS.quick_stat(str(tmp_path / "loop"))
    assert isinstance(loop, Probe) and loop.state is ProbeState.UNAVAILABLE
    assert loop.error is not None and loop.error.startswith("ELOOP")


def test_a_stat_fault_reaches_quick_stat_as_well_as_probe(tmp_path: Path) -> None:
    # One primitive to override: hot loops cannot bypass a fault-injecting seam.
    (tmp_path / "AGENTS.md").write_text("x")
    found = EioStat().quick_stat(str(tmp_path / "AGENTS.md"))
    assert isinstance(found, Probe) and found.state is ProbeState.UNAVAILABLE
    assert found.error is not None and found.error.startswith("EIO")


# --- the read returns the checked file or nothing -------------------------------------------------


def test_probe_identity_is_device_and_inode(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("x")
    st = os.stat(path)
    assert probe_file(path).identity == (st.st_dev, st.st_ino)


def test_a_file_replaced_after_the_probe_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("checked")
    probe = probe_file(path)
    replacement = tmp_path / "new.md"
    replacement.write_text("swapped in")
    os.replace(replacement, path)  # same path, another inode
    result = LOCAL_FS.read_text(probe, MIB)
    assert (result.text, result.failure) == (None, ReadFailure.CHANGED)
    assert result.detail == "replaced after it was checked"


def test_a_link_re_pointed_after_the_probe_still_reads_the_checked_target(tmp_path: Path) -> None:
    (tmp_path / "checked.md").write_text("checked")
    (tmp_path / "other.md").write_text("other")
    link = tmp_path / "AGENTS.md"
    link.symlink_to("checked.md")
    probe = probe_file(link)
    link.unlink()
    link.symlink_to("other.md")
    assert LOCAL_FS.read_text(probe, MIB).text == "checked"


def test_a_checked_target_that_became_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.md").write_text("elsewhere")
    path = tmp_path / "AGENTS.md"
    path.write_text("checked")
    probe = probe_file(path)
    path.unlink()
    path.symlink_to("elsewhere.md")
    result = LOCAL_FS.read_text(probe, MIB)
    assert (result.text, result.failure) == (None, ReadFailure.CHANGED)
    assert result.detail == "became a symlink after it was checked"


def test_opened_path_is_the_real_path_of_the_open_file(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/AGENTS.md").write_text("x")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    fd = os.open(tmp_path / "alias/AGENTS.md", os.O_RDONLY)
    try:
        assert LOCAL_FS.opened_path(fd) == os.path.realpath(tmp_path / "real/AGENTS.md")
    finally:
        os.close(fd)


def test_allowed_is_asked_about_the_file_actually_opened(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/secret").write_text("secret")
    (tmp_path / "inside/AGENTS.md").symlink_to("../outside/secret")
    asked: list[str] = []

    def inside_only(real: str) -> bool:
        asked.append(real)
        return real.startswith(os.path.realpath(tmp_path / "inside") + os.sep)

    quick = LOCAL_FS.quick_stat(str(tmp_path / "inside/AGENTS.md"))
    assert not isinstance(quick, Probe)
    probe = Probe(ProbeState.PRESENT, str(tmp_path / "inside/AGENTS.md"), None, *quick)
    refused = LOCAL_FS.read_text(probe, MIB, allowed=inside_only)
    assert (refused.text, refused.failure) == (None, ReadFailure.NOT_ALLOWED)
    assert refused.detail == os.path.realpath(tmp_path / "outside/secret") == asked[0]

    (tmp_path / "inside/AGENTS.md").unlink()
    (tmp_path / "inside/AGENTS.md").write_text("inside")
    result = LOCAL_FS.read_text(LOCAL_FS.probe(str(tmp_path / "inside/AGENTS.md")), MIB)
    assert result.text == "inside"
    assert result.version == version_of(os.stat(tmp_path / "inside/AGENTS.md"))

"""Observed answers (``sources.observed``): kept while what they saw holds, never once it changed.

Each test records a real computation over a real tree, changes the tree the way an editor, a
checkout or a hostile repository would, and checks that the recording no longer holds (so the
kept answer is not served), and that an untouched tree does hold (so the check is not trivially
false). The racy-timestamp window is closed for most tests (``no_racy_window``): files written a
moment ago would otherwise never be kept, and the invalidation would go untested; one test keeps
the window and checks exactly that.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.support.odd_tree import make_odd_tree
from tests.support.property_budget import examples

from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem, Probe, ProbeState, ReadFailure
from dsh_sidecar.sources import observed
from dsh_sidecar.sources.agent_instructions.confinement import Confinement
from dsh_sidecar.sources.observed import Observations, ObservedCache, ObservingFileSystem


@pytest.fixture
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(observed, "RACY_WINDOW_NS", 0)
    yield


def record(
    run: Callable[[LocalFileSystem], object], fs: LocalFileSystem = LOCAL_FS
) -> Observations:
    observations = Observations()
    run(ObservingFileSystem(fs, observations))
    observations.finish()
    return observations


def probe_all(*paths: Path) -> Callable[[LocalFileSystem], object]:
    return lambda fs: [fs.probe(str(p)) for p in paths]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "pkg" / "AGENTS.md").write_text("pkg rule\n")
    return root


pytestmark = pytest.mark.usefixtures("no_racy_window")


def test_an_untouched_tree_still_holds(tree: Path) -> None:
    seen = record(probe_all(tree / "AGENTS.md", tree / "pkg" / "AGENTS.md", tree / "CLAUDE.md"))
    assert seen.kept
    assert seen.still_hold(LOCAL_FS)
    assert seen.still_hold(LOCAL_FS)  # checking changes nothing


def test_an_edit_breaks_it(tree: Path) -> None:
    seen = record(probe_all(tree / "pkg" / "AGENTS.md"))
    (tree / "pkg" / "AGENTS.md").write_text("pkg rule, edited\n")
    assert not seen.still_hold(LOCAL_FS)


def test_a_delete_breaks_it(tree: Path) -> None:
    seen = record(probe_all(tree / "pkg" / "AGENTS.md"))
    (tree / "pkg" / "AGENTS.md").unlink()
    assert not seen.still_hold(LOCAL_FS)


def test_a_new_file_where_none_was_breaks_it(tree: Path) -> None:
    seen = record(probe_all(tree / "pkg" / "CLAUDE.md"))
    assert seen.still_hold(LOCAL_FS)
    (tree / "pkg" / "CLAUDE.md").write_text("new\n")
    assert not seen.still_hold(LOCAL_FS)


def test_a_new_file_in_a_directory_that_did_not_exist_breaks_it(tree: Path) -> None:
    seen = record(probe_all(tree / "a" / "b" / "AGENTS.md"))
    assert seen.still_hold(LOCAL_FS)
    (tree / "a" / "b").mkdir(parents=True)
    assert not seen.still_hold(LOCAL_FS)


def test_a_symlink_re_pointed_outside_breaks_it(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("secret\n")
    (tree / "shared.md").write_text("shared\n")
    link = tree / "pkg" / "CLAUDE.md"
    link.symlink_to("../shared.md")
    seen = record(probe_all(link))
    assert seen.still_hold(LOCAL_FS)
    link.unlink()
    link.symlink_to(tmp_path / "outside" / "secret.md")
    assert not seen.still_hold(LOCAL_FS)


def test_a_link_re_pointed_to_a_hard_link_of_the_same_file_breaks_it(
    tree: Path, tmp_path: Path
) -> None:
    # Same device, inode and times: only where the path leads tells the two apart.
    (tmp_path / "outside").mkdir()
    (tree / "shared.md").write_text("shared\n")
    os.link(tree / "shared.md", tmp_path / "outside" / "same.md")
    link = tree / "pkg" / "CLAUDE.md"
    link.symlink_to(tree / "shared.md")
    seen = record(probe_all(link))
    assert seen.still_hold(LOCAL_FS)
    link.unlink()
    link.symlink_to(tmp_path / "outside" / "same.md")
    assert not seen.still_hold(LOCAL_FS)


def test_a_directory_of_the_path_swapped_for_a_link_breaks_it(tree: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.link(tree / "pkg" / "AGENTS.md", elsewhere / "AGENTS.md")  # same inode, other place
    seen = record(probe_all(tree / "pkg" / "AGENTS.md"))
    assert seen.still_hold(LOCAL_FS)
    (tree / "pkg").rename(tree / "moved")
    (tree / "pkg").symlink_to(elsewhere)
    assert not seen.still_hold(LOCAL_FS)


def test_a_directory_moved_out_and_linked_back_breaks_it(tree: Path, tmp_path: Path) -> None:
    # The very same directory (inode, entries) is reached through a link now: only the real
    # path of the directory tells that its files live elsewhere.
    (tmp_path / "outside").mkdir()
    seen = record(probe_all(tree / "pkg" / "AGENTS.md"))
    assert seen.still_hold(LOCAL_FS)
    (tree / "pkg").rename(tmp_path / "outside" / "pkg")
    (tree / "pkg").symlink_to(tmp_path / "outside" / "pkg")
    assert not seen.still_hold(LOCAL_FS)


def test_an_ancestor_above_everything_looked_at_moved_and_linked_back_breaks_it(
    tmp_path: Path,
) -> None:
    # Nothing that was looked at changed (the moved directory is above them all), but every
    # path now really lives elsewhere: the real path of the deepest directory tells.
    project = tmp_path / "a" / "proj"
    project.mkdir(parents=True)
    (project / "AGENTS.md").write_text("rule\n")
    seen = record(probe_all(project / "AGENTS.md"))
    assert seen.still_hold(LOCAL_FS)
    (tmp_path / "a").rename(tmp_path / "b")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    assert LOCAL_FS.probe(str(project / "AGENTS.md")).target == str(
        tmp_path.resolve() / "b" / "proj" / "AGENTS.md"
    )
    assert not seen.still_hold(LOCAL_FS)


def test_a_directory_link_re_pointed_breaks_a_resolve(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(tree)
    seen = record(lambda fs: fs.resolve(str(alias / "pkg" / "AGENTS.md")))
    assert seen.still_hold(LOCAL_FS)
    alias.unlink()
    alias.symlink_to(other)
    assert not seen.still_hold(LOCAL_FS)


def test_a_real_path_vouched_for_by_its_directory_needs_no_resolve_of_its_own(tree: Path) -> None:
    files = [tree / "AGENTS.md", tree / "pkg" / "AGENTS.md"]
    seen = record(probe_all(*files))
    assert seen.reals == {}  # both were their own real paths: their directories vouch
    assert seen.still_hold(LOCAL_FS)
    # ... and a file that became a link is still caught, through its directory.
    (tree / "pkg" / "AGENTS.md").unlink()
    (tree / "pkg" / "AGENTS.md").symlink_to(tree / "AGENTS.md")
    assert not seen.still_hold(LOCAL_FS)


def test_a_listing_breaks_when_an_entry_comes_or_goes(tree: Path) -> None:
    rules = tree / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "a.mdc").write_text("a\n")
    seen = record(lambda fs: fs.list_directory(str(rules)))
    assert seen.still_hold(LOCAL_FS)
    (rules / "b.mdc").write_text("b\n")
    assert not seen.still_hold(LOCAL_FS)


def test_a_listed_link_whose_target_changes_kind_breaks_it(tree: Path, tmp_path: Path) -> None:
    rules = tree / "rules"
    rules.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (rules / "x.md").symlink_to(target)
    seen = record(lambda fs: fs.list_directory(str(rules)))
    assert seen.still_hold(LOCAL_FS)
    target.rmdir()
    target.write_text("now a file\n")
    assert not seen.still_hold(LOCAL_FS)


class FailingStat(LocalFileSystem):
    def __init__(self) -> None:
        self.failing: set[str] = set()

    def stat(self, path: str) -> os.stat_result:
        if path in self.failing:
            raise OSError(errno.EIO, "injected", path)
        return super().stat(path)


def test_a_fault_that_appears_or_heals_breaks_it(tree: Path) -> None:
    fs = FailingStat()
    target = str(tree / "pkg" / "AGENTS.md")
    seen = record(probe_all(tree / "pkg" / "AGENTS.md"), fs)
    fs.failing.add(target)
    assert not seen.still_hold(fs)
    failing = record(probe_all(tree / "pkg" / "AGENTS.md"), fs)
    assert failing.still_hold(fs)  # the same fault, seen the same way
    fs.failing.clear()
    assert not failing.still_hold(fs)


class FailingRead(LocalFileSystem):
    def read_chunk(self, fd: int, size: int) -> bytes:
        raise OSError(errno.EIO, "injected")


def test_a_failed_read_is_never_kept(tree: Path) -> None:
    fs = FailingRead()

    def read(view: LocalFileSystem) -> object:
        return view.read_text(view.probe(str(tree / "AGENTS.md")), 1024)

    seen = record(read, fs)
    assert not seen.kept
    assert not seen.still_hold(fs)


def test_a_cache_serves_while_it_holds_and_recomputes_after_a_change(tree: Path) -> None:
    cache: ObservedCache[str | None] = ObservedCache()
    path = str(tree / "pkg" / "AGENTS.md")

    def content(fs: LocalFileSystem) -> str | None:
        return fs.read_text(fs.probe(path), 1024).text

    assert cache.get("k", LOCAL_FS, content) == "pkg rule\n"
    assert cache.get("k", LOCAL_FS, content) == "pkg rule\n"
    assert cache.built == 1
    Path(path).write_text("pkg rule, edited\n")
    assert cache.get("k", LOCAL_FS, content) == "pkg rule, edited\n"
    assert cache.built == 2


def test_a_cache_keeps_no_answer_to_an_error(tree: Path) -> None:
    cache: ObservedCache[int] = ObservedCache()

    def fails(fs: LocalFileSystem) -> int:
        fs.probe(str(tree / "AGENTS.md"))
        raise ValueError("no answer")

    for _ in range(2):
        with pytest.raises(ValueError):
            cache.get("k", LOCAL_FS, fails)


def test_what_changed_a_moment_ago_is_not_kept(monkeypatch: pytest.MonkeyPatch, tree: Path) -> None:
    # The real window: the tree was just written, so a timestamp could not yet tell a change
    # made in the same tick apart. Nothing is kept; every answer is computed.
    monkeypatch.setattr(observed, "RACY_WINDOW_NS", 2_000_000_000)
    cache: ObservedCache[object] = ObservedCache()
    for _ in range(3):
        cache.get("k", LOCAL_FS, probe_all(tree / "AGENTS.md"))
    assert cache.built == 3
    old = 1_000_000_000
    for path in (tree, tree / "AGENTS.md"):
        os.utime(path, ns=(old, old))
    # The change times are still recent (utime sets them): still not kept.
    cache.get("k", LOCAL_FS, probe_all(tree / "AGENTS.md"))
    assert cache.built == 4


# --- OneLook: one request's look, from directory handles ----------------------------------------


def stat_outcome(look: Callable[[str], os.stat_result], path: str) -> object:
    try:
        st = look(path)
    except OSError as exc:
        return ("error", exc.errno)
    except ValueError:
        return ("error", "value")
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@pytest.mark.parametrize(
    ("shallow", "step"),
    [
        (0, 1),
        (0, 2),
        (0, observed._ANCHOR_STEP),
        (observed._SHALLOW_COMPONENTS, observed._ANCHOR_STEP),
    ],
    ids=["a-handle-per-directory", "a-handle-every-second", "anchors", "default"],
)
def test_one_look_stats_what_a_walk_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shallow: int, step: int
) -> None:
    # With no shallow paths every look goes through directory handles (one per directory, one
    # every second directory, or the anchors a deep chain gets); by default a shallow path is
    # asked by path and only the deep one goes through handles.
    monkeypatch.setattr(observed, "_SHALLOW_COMPONENTS", shallow)
    monkeypatch.setattr(observed, "_ANCHOR_STEP", step)
    base = make_odd_tree(tmp_path)
    long_name = "n" * 200
    deep = "/".join([long_name] * 25)  # longer than one walk may be
    paths = [
        "a",
        "a/b/c/f",
        "lb/c/f",
        "a/b/up/a/file",
        "dangling",
        "dangling/x",
        "loop1",
        "loop1/x",
        "a/file/x",
        "a/file/x/y",
        "a/fifo",
        "a/fifo/x",
        "missing/x/y",
        "a/b/c/f/",
        f"a/{deep}/f",
        "a/nul\x00name",
    ]
    look = observed.OneLook(LOCAL_FS)
    for rel in paths:
        path = str(base / rel) if not rel.endswith("/") else str(base / rel) + "/"
        assert stat_outcome(look.stat, path) == stat_outcome(os.stat, path), rel
    look.close()


# The names a path of the read tests is made of: the odd tree's (links inside it and out of the
# project, a loop, a FIFO, a file where a directory is expected, a directory where a file is),
# what makes a path not plain, and a run of long names no single walk may take.
READ_SEGMENTS = [
    "a",
    "b",
    "c",
    "f",
    "file",
    "fifo",
    "lb",
    "lbc",
    "lf",
    "lx",
    "y",
    "up",
    "dangling",
    "dd",
    "loop1",
    "missing",
    "out",
    "leak",
    "secret",
    "",
    ".",
    "..",
    "/".join(["n" * 200] * 21),
]


def read_tree(tmp_path: Path) -> Path:
    """The odd tree as a project (its real path), with a link to a directory out of it and one
    to a file out of it."""
    project = make_odd_tree(tmp_path / "project")
    outside = Path(os.path.realpath(tmp_path)) / "outside"
    outside.mkdir()
    (outside / "secret").write_text("secret\n")
    (outside / "a").mkdir()
    (outside / "a" / "f").write_text("outside f\n")
    (project / "a" / "b" / "c" / "out").symlink_to(outside)
    (project / "a" / "b" / "c" / "leak").symlink_to(outside / "secret")
    return project


def outcome(call: Callable[..., object], *args: object) -> object:
    """What ``call(*args)`` answered, or what it raised: class, errno and the file it names."""
    try:
        return call(*args)
    except OSError as exc:
        return ("error", type(exc), exc.errno, exc.filename)
    except ValueError:
        return ("error", ValueError)


def opened(fs: LocalFileSystem, path: str, follow: bool) -> object:
    """The file an open for a read reached (device, inode, type), or its error."""

    def open_it() -> object:
        fd = fs.open_for_read(path, follow_final_link=follow)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        return (st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode))

    return outcome(open_it)


def reads(fs: LocalFileSystem, path: str, project: Path) -> list[object]:
    """Every read a look makes of ``path``: of its probe's target (as a baseline reads), of the
    path as given (a quick probe, as a touch reads), each unconfined and confined to ``project``."""
    inside = Confinement((str(project),)).allows_path
    probe = LOCAL_FS.probe(path)
    quick = LOCAL_FS.quick_stat(path)
    probes = [probe]
    if not isinstance(quick, Probe):
        probes.append(Probe(ProbeState.PRESENT, path, None, *quick))
    return [fs.read_text(p, 1 << 20, allowed=allowed) for p in probes for allowed in (None, inside)]


@given(
    paths=st.lists(
        st.tuples(st.lists(st.sampled_from(READ_SEGMENTS), max_size=7), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    shallow=st.sampled_from([0, observed._SHALLOW_COMPONENTS]),
    step=st.sampled_from([1, 2, observed._ANCHOR_STEP]),
)
@example(
    # Each shape once, whatever the examples drawn: links at the end (to a directory, to a file
    # inside, out of the project, dangling, a loop), through a link, a FIFO, a directory, a file
    # used as a directory, missing, not plain, too long for one walk.
    paths=[
        (["lb"], False),
        (["a", "b", "lf"], False),
        (["a", "b", "c", "leak"], False),
        (["a", "b", "c", "out", "secret"], False),
        (["dangling"], False),
        (["loop1"], False),
        (["lbc", "f"], False),
        (["a", "fifo"], False),
        (["a", "b"], False),
        (["a", "file", "f"], False),
        (["missing", "f"], False),
        (["a", "b", "..", "file"], False),
        (["a", ".", "file"], True),
        (["a", READ_SEGMENTS[-1], "f"], False),
    ],
    shallow=0,
    step=2,
)
@settings(
    max_examples=examples(200),
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # the tree is only read
    deadline=None,
)
def test_one_look_resolves_opens_and_reads_what_a_walk_does(
    tmp_path_factory: pytest.TempPathFactory,
    paths: list[tuple[list[str], bool]],
    shallow: int,
    step: int,
) -> None:
    # With no shallow paths every look goes through directory handles (one per directory, one
    # every second directory, or a deep chain's anchors), by default only deep ones do: a look
    # resolves, opens and reads each path (a few in turn, so later ones start from handles the
    # earlier opened) exactly as the plain filesystem does, errors included.
    project = read_tree(tmp_path_factory.mktemp("reads"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(observed, "_SHALLOW_COMPONENTS", shallow)
        patch.setattr(observed, "_ANCHOR_STEP", step)
        look = observed.OneLook(LOCAL_FS)
        try:
            for segments, trailing in paths:
                path = os.path.join(str(project), *segments) + ("/" if trailing else "")
                assert outcome(look.resolve, path) == outcome(LOCAL_FS.resolve, path), path
                for follow in (True, False):
                    assert opened(look, path, follow) == opened(LOCAL_FS, path, follow), path
                assert reads(look, path, project) == reads(LOCAL_FS, path, project), path
        finally:
            look.close()


def deep_project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project deeper than a walk by path is taken (so a look reads from directory handles),
    an ``AGENTS.md`` at its bottom, and a directory outside it with a secret; the project, the
    bottom and the outside directory."""
    base = Path(os.path.realpath(tmp_path))
    project = base / "project"
    bottom = project.joinpath(*(["d"] * (observed._SHALLOW_COMPONENTS + 2 * observed._ANCHOR_STEP)))
    bottom.mkdir(parents=True)
    (bottom / "AGENTS.md").write_text("rule\n")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret").write_text("secret\n")
    return project, bottom, outside


@attrs.frozen
class DeepLook:
    """A look that has checked the ``AGENTS.md`` at the bottom of a deep project, both ways a
    read starts from: a probe (a baseline's) and a quick stat (a touch's)."""

    path: str
    look: observed.OneLook
    probe: Probe
    touch_read: Probe  # what a touch reads with: the quick stat's size and identity
    inside: Callable[[str], bool]  # the project's confinement

    @classmethod
    def at(cls, project: Path, bottom: Path) -> DeepLook:
        path = str(bottom / "AGENTS.md")
        look = observed.OneLook(LOCAL_FS)
        probe = look.probe(path)
        quick = look.quick_stat(path)
        assert probe.present and not isinstance(quick, Probe)
        touch_read = Probe(ProbeState.PRESENT, path, None, *quick)
        return cls(path, look, probe, touch_read, Confinement((str(project),)).allows_path)


def replace_with_link(path: Path, target: Path) -> None:
    """``path`` becomes a link to ``target`` in one rename, as a checkout swaps a file."""
    link = path.with_name(path.name + ".link")
    link.symlink_to(target)
    os.replace(link, path)


def test_a_file_swapped_for_a_link_out_of_the_project_after_the_look_began_is_not_read(
    tmp_path: Path,
) -> None:
    # A hostile repository swaps the checked file for a link to a secret between the look's
    # first stat (its handles are open) and the read: the read from the handles is refused as
    # the read by path is, whichever way it reads.
    project, bottom, outside = deep_project(tmp_path)
    seen = DeepLook.at(project, bottom)
    look, probe, inside, touch_read = seen.look, seen.probe, seen.inside, seen.touch_read
    assert look._from_handle(seen.path) is not None  # the read below goes from a handle
    replace_with_link(bottom / "AGENTS.md", outside / "secret")
    for fs in (look, LOCAL_FS):
        refused = fs.read_text(touch_read, 1 << 20, allowed=inside)
        assert (refused.failure, refused.detail) == (
            ReadFailure.NOT_ALLOWED,
            str(outside / "secret"),
        )
        changed = fs.read_text(probe, 1 << 20, allowed=inside)
        assert changed.failure is ReadFailure.CHANGED and changed.text is None
    look.close()
    subprocess.run(["rm", "-rf", str(project)], check=True)


def test_a_directory_swapped_for_a_link_out_of_the_project_after_the_look_began_is_not_read(
    tmp_path: Path,
) -> None:
    # The same with a directory: the bottom one (below the handle the read starts from) and
    # one the look holds a handle to, each moved out of the project and a link to it left in
    # its place. The handle still leads to the moved directory; the read from it is refused,
    # with the same answer as the read by path (which follows the link to the same place).
    project, bottom, outside = deep_project(tmp_path)
    seen = DeepLook.at(project, bottom)
    look, probe, inside, touch_read = seen.look, seen.probe, seen.inside, seen.touch_read
    held = max((p for p in look._fds if p.startswith(str(project) + os.sep)), key=len)
    for moved, name in ((bottom, "bottom"), (Path(held), "held")):
        os.rename(moved, outside / name)
        replace_with_link(moved, outside / name)
        answers = [fs.read_text(touch_read, 1 << 20, allowed=inside) for fs in (look, LOCAL_FS)]
        assert answers[0] == answers[1]
        assert answers[0].failure is ReadFailure.NOT_ALLOWED
        assert answers[0].detail is not None and answers[0].detail.startswith(str(outside))
        assert look.read_text(probe, 1 << 20).failure is ReadFailure.CHANGED
        os.unlink(moved)
        os.rename(outside / name, moved)
    look.close()
    subprocess.run(["rm", "-rf", str(project)], check=True)


def test_one_look_keeps_few_directory_handles_open(tmp_path: Path) -> None:
    base = os.path.realpath(tmp_path)
    deep = base
    for _ in range(600):
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    look = observed.OneLook(LOCAL_FS)
    before = len(os.listdir("/proc/self/fd"))
    current = base
    for _ in range(600):
        current = os.path.join(current, "d")
        assert stat_outcome(look.stat, os.path.join(current, "AGENTS.md")) == (
            "error",
            errno.ENOENT,
        )
    assert len(os.listdir("/proc/self/fd")) - before <= observed._HANDLES_KEPT
    look.close()
    assert len(os.listdir("/proc/self/fd")) <= before
    subprocess.run(["rm", "-rf", os.path.join(base, "d")], check=True)


def test_one_look_asks_a_fault_injecting_filesystem_by_path(tree: Path) -> None:
    fs = FailingStat()
    fs.failing.add(str(tree / "pkg" / "AGENTS.md"))
    look = observed.OneLook(fs)
    with pytest.raises(OSError) as caught:
        look.stat(str(tree / "pkg" / "AGENTS.md"))
    assert caught.value.errno == errno.EIO


class PlainSubclass(LocalFileSystem):
    """The local filesystem as a subclass: ``still_hold`` asks it through its own ``stat``."""


def test_a_plain_look_checks_as_every_filesystem_does(tmp_path: Path) -> None:
    # still_hold takes a shortcut over the plain local filesystem (os.stat in place, kept in the
    # request's OneLook); the answers must be those of the general path, whatever changed, a
    # chain deeper than a walk by path (anchored looks) included.
    base = os.path.realpath(tmp_path)
    deep = os.path.join(base, *(["d"] * (observed._SHALLOW_COMPONENTS + 20)))
    os.makedirs(deep)
    for directory in (base, deep):
        Path(directory, "AGENTS.md").write_text("rule\n")
    os.mkdir(os.path.join(base, ".git"))
    wanted = [
        os.path.join(base, "AGENTS.md"),
        os.path.join(base, "CLAUDE.md"),
        os.path.join(deep, "AGENTS.md"),
        os.path.join(deep, "CLAUDE.md"),
        os.path.join(base, "missing", "x", "AGENTS.md"),
    ]

    def run(fs: LocalFileSystem) -> object:
        fs.is_directory(os.path.join(base, ".git"))
        return [fs.probe(p) for p in wanted]

    def agree() -> bool:
        answers = set()
        for fs in (LOCAL_FS, observed.OneLook(LOCAL_FS), PlainSubclass()):
            answers.add(seen.still_hold(fs))
        assert len(answers) == 1, answers
        return answers.pop()

    seen = record(run)
    assert seen.kept and seen.still_hold(LOCAL_FS) and agree()
    look = observed.OneLook(LOCAL_FS)
    assert seen.still_hold(look)
    assert set(look._stats) >= set(seen.directories) | set(seen.files)  # each kept for the request
    changes: list[Callable[[], object]] = [
        lambda: Path(deep, "AGENTS.md").write_text("rule, edited\n"),
        lambda: Path(deep, "CLAUDE.md").write_text("new\n"),
        lambda: os.makedirs(os.path.join(base, "missing", "x")),
        lambda: os.rename(os.path.join(base, ".git"), os.path.join(base, ".git-old")),
        lambda: Path(base, "AGENTS.md").write_text("rule, edited\n"),
    ]
    for change in changes:
        seen = record(run)
        assert agree()
        change()
        assert not agree()
    subprocess.run(["rm", "-rf", os.path.join(base, "d")], check=True)


def test_a_look_keeps_its_failures_out_of_the_collectors_sight(tmp_path: Path) -> None:
    # A deep chain's request keeps thousands of failed stats: kept as exceptions, each was
    # tracked by the garbage collector and walked by every full collection while the look
    # lived. Kept as plain values, one collection stops tracking them.
    import gc

    look = observed.OneLook(LOCAL_FS)
    for path in (str(tmp_path / "missing"), str(tmp_path / "missing" / "x"), "/nul\x00"):
        with pytest.raises((OSError, ValueError)):
            look.stat(path)
    gc.collect()
    assert look._stats and not any(gc.is_tracked(kept) for kept in look._stats.values())


def test_a_look_that_saw_failures_goes_with_its_last_reference(tmp_path: Path) -> None:
    # A kept failure is raised as a new exception each time: raising the kept one gave it a
    # traceback whose frames hold the look, a cycle only the garbage collector's full pass
    # could free (with every stat of the request and its directory handles).
    import gc
    import weakref

    deep = os.path.join(os.path.realpath(tmp_path), *(["d"] * (observed._SHALLOW_COMPONENTS + 5)))
    os.makedirs(deep)
    look = observed.OneLook(LOCAL_FS)
    missing = [os.path.join(deep, "AGENTS.md"), str(tmp_path / "missing" / "x"), "/nul\x00"]
    for path in missing * 2:
        with pytest.raises((OSError, ValueError)) as raised:
            look.stat(path)
        again = raised.value
    assert isinstance(again, FileNotFoundError | ValueError)
    caught: list[BaseException] = []
    for path in missing:
        try:
            look.stat(path)
        except (OSError, ValueError) as exc:
            caught.append(exc)
    assert [type(e) for e in caught] == [FileNotFoundError, FileNotFoundError, ValueError]
    first = caught[0]
    assert isinstance(first, OSError) and first.errno == errno.ENOENT
    del caught, raised, again, first
    ref = weakref.ref(look)
    gc.disable()
    try:
        del look
        assert ref() is None
    finally:
        gc.enable()
    subprocess.run(["rm", "-rf", os.path.join(os.path.realpath(tmp_path), "d")], check=True)


# --- how long a path is for one walk ------------------------------------------------------

_LIMIT = observed._PATH_MAX
# Characters of one to four UTF-8 bytes, and a surrogate that stands for an undecodable byte.
_CHARACTERS = st.sampled_from(["a", "/", "é", "中", "😀", "\udcff"])


@given(
    size=st.sampled_from(
        [_LIMIT // 4 - 1, _LIMIT // 4, _LIMIT // 4 + 1, _LIMIT // 2, _LIMIT - 1, _LIMIT, _LIMIT + 1]
    ),
    fill=_CHARACTERS,
    odd=st.lists(st.tuples(st.integers(min_value=0), _CHARACTERS), max_size=8),
)
@example(size=_LIMIT // 4, fill="😀", odd=[])  # exactly the limit in bytes
@example(size=_LIMIT // 4 - 1, fill="😀", odd=[])
@settings(max_examples=examples(300), deadline=None)
def test_too_long_is_the_encoded_length(size: int, fill: str, odd: list[tuple[int, str]]) -> None:
    chars = [fill] * size
    for at, char in odd:
        chars[at % size] = char
    path = "".join(chars)
    assert observed._too_long(path) == (len(os.fsencode(path)) >= _LIMIT)


def test_a_directory_held_only_absent_names_is_not_broken_by_other_entries(tmp_path: Path) -> None:
    # An ancestor such as a shared /tmp or the home directory: other programs add and remove
    # entries in it all the time, and only the names looked for matter.
    outer = tmp_path / "outer"
    outer.mkdir()
    seen = record(probe_all(outer / "CLAUDE.md", outer / ".claude" / "CLAUDE.md"))
    (outer / "tmp-of-another-program").write_text("x\n")
    (outer / "scratch").mkdir()
    assert seen.still_hold(LOCAL_FS)
    assert seen.still_hold(LOCAL_FS)
    (outer / "CLAUDE.md").write_text("new\n")
    assert not seen.still_hold(LOCAL_FS)


def test_the_missing_directory_of_an_absent_name_breaks_it_by_appearing(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    seen = record(probe_all(outer / ".claude" / "rules" / "a.md"))
    (outer / "other").mkdir()
    assert seen.still_hold(LOCAL_FS)
    (outer / ".claude").mkdir()
    assert not seen.still_hold(LOCAL_FS)


def test_a_file_where_a_directory_was_looked_for_is_held_as_it_is(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / ".claude").write_text("a file, not a directory\n")
    seen = record(probe_all(outer / ".claude" / "CLAUDE.md"))
    (outer / "other").mkdir()
    assert seen.still_hold(LOCAL_FS)
    (outer / ".claude").unlink()
    (outer / ".claude").mkdir()
    (outer / ".claude" / "CLAUDE.md").write_text("now there\n")
    assert not seen.still_hold(LOCAL_FS)


def test_absent_names_in_a_directory_changed_just_now_are_kept_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window applies to what the answer's content rests on; a directory changed a moment
    # ago that held none of it (only names found absent) is checked by those names instead.
    monkeypatch.setattr(observed, "RACY_WINDOW_NS", 2_000_000_000)
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "just-now").write_text("x\n")
    seen = record(probe_all(outer / "CLAUDE.md"))
    assert seen.kept
    assert seen.still_hold(LOCAL_FS)
    (outer / "CLAUDE.md").write_text("new\n")
    assert not seen.still_hold(LOCAL_FS)
    # A directory that holds a present file the answer read is still within the window.
    assert not record(probe_all(outer / "CLAUDE.md")).kept

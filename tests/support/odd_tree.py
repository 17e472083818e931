"""One tree of awkward filesystem shapes, for the tests that compare a lookup with the OS's own."""

from __future__ import annotations

import os
from pathlib import Path


def make_odd_tree(tmp_path: Path) -> Path:
    """Real directories, links to them and through them, dangling links, a loop, a FIFO, a
    file used as a directory, a name with a line break and one that is not UTF-8; the tree's
    real path."""
    base = Path(os.path.realpath(tmp_path))
    (base / "a/b/c").mkdir(parents=True)
    (base / "x/y").mkdir(parents=True)
    (base / "a/b/c/f").write_text("f")
    (base / "a/file").write_text("file")
    (base / "lb").symlink_to("a/b")
    (base / "a/lx").symlink_to(base / "x")
    (base / "a/b/up").symlink_to("../..")
    (base / "dangling").symlink_to("nowhere")
    (base / "loop1").symlink_to("loop2")
    (base / "loop2").symlink_to("loop1")
    (base / "a/b/lf").symlink_to("c/f")
    (base / "lbc").symlink_to("lb/c")
    (base / "dd").symlink_to("dangling")
    os.mkfifo(base / "a/fifo")
    (base / "a/new\nline").mkdir()
    os.mkdir(os.fsencode(base) + b"/caf\xe9")
    return base

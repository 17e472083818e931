"""The hook spool's file format and its settling, on a real directory (the kills themselves are
in tests/integration/test_hook_processes.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from dsh_sidecar.cli import spool_row
from dsh_sidecar.model import SessionHeader
from dsh_sidecar.sessions.spool import Kept, Spool, waiting_paths
from dsh_sidecar.sessions.store import Store


def test_entries_come_back_in_order_each_once_with_bad_lines_skipped(tmp_path: Path) -> None:
    spool = Spool.of_home(str(tmp_path))
    spool.keep("claude:s", ("/p/a.py", "/p/b.py"))
    spool.keep("claude:s", ())  # nothing touched: nothing kept
    spool.keep("claude:t", ("/p/other.py",))
    spool.keep("claude:s", ("/p/c.py",))
    (live,) = [p for p in Path(spool.directory).iterdir() if "a.py" in p.read_text()]
    with live.open("a") as out:
        out.write("not json\n" + json.dumps({"paths": ["/p/no-id.py"]}) + "\n")
        out.write(json.dumps({"id": "x", "paths": ["relative.py", 3, "/p/d.py"]}) + "\n")

    entries = spool.read("claude:s")
    assert [e.paths for e in entries] == [("/p/a.py", "/p/b.py"), ("/p/c.py",), ("/p/d.py",)]
    assert len({e.id for e in entries}) == 3
    assert [e.paths for e in spool.read("claude:t")] == [("/p/other.py",)]
    assert spool.read("claude:none") == []


def test_a_leftover_beside_the_live_file_is_read_and_a_line_in_both_counts_once(
    tmp_path: Path,
) -> None:
    spool = Spool.of_home(str(tmp_path))
    spool.keep("codex:s", ("/p/a.py",))
    (live,) = Path(spool.directory).iterdir()
    written = live.read_text()
    legacy = json.dumps(["/p/old.py", "not/absolute"])  # before entries had ids
    live.with_name(live.name + ".77").write_text(legacy + "\n" + written)

    entries = spool.read("codex:s")
    assert [e.paths for e in entries] == [("/p/a.py",), ("/p/old.py",)]
    assert entries[1].id.startswith("line-")


def test_settling_drops_the_consumed_entries_and_keeps_every_other(tmp_path: Path) -> None:
    spool = Spool.of_home(str(tmp_path))
    spool.keep("claude:s", ("/p/a.py",))
    spool.keep("claude:s", ("/p/b.py",))
    taken = spool.read("claude:s")
    spool.keep("claude:s", ("/p/late.py",))  # appended after the event read the spool
    (live,) = Path(spool.directory).iterdir()
    live.with_name(live.name + ".4242.dead").write_text(
        json.dumps({"id": taken[0].id, "paths": ["/p/a.py"]}) + "\nnot json\n"
    )

    spool.settle("claude:s", {e.id for e in taken})
    assert [e.paths for e in spool.read("claude:s")] == [("/p/late.py",)]
    assert [p.name for p in Path(spool.directory).iterdir()] == [live.name]
    spool.settle("claude:s", {e.id for e in spool.read("claude:s")})
    assert list(Path(spool.directory).iterdir()) == []


def test_waiting_paths_leave_out_what_the_store_says_was_consumed() -> None:
    entries = [Kept("a", ("/p/x.py", "/p/y.py")), Kept("b", ("/p/y.py",)), Kept("c", ("/p/z.py",))]
    asked: list[list[str]] = []

    def consumed(keys: Sequence[str]) -> set[str]:
        asked.append(list(keys))
        return {"spool:c"}

    assert waiting_paths(entries, consumed) == ["/p/x.py", "/p/y.py"]
    assert asked == [["spool:a", "spool:b", "spool:c"]]
    assert waiting_paths([], consumed) == [] and len(asked) == 1


def test_touches_of_sessions_the_store_does_not_hold_are_counted_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    spool = Spool.of_home(str(home))
    spool.keep("claude:stored", ("/p/a.py",))
    spool.keep("claude:first-events-busy", ("/p/b.py", "/p/c.py"))
    (Path(spool.directory) / "README").write_text("not a spool file\n")
    assert [e.paths for e in spool.unowned(["claude:stored"])] == [("/p/b.py", "/p/c.py")]

    store = home / "sessions.sqlite3"
    assert spool_row(str(store), str(home)) == "3 touches waiting for sessions not in the store yet"
    opened = Store(str(store), durable=False)
    try:
        opened.create_session(SessionHeader("claude:stored", 1, str(tmp_path), agent="claude"))
    finally:
        opened.close()
    assert spool_row(str(store), str(home)) == (
        "1 touch waiting for claude:stored, 2 touches waiting for sessions not in the store yet"
    )


def test_a_kept_search_stays_a_search_and_an_old_line_reads_as_reads(tmp_path: Path) -> None:
    spool = Spool.of_home(str(tmp_path))
    spool.keep("claude:s", ("/p/a.py", "/p/lib"), scanned=frozenset({"/p/lib", "/p/elsewhere"}))
    spool.keep("claude:s", ("/p/b.py",), scanned=frozenset())
    (live,) = Path(spool.directory).iterdir()
    with live.open("a") as out:  # as written before kept searches were told apart
        out.write(json.dumps({"id": "old", "paths": ["/p/c.py"]}) + "\n")
        out.write(json.dumps({"id": "odd", "paths": ["/p/d.py"], "scanned": "/p/d.py"}) + "\n")

    entries = spool.read("claude:s")
    assert [(e.paths, e.scanned) for e in entries] == [
        (("/p/a.py", "/p/lib"), ("/p/lib",)),  # only its own paths, never another's
        (("/p/b.py",), ()),
        (("/p/c.py",), ()),
        (("/p/d.py",), ()),  # a scanned field that is no list is no search
    ]


def test_a_reset_of_the_agents_context_is_kept_with_or_without_touches(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path / "spool"))
    alone = spool.keep("s", (), reset="compact")
    assert alone is not None
    both = spool.keep("s", ("/p/x.py",), reset="resume")
    assert spool.keep("s", ()) is None  # nothing to keep
    assert spool.read("s") == [
        Kept(alone, (), (), "compact"),
        Kept(str(both), ("/p/x.py",), (), "resume"),
    ]
    # A reset no agent reports is refused on the way in, and read as none on the way out.
    with pytest.raises(ValueError, match="not a reset"):
        spool.keep("s", ("/p/y.py",), reset="startup")
    live = tmp_path / "spool" / next(p.name for p in (tmp_path / "spool").iterdir())
    with live.open("a") as out:
        out.write(json.dumps({"id": "odd", "paths": ["/p/z.py"], "reset": "reboot"}) + "\n")
    assert spool.read("s")[-1] == Kept("odd", ("/p/z.py",))
    spool.settle("s", {alone, str(both), "odd"})
    assert spool.read("s") == []

"""Hook processes against kills and each other's locks: real ``dsh-sidecar hook`` processes on
one real store (``tests.support.hook_processes``), stopped where a test wants them through the
hook's test point and killed with ``os.kill``. Every touch a busy hook kept is delivered exactly
once, whichever moment a kill hits; a lock held for a second is waited for; what an event may do
without the write lock (the tmux query) is done without it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.hook_processes import HookAgent, LockHolder, text_of


@pytest.fixture
def agent(tmp_path: Path) -> HookAgent:
    a = HookAgent(tmp_path, "s1")
    assert "ROOT-AGENTS" in a.hook(a.payload("SessionStart", source="startup"))
    return a


def keep_two(agent: HookAgent) -> None:
    """What two busy events of the session left in the spool."""
    agent.spool.keep(agent.session, (str(agent.root / "pkg/x.py"),))
    agent.spool.keep(agent.session, (str(agent.root / "other/y.py"),))


def test_a_hook_killed_inside_its_transaction_leaves_every_spooled_touch_for_the_next_event(
    agent: HookAgent,
) -> None:
    keep_two(agent)
    killed = agent.start(agent.read("notes.txt", "t1"), pause="printed")
    agent.reached(killed, "printed")  # printed, not recorded: the agent throws it away
    printed = agent.kill(killed)
    assert printed.count("PKG-AGENTS") == 1 and printed.count("OTHER-AGENTS") == 1
    # The killed event's own touch waits too: it kept it before offering its answer.
    assert agent.waiting_json() == [
        str(agent.root / "pkg/x.py"),
        str(agent.root / "other/y.py"),
        str(agent.root / "notes.txt"),
    ]

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1 and text.count("OTHER-AGENTS") == 1
    assert agent.waiting_json() == []
    assert agent.spool.read(agent.session) == []  # settled after the commit
    again = agent.hook(agent.read("notes.txt", "t2"))
    assert "PKG-AGENTS" not in again and "OTHER-AGENTS" not in again


def test_a_hook_killed_after_its_commit_delivers_nothing_twice(agent: HookAgent) -> None:
    keep_two(agent)
    killed = agent.start(agent.read("notes.txt", "t1"), pause="committed")
    agent.reached(killed, "committed")
    delivered = agent.kill(killed)
    assert delivered.count("PKG-AGENTS") == 1 and delivered.count("OTHER-AGENTS") == 1
    # The spool still holds both entries (and the event's own, kept before its offer), but the
    # store says they were consumed.
    assert len(agent.spool.read(agent.session)) == 3
    assert agent.waiting_json() == []

    text = agent.hook(agent.prompt("go on"))
    assert "PKG-AGENTS" not in text and "OTHER-AGENTS" not in text
    assert agent.spool.read(agent.session) == []  # and now they are gone from it too
    assert "PKG-AGENTS" not in agent.hook(agent.read("pkg/x.py", "t2"))


def test_a_kill_between_the_spool_being_set_aside_and_removed_loses_nothing(
    agent: HookAgent,
) -> None:
    """What an older dsh-sidecar, or a kill during settling, leaves: ``<name>.jsonl.<suffix>``
    beside the live file, holding one entry of its own and one already in the live file."""
    keep_two(agent)
    (live,) = [p for p in Path(agent.spool.directory).iterdir()]
    legacy = json.dumps([str(agent.root / "pkg/x.py")])
    aside = live.read_text().splitlines()[1]  # other/y.py's entry, written back twice
    live.with_name(live.name + ".4242").write_text(legacy + "\n" + aside + "\n")

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1 and text.count("OTHER-AGENTS") == 1
    assert list(Path(agent.spool.directory).iterdir()) == []


def test_a_lock_held_for_a_second_is_waited_for_not_spooled(agent: HookAgent) -> None:
    holder = LockHolder(agent.home / "sessions.sqlite3")
    try:
        waiting = agent.start(agent.read("pkg/x.py", "t1"), pause="begin")
        agent.reached(waiting, "begin")
        agent.go_on()  # to BEGIN IMMEDIATE, where the lock is held
        time.sleep(1.0)  # the other process's one second with the lock, not a synchronisation
    finally:
        holder.release()
    out, _ = waiting.communicate(timeout=60)
    assert waiting.returncode == 0
    assert text_of(out).count("PKG-AGENTS") == 1
    assert "store busy" not in agent.log()
    assert agent.spool.read(agent.session) == []


def test_sessions_and_doctor_show_spooled_touches_as_touches_waiting(agent: HookAgent) -> None:
    holder = LockHolder(agent.home / "sessions.sqlite3")
    try:  # held for longer than the hook may wait: its touch is kept
        assert agent.hook(agent.read("pkg/x.py", "t1")) == ""
    finally:
        holder.release()
    assert "store busy: kept 1 touch(es)" in agent.log()
    agent.spool.keep(agent.session, (str(agent.root / "other/y.py"),))

    listing = agent.cli("sessions").splitlines()
    assert "  pending  2 touches waiting" in listing
    assert agent.waiting_json() == [str(agent.root / "pkg/x.py"), str(agent.root / "other/y.py")]
    doctor = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "doctor"],
        capture_output=True,
        text=True,
        env=agent.env,
        cwd=agent.root,
        timeout=60,
    ).stdout.splitlines()
    assert [line.split(None, 1)[1] for line in doctor if line.startswith("spool ")] == [
        f"2 touches waiting for {agent.session}"
    ]

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1 and text.count("OTHER-AGENTS") == 1
    assert "  pending  nothing" in agent.cli("sessions").splitlines()
    assert agent.waiting_json() == []


def test_the_tmux_query_runs_while_no_write_lock_is_held(agent: HookAgent, tmp_path: Path) -> None:
    """The query is ``sh -c …`` through PATH: a stand-in ``sh`` tries to take the store's write
    lock at once and says whether it could."""
    seen = tmp_path / "lock-seen"
    fake = tmp_path / "bin" / "sh"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sqlite3, sys\n"
        f"db = sqlite3.connect({str(agent.home / 'sessions.sqlite3')!r}, timeout=0,"
        " isolation_level=None)\n"
        "try:\n"
        "    db.execute('BEGIN IMMEDIATE')\n"
        "    db.execute('ROLLBACK')\n"
        "    state = 'free'\n"
        "except sqlite3.OperationalError as exc:\n"
        "    state = str(exc)\n"
        f"open({str(seen)!r}, 'a').write(state + '\\n')\n"
        "sys.exit(1)  # no pane: no reading\n"
    )
    fake.chmod(0o755)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"tmuxContext": {"enabled": True}}))
    agent.env["PATH"] = f"{fake.parent}:{agent.env['PATH']}"
    agent.hook(agent.prompt("go"), "--settings", str(settings))
    assert seen.read_text() == "free\n"


def test_a_kept_shell_read_is_delivered_whole_because_claude_loaded_nothing_after_it(
    agent: HookAgent,
) -> None:
    # Claude Code loads pkg/CLAUDE.md itself after a Read of pkg/x.py, never after `cat pkg/x.py`.
    x = str(agent.root / "pkg/x.py")
    agent.spool.keep(agent.session, (x,), scanned=frozenset({x}))
    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-CLAUDE") == 1 and text.count("PKG-AGENTS") == 1


def test_a_kept_read_leaves_what_claude_loaded_itself_out(agent: HookAgent) -> None:
    agent.spool.keep(agent.session, (str(agent.root / "pkg/x.py"),))
    text = agent.hook(agent.prompt("go on"))
    assert "PKG-CLAUDE" not in text and text.count("PKG-AGENTS") == 1


def test_a_kept_shell_read_of_a_file_read_now_counts_as_the_read(agent: HookAgent) -> None:
    x = str(agent.root / "pkg/x.py")
    agent.spool.keep(agent.session, (x,), scanned=frozenset({x}))
    text = agent.hook(agent.read("pkg/x.py", "t1"))  # this Read made Claude load pkg/CLAUDE.md
    assert "PKG-CLAUDE" not in text and text.count("PKG-AGENTS") == 1


def test_a_hook_killed_between_its_offer_and_its_print_leaves_the_answer_to_the_next_event(
    agent: HookAgent,
) -> None:
    """The offer (the session reserved for this answer) is committed before the print; its owner
    killed before printing, the next event finds the offer nobody holds, drops it, and delivers
    what the killed one would have, once. (In the hook's own process: the resident engine's
    offer, killed, is tests/integration/test_resident_hook.py's "answered" stage.)"""
    agent.env["DSH_HOOK_RESIDENT"] = "0"
    killed = agent.start(agent.read("pkg/x.py", "t1"), pause="offered")
    agent.reached(killed, "offered")
    assert agent.kill(killed) == ""  # nothing printed: the agent got nothing
    offers = agent.home / "sessions.sqlite3-offers"
    assert len(list(offers.iterdir())) == 1  # the dead owner's lock file, and its row

    text = agent.hook(agent.prompt("go on"))
    assert text.count("PKG-AGENTS") == 1
    assert list(offers.iterdir()) == []
    assert "PKG-AGENTS" not in agent.hook(agent.read("pkg/x.py", "t2"))
    assert "PKG-AGENTS" not in agent.hook(agent.read("notes.txt", "t3"))
    assert agent.log() == ""


def test_a_compaction_hook_killed_before_its_record_leaves_the_re_arm_to_the_next_event(
    agent: HookAgent,
) -> None:
    """The agent compacted, but the hook that was to give its instructions again died before
    printing: nothing of that event was recorded, so without more the store would still hold
    them as seen, and no later event would give them. The reset was kept with the event's
    touches; the next event carries it out and gives them, once."""
    agent.env["DSH_HOOK_RESIDENT"] = "0"
    assert agent.hook(agent.read("pkg/x.py", "t1")).count("PKG-AGENTS") == 1
    killed = agent.start(agent.payload("SessionStart", source="compact"), pause="offered")
    agent.reached(killed, "offered")
    assert agent.kill(killed) == ""

    text = agent.hook(agent.prompt("go on"))
    assert text.count("ROOT-AGENTS") == 1 and text.count("PKG-AGENTS") == 1
    assert agent.spool.read(agent.session) == []
    again = agent.hook(agent.read("pkg/x.py", "t2")) + agent.hook(agent.prompt("and on"))
    assert "ROOT-AGENTS" not in again and "PKG-AGENTS" not in again


@pytest.mark.parametrize(("source", "nested"), [("compact", 1), ("clear", 0)])
def test_a_reset_kept_while_the_store_was_busy_is_carried_out_by_the_next_event(
    agent: HookAgent, source: str, nested: int
) -> None:
    assert agent.hook(agent.read("pkg/x.py", "t1")).count("PKG-AGENTS") == 1
    holder = LockHolder(agent.home / "sessions.sqlite3")
    try:  # held for longer than the hook may wait
        assert agent.hook(agent.payload("SessionStart", source=source)) == ""
    finally:
        holder.release()
    assert f"store busy: kept 0 touch(es) and the {source}" in agent.log()

    text = agent.hook(agent.prompt("go on"))
    # After a clear the agent starts afresh: the baseline again, nested files when touched.
    assert text.count("ROOT-AGENTS") == 1 and text.count("PKG-AGENTS") == nested
    again = agent.hook(agent.read("pkg/x.py", "t2"))
    assert "ROOT-AGENTS" not in again and again.count("PKG-AGENTS") == 1 - nested

"""The store shared by real processes: concurrent writers, and writers killed mid-stream.

Children are separate interpreters (``python -c``) talking over pipes, so SQLite's file locking,
WAL recovery and busy handling are exercised for real. Nothing here waits on a clock: children
start on a "go" line, and the killer acts after reading a chosen number of acknowledgements.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.fixtures import schema_1_rows, schema_1_store

from dsh_sidecar.model import INBOX_SPLICED, SESSION_TITLE, USER_MESSAGE, Message
from dsh_sidecar.sessions.store import NO_FSYNC_ENV, Store, replay_inbox
from dsh_sidecar.sessions.surface import fold_surface

SESSIONS_PER_PROCESS = 50
ROUNDS = 6
SHARED = ("shared-0", "shared-1", "shared-2")

WRITER = textwrap.dedent(
    """
    import sys, traceback
    from dsh_sidecar.model import Message, SessionHeader, USER_MESSAGE
    from dsh_sidecar.sessions.inbox import splice_draft
    from dsh_sidecar.sessions.store import EventDraft, Store

    path, tag, sessions, rounds, shared = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split(",")
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        store = Store(path)
        own = [f"{tag}-{i}" for i in range(sessions)]
        for sid in own + shared:
            store.create_session(SessionHeader(sid, 0, "/w"))
        inboxes = {sid: [] for sid in own}
        for r in range(rounds):
            for sid in own:
                said = [
                    EventDraft(USER_MESSAGE, Message.user([f"{sid}|{r}|{k}"], {"kind": "user"}).to_json(), "append")
                    for k in range(2)
                ]
                new_inbox = [Message.user([f"queued {sid} {r}"], {"kind": "user"})] if r % 2 == 0 else []
                splice = splice_draft(inboxes[sid], new_inbox)
                store.append(sid, said + ([splice] if splice else []), inbox=new_inbox if splice else None)
                inboxes[sid] = new_inbox
                if r % 3 == 2:
                    store.compact(sid, Message.user([f"summary {sid} {r}"], {"kind": "user"}), 0, 1)
            for sid in shared:
                note = EventDraft(USER_MESSAGE, Message.user([f"{tag}|{r}"], {"kind": "user"}).to_json(), "append")
                store.append(sid, [note])
        store.close()
    except BaseException:
        traceback.print_exc()
        sys.exit(3)
    print("done", flush=True)
    """
)


def child(code: str, *args: str) -> subprocess.Popen[str]:
    # Crash safety is the point here: the stores keep fsync whatever the developer's shell says.
    env = {k: v for k, v in os.environ.items() if k != NO_FSYNC_ENV}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_session(store: Store, sid: str) -> list[Message]:
    """Contiguous seqs, every row parses, folds agree; returns the user messages in log order."""
    log = store.events(sid)
    assert [e.seq for e in log] == list(range(len(log))), sid
    assert store.last_seq(sid) == (len(log) - 1 if log else None)
    assert store.surface_seqs(sid) == fold_surface(log), sid
    splices = [e for e in log if e.type == INBOX_SPLICED]
    assert [m.to_json() for m in store.inbox(sid)] == replay_inbox(splices), sid
    messages = []
    for event in log:
        if event.type == USER_MESSAGE:
            message = event.message()
            assert message is not None, (sid, event.seq)
            messages.append(message)
    return messages


def test_two_processes_with_fifty_sessions_each_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "store" / "s.sqlite3")
    writers = [
        child(WRITER, path, tag, str(SESSIONS_PER_PROCESS), str(ROUNDS), ",".join(SHARED))
        for tag in ("a", "b")
    ]
    for proc in writers:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in writers:  # both open the fresh file and start writing together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in writers:
        out, err = proc.communicate()
        # A BUSY/locked error anywhere would have exited 3 with its traceback on stderr.
        assert (proc.returncode, out, err) == (0, "done\n", "")

    store = Store(path)
    assert len(store.list_sessions()) == 2 * SESSIONS_PER_PROCESS + len(SHARED)
    for tag in ("a", "b"):
        for i in range(SESSIONS_PER_PROCESS):
            sid = f"{tag}-{i}"
            texts = [m.text for m in check_session(store, sid)]
            said = [t for t in texts if t.startswith(f"{sid}|")]
            assert said == [f"{sid}|{r}|{k}" for r in range(ROUNDS) for k in range(2)]
            assert len(texts) == len(said) + ROUNDS // 3  # plus one summary per compaction
    for sid in SHARED:
        texts = [m.text for m in check_session(store, sid)]
        for tag in ("a", "b"):  # interleaved between writers, in order within each
            assert [t for t in texts if t.startswith(f"{tag}|")] == [
                f"{tag}|{r}" for r in range(ROUNDS)
            ]
        assert len(texts) == 2 * ROUNDS
    store.close()


OPENER = textwrap.dedent(
    """
    import sys, traceback
    from dsh_sidecar.model import SessionHeader
    from dsh_sidecar.sessions.store import Store

    print("ready", flush=True)
    sys.stdin.readline()
    try:
        for k in range(int(sys.argv[2])):
            store = Store(f"{sys.argv[1]}/{k}.sqlite3")
            store.create_session(SessionHeader(sys.argv[3], 0, "/w"))
            store.close()
    except BaseException:
        traceback.print_exc()
        sys.exit(3)
    print("done", flush=True)
    """
)


def test_processes_racing_to_create_the_same_fresh_stores(tmp_path: Path) -> None:
    # Turning a new file into a WAL database takes an exclusive lock that SQLite does not wait
    # for; every process here races every other one on each of forty brand-new files.
    files = 40
    openers = [child(OPENER, str(tmp_path), str(files), f"p{i}") for i in range(6)]
    for proc in openers:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in openers:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in openers:
        out, err = proc.communicate()
        assert (proc.returncode, out, err) == (0, "done\n", "")
    for k in range(files):
        store = Store(str(tmp_path / f"{k}.sqlite3"))
        assert store.pragma("journal_mode") == "wal"
        assert sorted(h.id for h in store.list_sessions()) == [f"p{i}" for i in range(6)]
        store.close()


MIGRATOR = textwrap.dedent(
    """
    import sys, traceback
    from dsh_sidecar.sessions.store import Store

    print("ready", flush=True)
    sys.stdin.readline()
    try:
        for k in range(int(sys.argv[2])):
            store = Store(f"{sys.argv[1]}/{k}.sqlite3")
            print(store.migrated_from, flush=True)
            store.close()
    except BaseException:
        traceback.print_exc()
        sys.exit(3)
    """
)


def test_processes_racing_to_open_old_stores_migrate_each_once(tmp_path: Path) -> None:
    files, processes = 20, 4
    for k in range(files):
        schema_1_store(tmp_path / f"{k}.sqlite3")
    before = schema_1_rows(schema_1_store(tmp_path / "untouched.db"))
    openers = [child(MIGRATOR, str(tmp_path), str(files)) for _ in range(processes)]
    for proc in openers:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in openers:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    reports = []
    for proc in openers:
        out, err = proc.communicate()
        assert (proc.returncode, err) == (0, "")
        reports.append(out.split())
    for k in range(files):
        # One process found schema 1 and migrated; every other one found it already done.
        assert sorted(report[k] for report in reports) == ["1"] + ["None"] * (processes - 1)
        path = tmp_path / f"{k}.sqlite3"
        assert schema_1_rows(path) == before
        store = Store(str(path))
        assert store.migrated_from is None
        for sid in ("session-a", "session-b"):
            check_session(store, sid)
        store.close()


STREAMER = textwrap.dedent(
    """
    import sys
    from dsh_sidecar.model import Message, SessionHeader, USER_MESSAGE, SESSION_TITLE
    from dsh_sidecar.sessions.inbox import splice_draft
    from dsh_sidecar.sessions.store import EventDraft, Store

    store = Store(sys.argv[1])
    sid = "victim"
    store.create_session(SessionHeader(sid, 0, "/w"))
    inbox = store.inbox(sid)
    n = 0
    while True:
        n += 1
        drafts = [
            EventDraft(USER_MESSAGE, Message.user([f"{sys.argv[2]}:{n}:{k}"], {"kind": "user"}).to_json(), "append")
            for k in range(1 + n % 3)
        ]
        if n % 4 == 0:
            drafts.append(EventDraft(SESSION_TITLE, {"title": f"{sys.argv[2]}:{n}"}))
        new_inbox = inbox[-2:] + [Message.user([f"q{n}"], {"kind": "user"})]
        splice = splice_draft(inbox, new_inbox)
        events = store.append(sid, drafts + [splice], inbox=new_inbox)
        inbox = new_inbox
        if n % 5 == 0 and store.surface_size(sid) >= 3:
            events.append(store.compact(sid, Message.user([f"{sys.argv[2]}:{n}:sum"], {"kind": "user"}), 1, 2))
        for event in events:
            text = event.message().text if event.type == USER_MESSAGE else event.type
            print(event.seq, text, flush=True)
    """
)


def test_a_writer_killed_mid_stream_loses_no_acknowledged_event(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite3")
    acked: dict[int, str] = {}
    for run in range(6):
        proc = child(STREAMER, path, f"run{run}")
        assert proc.stdout is not None
        target = 25 + 37 * run  # different kill points: mid-batch, mid-compaction, ...
        lines = 0
        while lines < target:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "writer died"
            seq, _, text = line.rstrip("\n").partition(" ")
            acked[int(seq)] = text
            lines += 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        for line in proc.stdout:  # acknowledgements already in the pipe still count
            seq, _, text = line.rstrip("\n").partition(" ")
            acked[int(seq)] = text
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
        if proc.stdin is not None:
            proc.stdin.close()

        db = sqlite3.connect(path)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for row in db.execute("SELECT data, surface_op, source_event_seqs FROM events"):
            json.loads(row[0])  # no torn row: every stored document parses
            for column in row[1:]:
                if column is not None:
                    json.loads(column)
        db.close()

        store = Store(path)  # the next writer's view, after WAL recovery
        check_session(store, "victim")
        log = {e.seq: e for e in store.events("victim")}
        for acked_seq, acked_text in acked.items():
            event = log[acked_seq]
            message = event.message()
            shown = message.text if message is not None else event.type
            assert shown == acked_text, acked_seq
        title_events = [e for e in log.values() if e.type == SESSION_TITLE]
        header = store.get_session("victim")
        assert header is not None
        assert header.title == (title_events[-1].data["title"] if title_events else None)
        store.close()


FULL_DISK = textwrap.dedent(
    """
    import os, resource, signal, sys
    from dsh_sidecar.model import Message, SessionHeader, USER_MESSAGE
    from dsh_sidecar.sessions.store import EventDraft, Store

    path = sys.argv[1]
    store = Store(path)
    store.create_session(SessionHeader("s", 0, "/w"))
    said = lambda text: EventDraft(USER_MESSAGE, Message.user([text], {"kind": "user"}).to_json(), "append")
    store.append("s", [said("before")])
    # Past the file-size limit write() fails with EFBIG instead of killing us: a full disk.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    room = max(os.path.getsize(path), os.path.getsize(path + "-wal")) + 4096
    resource.setrlimit(resource.RLIMIT_FSIZE, (room, hard))
    try:
        store.append("s", [said("big " + "x" * 300_000), said("lost")], inbox=[])
    except Exception as exc:
        print("refused", type(exc).__name__, flush=True)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    print("after", [e.seq for e in store.append("s", [said("after")])][0], flush=True)
    store.close()
    """
)


def test_a_commit_that_runs_out_of_disk_leaves_nothing_and_the_store_usable(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "s.sqlite3")
    proc = child(FULL_DISK, path)
    out, err = proc.communicate()
    assert (proc.returncode, err) == (0, "")
    assert out.splitlines() == ["refused OperationalError", "after 1"]
    store = Store(path)
    texts = [m.text for m in check_session(store, "s")]
    assert texts == ["before", "after"]
    store.close()

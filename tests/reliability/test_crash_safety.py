"""Crash safety of the durable log: SIGKILL mid-stream, then a new server on the same store.

Every ``dsh/session/append`` and ``dsh/step/prepare`` the client saw acknowledged must survive,
whole and in place; seqs stay contiguous; the stored inbox equals the replay of its splice
events. And two server processes sharing one store lose nothing.
"""

from __future__ import annotations

import os
import random
import threading
import uuid
from pathlib import Path
from typing import Any

from tests.support.reliability_rpc import RpcError, Server, ServerGone, all_events, server_env

from dsh_sidecar.model import Event
from dsh_sidecar.sessions.store import replay_inbox
from dsh_sidecar.sessions.surface import fold_surface

ROUNDS = 4 if os.environ.get("DSH_LONG_TESTS") != "1" else 12


def _user_event(text: str) -> tuple[str, dict[str, Any]]:
    message_id = str(uuid.uuid4())
    data = {
        "id": message_id,
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
    }
    return message_id, {"type": "user/message", "data": data}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("pkg rule\n")
    return root


def _drive_until_killed(
    server: Server,
    sid: str,
    root: Path,
    rng: random.Random,
    turn: list[int],
    acked: dict[int, str],
) -> None:
    """Appends, steps and touches as fast as acknowledged, until the server dies."""
    i = 0
    try:
        while True:
            i += 1
            if rng.random() < 0.7:
                ids, events = zip(
                    *[
                        _user_event(f"m{i}.{k} " * rng.randint(1, 200))
                        for k in range(rng.randint(1, 3))
                    ],
                    strict=True,
                )
                seqs = server.request(
                    "dsh/session/append", {"sessionId": sid, "events": list(events)}
                )["seqs"]
                acked.update(zip(seqs, ids, strict=True))
            else:
                turn[0] += 1
                if rng.random() < 0.5:  # leave a queued projection for the next step to claim
                    server.notify(
                        "dsh/tool/result",
                        {
                            "sessionId": sid,
                            "token": f"t{i}",
                            "name": "read",
                            "isError": False,
                            "arguments": {"file_path": str(root / "pkg" / "x.py")},
                        },
                    )
                prepared = server.request(
                    "dsh/step/prepare",
                    {
                        "sessionId": sid,
                        "turn": turn[0],
                        "step": 1,
                        "prompt": {"text": f"turn {turn[0]}"},
                    },
                )
                acked.update(
                    zip(prepared["seqs"], (m["id"] for m in prepared["messages"]), strict=True)
                )
                server.request("dsh/step/end", {"sessionId": sid, "turn": turn[0], "step": 1})
                server.request(
                    "dsh/turn/end", {"sessionId": sid, "turn": turn[0], "reason": "done"}
                )
    except (ServerGone, BrokenPipeError, ConnectionResetError):
        return


def _check_log(events: list[dict[str, Any]], acked: dict[int, str]) -> None:
    assert [e["seq"] for e in events] == list(range(len(events)))
    for seq, message_id in acked.items():
        assert seq < len(events), f"acknowledged seq {seq} lost"
        event = events[seq]
        message = event["data"] if event["type"] == "user/message" else event["data"].get("message")
        assert message["id"] == message_id, f"seq {seq} holds another event"
    for event in events:  # nothing torn: every message is whole
        if event["type"] == "user/message":
            assert isinstance(event["data"]["content"], list) and event["data"]["content"]
            assert all(isinstance(b["text"], str) for b in event["data"]["content"])


def test_sigkill_during_acknowledged_stream_loses_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    env = server_env(str(tmp_path / "home"))
    options = {"store": {"path": str(tmp_path / "store.sqlite3")}}
    rng = random.Random(20261202)
    sid = "crash-safety"
    acked: dict[int, str] = {}
    turn = [0]
    for _ in range(ROUNDS):
        server = Server(env)
        server.initialize(options)
        server.request("dsh/session/open", {"cwd": str(root), "sessionId": sid})
        killer = threading.Timer(rng.uniform(0.3, 1.5), server.proc.kill)
        killer.start()
        try:
            _drive_until_killed(server, sid, root, rng, turn, acked)
        finally:
            killer.cancel()
            server.kill()
    assert len(acked) > ROUNDS  # each round got work acknowledged before its kill
    server = Server(env)
    try:
        server.initialize(options)
        assert server.request("dsh/session/open", {"cwd": str(root), "sessionId": sid})["resumed"]
        events = all_events(server, sid)
        _check_log(events, acked)
        log = [Event(e["seq"], e["type"], e["time"], e["data"], e.get("surfaceOp")) for e in events]
        pending = server.request("dsh/context/pending", {"sessionId": sid})["messages"]
        assert pending == replay_inbox(log)
        surface = server.request("dsh/session/surface", {"sessionId": sid})["events"]
        assert [e["seq"] for e in surface] == fold_surface(log)
    finally:
        server.close()


def test_two_processes_fifty_sessions_each_share_one_store(tmp_path: Path) -> None:
    root = _project(tmp_path)
    env = server_env(str(tmp_path / "home"))
    options = {"store": {"path": str(tmp_path / "shared.sqlite3")}}
    servers = [Server(env), Server(env)]
    written: dict[str, list[str]] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(server: Server, name: str) -> None:
        try:
            for n in range(50):
                sid = f"{name}-{n}"
                server.request("dsh/session/open", {"cwd": str(root), "sessionId": sid})
                ids = []
                for k in range(4):
                    message_id, event = _user_event(f"{sid} event {k}")
                    server.request("dsh/session/append", {"sessionId": sid, "events": [event]})
                    ids.append(message_id)
                with lock:
                    written[sid] = ids
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    try:
        for server in servers:
            server.initialize(options)
        threads = [threading.Thread(target=work, args=(s, f"p{i}")) for i, s in enumerate(servers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not errors, errors
    finally:
        for server in servers:
            server.close()
    reader = Server(env)
    try:
        reader.initialize(options)
        sessions = reader.request("dsh/session/list", {})["sessions"]
        assert {s["id"] for s in sessions} == set(written) and len(written) == 100
        for sid, ids in written.items():
            events = all_events(reader, sid)
            assert [e["seq"] for e in events] == list(range(4))
            assert [e["data"]["id"] for e in events] == ids
    except RpcError as exc:
        raise AssertionError(exc.error) from exc
    finally:
        reader.close()

"""``serve --tcp`` and ``serve --socket`` as real processes with real clients on real sockets:
only the owner gets in, every connection is its own server, and stopping is clean.

The rules are docs/protocol.md, "Transport" and "Who may connect". The other local user is the
real uid ``nobody`` (a ``setpriv`` child running the system Python), never a simulation.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import stat
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.instrkit import shared_tmp
from tests.support.listening import NOBODY_PYTHON, Listening, options
from tests.support.reliability_rpc import HANG_GUARD, SERVE, RpcError, SocketPeer, server_env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Rules\n\n" + "Keep every function short. " * 20 + "\n")
    return root


@contextlib.contextmanager
def listening(base: Path, *flags: str, home: Path | None = None) -> Iterator[Listening]:
    server = Listening(base, *flags, home=home)
    try:
        yield server
    finally:
        server.kill()


def store_fds(pid: int, store: Path) -> int:
    """How many descriptors of the server point at the store file (a Store holds its writing
    connection and one reading connection per thread that has read)."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(store):
                count += 1
    return count


def closed_by_server(peer: SocketPeer) -> bool:
    return peer.closed.wait(HANG_GUARD)


# --- TCP ----------------------------------------------------------------------------------------


def test_tcp_announces_its_port_and_a_private_token_file(tmp_path: Path) -> None:
    with listening(tmp_path, "--tcp", "--port", "0") as server:
        info = server.info
        assert info["transport"] == "tcp" and info["host"] == "127.0.0.1"
        assert isinstance(info["port"], int) and info["port"] > 0
        token_file = tmp_path / "home" / "run" / f"tcp-{info['port']}.token"
        assert info["tokenFile"] == str(token_file)
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        content = token_file.read_text()
        assert len(content) == 65 and content.endswith("\n")
        int(content, 16)
        assert server.stop(signal.SIGTERM) == 128 + signal.SIGTERM
        assert not token_file.exists()
        assert server.stderr().endswith("dsh-sidecar: stopped by SIGTERM\n")
        assert "Traceback" not in server.stderr()
        assert server.proc.stdout is not None and server.proc.stdout.read() == b""


@pytest.mark.parametrize(
    ("opener", "reply_id", "message"),
    [
        (
            {"jsonrpc": "2.0", "id": 1, "method": "dsh/session/list", "params": {}},
            1,
            "Unauthorized: the first message must be initialize with initializationOptions.authToken",
        ),
        (
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            None,
            "Unauthorized: the first message must be initialize with initializationOptions.authToken",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            },
            2,
            "Unauthorized: initializationOptions.authToken is missing",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": None,
                    "capabilities": {},
                    "initializationOptions": {"authToken": "0" * 64},
                },
            },
            3,
            "Unauthorized: initializationOptions.authToken does not match",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": None,
                    "capabilities": {},
                    "initializationOptions": {"authToken": 12345},
                },
            },
            4,
            "Unauthorized: initializationOptions.authToken does not match",
        ),
    ],
)
def test_tcp_refuses_and_closes_anything_but_initialize_with_the_token(
    tmp_path: Path, project: Path, opener: dict[str, Any], reply_id: int | None, message: str
) -> None:
    with listening(tmp_path, "--tcp", "--port", "0") as server:
        peer = server.connect()
        if reply_id is None:
            peer.send(opener)
            answer = peer.orphan()
        else:
            waiting = peer.expect(reply_id)
            peer.send(opener)
            answer = waiting.get(timeout=HANG_GUARD)
        assert answer == {
            "jsonrpc": "2.0",
            "id": reply_id,
            "error": {
                "code": -32600,
                "message": message,
                "data": {"code": "unauthorized"},
            },
        }
        assert closed_by_server(peer)
        peer.close()
        # The owner still gets in, and the refused connection was served nothing.
        owner = server.client(options(tmp_path))
        assert owner.request("dsh/session/list", {})["sessions"] == []
        owner.close()
        assert "Traceback" not in server.stderr()


def test_tcp_refuses_garbage_and_big_bodies_before_authentication(tmp_path: Path) -> None:
    with listening(tmp_path, "--tcp", "--port", "0") as server:
        garbage = server.connect()
        garbage.send_raw(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        error = garbage.orphan()
        assert error["error"]["code"] == -32700 and error["error"]["data"] == {
            "code": "invalid-header"
        }
        assert closed_by_server(garbage)
        # Before the token, a body is held to 64 KiB whatever --max-message-bytes says.
        big = server.connect()
        big.send_raw(b"Content-Length: %d\r\n\r\n" % (1024 * 1024))
        error = big.orphan()
        assert error["error"]["data"] == {"code": "message-too-large"}
        assert (
            error["error"]["message"] == "Content-Length 1048576 is over the limit of 65536 bytes"
        )
        assert closed_by_server(big)
        assert "Traceback" not in server.stderr()


def test_tcp_a_session_opened_before_authentication_is_never_opened(
    tmp_path: Path, project: Path
) -> None:
    with listening(tmp_path, "--tcp", "--port", "0") as server:
        sneaky = server.connect()
        sneaky.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "dsh/session/open",
                "params": {"cwd": str(project), "sessionId": "sneaky"},
            }
        )
        assert closed_by_server(sneaky)
        owner = server.client(options(tmp_path))
        assert owner.request("dsh/session/list", {})["sessions"] == []
        owner.close()


def test_tcp_connections_are_separate_servers(tmp_path: Path, project: Path) -> None:
    own_store = tmp_path / "leaver.sqlite3"
    with listening(tmp_path, "--tcp", "--port", "0") as server:
        wide = server.client(options(tmp_path))
        narrow = server.client(options(tmp_path, maxBytes=64))
        # Each connection keeps its own settings.
        assert (
            "Keep every function short."
            in wide.request("dsh/context/preview", {"cwd": str(project)})["text"]
        )
        narrow_text = narrow.request("dsh/context/preview", {"cwd": str(project)})["text"]
        assert "Keep every function short. " * 20 not in narrow_text
        # The same request ids on both connections, interleaved: each gets its own answers.
        calls: list[tuple[str, SocketPeer, int, queue.Queue[dict[str, Any]]]] = []
        for name, peer in (("wide", wide), ("narrow", narrow)) * 3:
            calls.append(
                (
                    name,
                    peer,
                    *peer.start(
                        "dsh/session/open",
                        {"cwd": str(project), "sessionId": f"{name}-{len(calls)}"},
                    ),
                )
            )
        for name, peer, msg_id, waiting in calls:
            assert peer.wait(msg_id, waiting)["session"]["id"].startswith(name)
        assert wide.orphans.empty() and narrow.orphans.empty()
        # Live sessions are per connection: the other one does not have them.
        # The other connection sees only what the store holds of them (dsh/context/pending of a
        # session not live here), and cannot drive them.
        assert narrow.request("dsh/context/pending", {"sessionId": "wide-0"}) == {"messages": []}
        with pytest.raises(RpcError) as foreign:
            narrow.request("dsh/session/close", {"sessionId": "wide-0"})
        assert foreign.value.error["data"]["code"] == "unknown-session"
        assert "not open in this sidecar" in foreign.value.error["message"]
        assert narrow.request("dsh/context/pending", {"sessionId": "narrow-1"}) == {"messages": []}

        # A client that just goes away takes only its own server with it: its sessions and its
        # store are released. (It uses a store of its own: SQLite keeps a file's descriptors
        # open while another connection of the same process holds locks on that file.)
        leaver = server.client({**options(tmp_path), "store": {"path": str(own_store)}})
        leaver.request("dsh/session/open", {"cwd": str(project), "sessionId": "leaver"})
        assert store_fds(server.proc.pid, own_store) >= 1
        leaver.close()
        released = _eventually(lambda: store_fds(server.proc.pid, own_store) == 0)
        assert released, "the departed connection's store is still open"
        assert narrow.request("dsh/session/list", {})["sessions"]
        wide.close()

        # exit ends only the connection it came on.
        third = server.client(options(tmp_path))
        assert third.request("shutdown") is None
        third.notify("exit")
        assert closed_by_server(third)
        assert narrow.request("dsh/context/pending", {"sessionId": "narrow-1"}) == {"messages": []}
        assert server.proc.poll() is None
        narrow.close()
        assert server.stop(signal.SIGINT) == 128 + signal.SIGINT
        assert server.stderr().endswith("dsh-sidecar: stopped by SIGINT\n")
        assert "Traceback" not in server.stderr()


def _eventually(check: Any) -> bool:
    import time

    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_tcp_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*SERVE, "--tcp", "--port", str(port)],
            capture_output=True,
            timeout=HANG_GUARD,
            env=server_env(str(tmp_path / "home")),
            check=False,
        )
    assert (done.returncode, done.stdout) == (1, b"")
    assert (
        done.stderr.decode()
        == f"dsh-sidecar: cannot listen on 127.0.0.1:{port}: address already in use\n"
    )
    assert not (tmp_path / "home" / "run" / f"tcp-{port}.token").exists()


_AS_NOBODY = textwrap.dedent(
    """
    import json, socket, sys
    token_file, port = sys.argv[1], int(sys.argv[2])
    out = {}
    try:
        open(token_file).read()
        out["read"] = "read it"
    except OSError as exc:
        out["read"] = type(exc).__name__

    def attempt(options):
        try:
            sock = socket.create_connection(("127.0.0.1", port), 60)
        except ConnectionResetError:
            return {"reset": True}
        if options is not None:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": None, "capabilities": {},
                "initializationOptions": options}}).encode()
            sock.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        data = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:
            # The server refuses with a reset after its answer (no TIME_WAIT left behind).
            if not data:
                return {"reset": True}
        finally:
            sock.close()
        return json.loads(data.split(b"\\r\\n\\r\\n", 1)[1])

    out["silent"] = attempt(None)
    out["without"] = attempt({})
    out["guessed"] = attempt({"authToken": "f" * 64})
    print(json.dumps(out))
    """
)


def run_as_nobody(code: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            NOBODY_PYTHON,
            "-c",
            code,
            *args,
        ],
        capture_output=True,
        timeout=HANG_GUARD,
        check=False,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_another_user_cannot_read_the_token_and_is_refused(tmp_path: Path) -> None:
    """Another uid is turned away at the door, before its bytes are read: the first of a quiet
    spell reads the refusal; the next ones, counted as a wave, are refused with a reset (which
    may come before they have even sent anything, or after the refusal), and none is served."""
    refused = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": f"Unauthorized: this port serves uid {os.geteuid()} only",
            "data": {"code": "unauthorized"},
        },
    }
    with (
        shared_tmp() as shared,
        listening(tmp_path, "--tcp", "--port", "0", home=shared / "home") as server,
    ):
        token_file = Path(server.info["tokenFile"])
        out = run_as_nobody(_AS_NOBODY, str(token_file), str(server.info["port"]))
        assert out["read"] == "PermissionError"  # the run directory is 0700
        assert out["silent"] == refused
        for attempt in ("without", "guessed"):
            assert out[attempt] in (refused, {"reset": True}), out
        # Even with the directory opened up, the file itself is the owner's only.
        token_file.parent.chmod(0o755)
        out = run_as_nobody(_AS_NOBODY, str(token_file), str(server.info["port"]))
        assert out["read"] == "PermissionError"
        assert server.stop() == 128 + signal.SIGTERM
        assert not token_file.exists()
        # Three refusals are two log lines at most: the first, then a summary.
        assert server.stderr().count("refused") <= 2, server.stderr()


# --- Unix sockets -------------------------------------------------------------------------------


def test_unix_socket_is_private_and_serves_separate_connections(
    tmp_path: Path, project: Path
) -> None:
    path = tmp_path / "fresh" / "dir" / "dsh.sock"
    with listening(tmp_path, "--socket", str(path)) as server:
        assert server.info == {"transport": "unix", "path": str(path)}
        assert stat.S_ISSOCK(path.lstat().st_mode)
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600
        for directory in (path.parent, path.parent.parent):
            assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        # No token on a Unix socket; one sent anyway is ignored, never parsed as a setting.
        first = server.client({**options(tmp_path), "authToken": "ignored"})
        second = server.client(options(tmp_path))
        first.request("dsh/session/open", {"cwd": str(project), "sessionId": "first"})
        with pytest.raises(RpcError) as foreign:
            second.request("dsh/session/close", {"sessionId": "first"})
        assert foreign.value.error["data"]["code"] == "unknown-session"
        first.notify("exit")
        assert closed_by_server(first)
        assert second.request("dsh/session/list", {})["sessions"]
        second.close()
        assert server.stop(signal.SIGINT) == 128 + signal.SIGINT
        assert not path.exists()
        assert "Traceback" not in server.stderr()


_PEER_AS_NOBODY = textwrap.dedent(
    """
    import json, socket, sys
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(sys.argv[1])
    except OSError as exc:
        print(json.dumps({"connect": type(exc).__name__}))
        raise SystemExit(0)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    print(json.dumps({"connect": "ok", "answer": json.loads(data.split(b"\\r\\n\\r\\n", 1)[1])}))
    """
)


def test_unix_socket_refuses_another_uid_even_when_it_can_connect(tmp_path: Path) -> None:
    with shared_tmp() as shared:
        path = shared / "sock" / "dsh.sock"
        with listening(tmp_path, "--socket", str(path)) as server:
            # The 0700 directory keeps nobody away from the socket file...
            assert run_as_nobody(_PEER_AS_NOBODY, str(path)) == {"connect": "PermissionError"}
            # ...and with the directory and the socket opened up, SO_PEERCRED still does.
            path.parent.chmod(0o755)
            path.chmod(0o666)
            out = run_as_nobody(_PEER_AS_NOBODY, str(path))
            uid = os.geteuid()
            assert out == {
                "connect": "ok",
                "answer": {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32600,
                        "message": f"Unauthorized: this socket serves uid {uid} only",
                        "data": {"code": "unauthorized"},
                    },
                },
            }
            owner = server.client(options(tmp_path))
            assert owner.request("dsh/session/list", {})["sessions"] == []
            owner.close()


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775])
def test_unix_socket_refuses_a_directory_others_can_write(tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    done = subprocess.run(
        [*SERVE, "--socket", str(shared / "dsh.sock")],
        capture_output=True,
        timeout=HANG_GUARD,
        env=server_env(str(tmp_path / "home")),
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        f"dsh-sidecar: {shared} is writable by other users; use a directory only you can write\n"
    )
    assert not (shared / "dsh.sock").exists()


def test_unix_socket_replaces_a_stale_socket_but_not_a_live_one_or_a_file(tmp_path: Path) -> None:
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    stale = directory / "dsh.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(stale))
    dead.close()  # the file stays, nobody listens: what a killed server leaves
    assert stat.S_ISSOCK(stale.lstat().st_mode)
    with listening(tmp_path, "--socket", str(stale)) as server:
        peer = server.client(options(tmp_path))
        assert peer.request("dsh/session/list", {})["sessions"] == []
        peer.close()
        second = subprocess.run(
            [*SERVE, "--socket", str(stale)],
            capture_output=True,
            timeout=HANG_GUARD,
            env=server_env(str(tmp_path / "home")),
            check=False,
        )
        assert second.returncode == 1
        assert second.stderr.decode() == f"dsh-sidecar: {stale} is in use by a running server\n"
        assert server.proc.poll() is None
    regular = directory / "notes.txt"
    regular.write_text("keep me")
    done = subprocess.run(
        [*SERVE, "--socket", str(regular)],
        capture_output=True,
        timeout=HANG_GUARD,
        env=server_env(str(tmp_path / "home")),
        check=False,
    )
    assert done.returncode == 1
    assert (
        done.stderr.decode()
        == f"dsh-sidecar: {regular} exists and is not a socket; refusing to replace it\n"
    )
    assert regular.read_text() == "keep me"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_symlink_planted_as_the_token_file_is_replaced_not_followed(tmp_path: Path) -> None:
    port = _free_port()
    run = tmp_path / "home" / "run"
    run.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (run / f"tcp-{port}.token").symlink_to(victim)
    with listening(tmp_path, "--tcp", "--port", str(port)) as server:
        token_file = Path(server.info["tokenFile"])
        assert not token_file.is_symlink() and token_file.is_file()
        assert victim.read_text() == "precious\n"
        assert server.stop() == 128 + signal.SIGTERM
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("case", ["symlink", "other-owner", "shared-home"])
def test_an_unsafe_token_directory_is_refused(tmp_path: Path, case: str) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    run = home / "run"
    if case == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        run.symlink_to(tmp_path / "elsewhere")
        reason = f"{run} is a symbolic link; a private directory is needed here"
    elif case == "other-owner":
        run.mkdir(mode=0o700)
        os.chown(run, 65534, 65534)
        reason = f"{run} belongs to uid 65534, not to this user"
    else:
        home.chmod(0o777)
        reason = f"{home} is writable by other users; use a directory only you can write"
    done = subprocess.run(
        [*SERVE, "--tcp", "--port", "0"],
        capture_output=True,
        timeout=HANG_GUARD,
        env=server_env(str(home)),
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == f"dsh-sidecar: {reason}\n"


def test_an_open_token_directory_of_ours_is_tightened(tmp_path: Path) -> None:
    run = tmp_path / "home" / "run"
    run.mkdir(parents=True)
    run.chmod(0o755)
    with listening(tmp_path, "--tcp", "--port", "0") as server:
        assert stat.S_IMODE(run.stat().st_mode) == 0o700
        assert Path(server.info["tokenFile"]).parent == run

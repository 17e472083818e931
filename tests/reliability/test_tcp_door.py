"""The TCP door when the process runs out of descriptors: accepting pauses (no busy loop, a
bounded log), and the connections that waited in the kernel's backlog are served once
descriptors are free again (docs/protocol.md, "Who may connect").

The door runs in a child process of its own, whose descriptor limit is lowered and then used up;
the clients are this test process, on real loopback sockets.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap

from reliability_rpc import HANG_GUARD

_DOOR = textwrap.dedent(
    """
    import asyncio, concurrent.futures.thread, json, logging, os, resource, socket, sys
    from dsh_sidecar.lsp.rpc.tcp import Door

    lines = []
    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
    logging.getLogger().addHandler(Keep())
    logging.getLogger().setLevel(logging.INFO)

    class Counting(socket.socket):
        accepts = 0
        def accept(self):
            Counting.accepts += 1
            return super().accept()

    async def main():
        sock = Counting(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        served = []
        async def serve(conn, authenticated):
            served.append(conn.getpeername()[1])
            authenticated()
            conn.close()
        door = Door(sock, serve)
        door.open()
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        filler = []
        try:
            while True:
                filler.append(os.open("/dev/null", os.O_RDONLY))
        except OSError:
            pass
        print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # clients in
        await asyncio.sleep(2.0)  # out of descriptors all along
        starved = {"accepts": Counting.accepts, "served": len(served), "log": list(lines)}
        for fd in filler:
            os.close(fd)
        for _ in range(200):
            if len(served) >= 5:
                break
            await asyncio.sleep(0.05)
        await door.close()
        print(json.dumps({"starved": starved, "served": len(served), "log": lines}), flush=True)

    asyncio.run(main())
    """
)


def test_out_of_descriptors_pauses_accepting_then_serves_the_backlog() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _DOOR], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    clients = []
    try:
        assert child.stdout is not None and child.stdin is not None
        port = json.loads(child.stdout.readline())["port"]
        for _ in range(5):
            clients.append(socket.create_connection(("127.0.0.1", port), HANG_GUARD))
        child.stdin.write("go\n")
        child.stdin.flush()
        report = json.loads(child.stdout.readline())
        child.wait(timeout=HANG_GUARD)
    finally:
        for client in clients:
            client.close()
        if child.poll() is None:
            child.kill()
            child.wait()
    starved = report["starved"]
    assert starved["served"] == 0, report
    # Two seconds without descriptors: a pause that grows to 1 s allows a handful of tries, where
    # a loop retrying at once would have made hundreds of thousands.
    assert 1 <= starved["accepts"] <= 20, report
    assert len(starved["log"]) <= 2, report  # the first refusal, maybe one summary
    assert all("EMFILE" in line for line in starved["log"]), report
    assert report["served"] == 5, report

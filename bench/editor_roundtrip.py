"""Round trips as an editor pays them, from a client that shares nothing with the server.

``bench/roundtrip.py`` times the product through ``bench/_rpc.py`` against the bench-only
``bench/noop`` of a pygls server; an outside client measured higher ratios (docs/benchmarks.md,
"What an editor pays"). This script is that outside client: it imports neither ``dsh_sidecar``
nor pygls, frames JSON-RPC itself over the servers' stdio and starts the product as an editor
does (``python -m dsh_sidecar serve``). The baseline is a do-nothing pygls server's
``textDocument/hover`` (``bench/bench_server.py --noop-only``), asked by the same client with the
same framing in the same run.

Framing, as the editors write it: every message on its own (a touch and the request after it are
two messages, never one batch), and with ``--writes split`` (the default) the header and the body
as two writes, as vscode-jsonrpc does; ``--writes joined`` writes each message at once, as
Neovim does. Answers are read in chunks into one buffer, the header matched without regard to
case, and every answer is decoded as JSON (an editor decodes what it receives). A body longer
than what has arrived is read in chunks joined once, as vscode-jsonrpc's buffer does.

The tree: a project of six levels (the root and five directories below it), a 2 KB ``AGENTS.md``
and ``CLAUDE.md`` at each, a source file one directory below the deepest level, and one live
session at the root that has taken its first step. Each round, in an order that rotates between
rounds so load hits every kind alike, after ``--warm-up`` untimed rounds:

* ``pygls_hover``    hover on the do-nothing pygls server (the baseline);
* ``hover``          hover on the deepest ``AGENTS.md``;
* ``scopes``         ``dsh/scopes`` of that file;
* ``touch_pending``  ``dsh/tool/result`` of a read of the source file (a notification), then
  ``dsh/context/pending`` of the session: from the first byte written to the pending answer.

Then depth: chains of ``--shallow`` and ``--deep`` levels (an ``AGENTS.md`` at each, a budget that
holds them all), ``dsh/context/preview`` of the bottom directory plus ``dsh/scopes`` of the file
there, warm (asked again with nothing changed), alternating between the chains. Both are asked
with ``compactPaths`` and the paths put back on receipt, as both editors do (docs/protocol.md,
"Compact paths"); ``--paths full`` asks for every path in full, as the CLI's ``--json`` does.

Targets (issue 31): hover and scopes p50 at most 1.2x pygls' hover, touch + pending at most 1.5x,
depth at most 12x.

    .venv/bin/python bench/editor_roundtrip.py [--rounds 400] [--writes split|joined]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, percentile, report  # timing helpers only: no client code is shared

HERE = os.path.dirname(os.path.abspath(__file__))
LEVELS = 6
FILE_BYTES = 2048
DEPTH_BUDGET = 16 * 1024 * 1024
# A recording that saw a change less than two seconds old is never kept (docs/architecture.md).
SETTLE_SECONDS = 2.1
TARGETS = {"hover": 1.2, "scopes": 1.2, "touch_pending": 1.5}
DEPTH_TARGET = 12.0
HEADER_END = b"\r\n\r\n"


class Peer:
    """One server process and this client's own JSON-RPC framing over its stdin and stdout."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], split_writes: bool) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._split = split_writes
        self._buffer = bytearray()
        self._next_id = 0

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view) :]

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        header = b"Content-Length: %d\r\n\r\n" % len(body)
        if self._split:
            self._write_all(header)
            self._write_all(body)
        else:
            self._write_all(header + body)

    def _fill(self) -> None:
        chunk = os.read(self._out, 1 << 16)
        if not chunk:
            raise EOFError("the server closed its stdout")
        self._buffer += chunk

    def receive(self) -> dict[str, Any]:
        while (end := self._buffer.find(HEADER_END)) < 0:
            self._fill()
        length = None
        for line in bytes(self._buffer[:end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length is None:
            raise ValueError(f"no Content-Length in {bytes(self._buffer[:end])!r}")
        start = end + len(HEADER_END)
        body = bytes(self._buffer[start : start + length])
        del self._buffer[: start + length]
        if len(body) < length:
            body = self._rest_of_body(body, length)
        message: dict[str, Any] = json.loads(body)
        return message

    def _rest_of_body(self, head: bytes, length: int) -> bytes:
        """The rest of a body longer than what has arrived, read in chunks kept apart and joined
        once, as vscode-jsonrpc's message buffer does: appending each chunk to one buffer
        copies a megabyte answer (a deep chain's) over and over as the buffer grows."""
        chunks, have = [head], len(head)
        while have < length:
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                raise EOFError("the server closed its stdout")
            chunks.append(chunk)
            have += len(chunk)
        whole = b"".join(chunks)
        self._buffer += whole[length:]
        return whole[:length]

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        msg_id = self._next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if "method" in message:
                if "id" in message:  # a request of the server's: answer it as an editor would
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if message.get("id") == msg_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result")

    def initialize(self, options: dict[str, Any], root: str | None) -> None:
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None if root is None else uri(root),
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (OSError, EOFError, RuntimeError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def uri(path: str) -> str:
    return "file://" + quote(path)


def build_tree(base: str) -> tuple[str, str, str]:
    """The six-level project: its root, the deepest AGENTS.md, a source file below it."""
    root = os.path.join(base, "proj")
    os.makedirs(os.path.join(root, ".git"))
    directory = root
    for level in range(LEVELS):
        if level:
            directory = os.path.join(directory, f"level{level}")
            os.mkdir(directory)
        for name in ("AGENTS.md", "CLAUDE.md"):
            head = f"# {name} at level {level}\n"
            line = "- Keep functions small and name them for what they do.\n"
            text = head + line * ((FILE_BYTES - len(head)) // len(line))
            with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
                fh.write(text)
    below = os.path.join(directory, "src")
    os.mkdir(below)
    source = os.path.join(below, "main.py")
    with open(source, "w", encoding="utf-8") as fh:
        fh.write("print('hi')\n")
    return root, os.path.join(directory, "AGENTS.md"), source


def build_chain(base: str, depth: int) -> str:
    """A chain ``depth`` levels deep, an AGENTS.md at each; its bottom directory."""
    directory = os.path.join(base, f"chain{depth}")
    os.makedirs(os.path.join(directory, ".git"))
    for level in range(depth):
        if level:
            directory = os.path.join(directory, "d")
            os.mkdir(directory)
        with open(os.path.join(directory, "AGENTS.md"), "w", encoding="utf-8") as fh:
            fh.write(f"Level {level}: keep it short.\n")
    with open(os.path.join(directory, "x.py"), "w", encoding="utf-8") as fh:
        fh.write("x = 1\n")
    return directory


def churn(directory: str, every: float, stop: threading.Event) -> None:
    """Another program's temporary file in ``directory``, made and removed now and then."""
    name = os.path.join(directory, "another-program.tmp")
    while not stop.wait(every):
        with open(name, "w", encoding="utf-8") as fh:
            fh.write("x")
        os.unlink(name)


def expanded(result: dict[str, Any]) -> dict[str, Any]:
    """A ``compactPaths`` answer with each file's ``displayPath`` and ``path`` put back, by the
    rule of docs/protocol.md ("Compact paths"), as both editors do on receipt."""
    root = result["projectRoot"]
    for file in result["files"]:
        if "displayPath" not in file:
            directory, _, name = file["scope"].partition("\0")
            file["displayPath"] = name if directory == "." else f"{directory}/{name}"
        if "path" not in file:
            file["path"] = f"{root}/{file['displayPath']}"
    return result


def chain_requests(peer: Peer, bottom: str, compact: bool) -> tuple[Any, Any]:
    """``dsh/context/preview`` of ``bottom`` and ``dsh/scopes`` of its source file, asked and
    read as an editor does (compact paths put back on receipt)."""
    extra = {"compactPaths": True} if compact else {}
    preview = peer.request("dsh/context/preview", {"cwd": bottom, **extra})
    scopes = peer.request("dsh/scopes", {"uri": uri(bottom + "/x.py"), **extra})
    if compact:
        return expanded(preview), expanded(scopes)
    return preview, scopes


def timed(peer: Peer, notifications: Sequence[tuple[str, Any]], method: str, params: Any) -> float:
    start = time.perf_counter()
    for name, note in notifications:
        peer.notify(name, note)
    peer.request(method, params)
    return time.perf_counter() - start


def measure_depth(
    argv: Sequence[str],
    env: dict[str, str],
    split: bool,
    base: str,
    bottoms: dict[int, str],
    rounds: int,
    compact: bool,
) -> dict[str, list[float]]:
    """Warm preview + scopes of each chain's bottom, alternating, on a server of its own (with a
    budget that holds every level of both chains)."""
    samples: dict[str, list[float]] = {}
    product = Peer(argv, env, split)
    try:
        product.initialize(
            {
                "store": {"path": os.path.join(base, ".dsh", "depth.sqlite3")},
                "instructions": {"maxBytes": DEPTH_BUDGET},
            },
            None,
        )
        depths = sorted(bottoms)
        for depth in depths:  # every level is in each answer, with its paths
            preview, scopes = chain_requests(product, bottoms[depth], compact)
            for found in (preview["files"], scopes["files"]):
                assert len(found) == depth, len(found)
                assert found[-1]["path"] == os.path.join(bottoms[depth], "AGENTS.md")
        time.sleep(SETTLE_SECONDS)
        for round_ in range(rounds + 1):
            for depth in depths if round_ % 2 == 0 else depths[::-1]:
                start = time.perf_counter()
                chain_requests(product, bottoms[depth], compact)
                if round_:  # the first round records the kept answers
                    samples.setdefault(f"depth_{depth}", []).append(time.perf_counter() - start)
    finally:
        product.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warm-up", type=int, default=100)
    parser.add_argument("--writes", choices=("split", "joined"), default="split")
    parser.add_argument("--shallow", type=int, default=100)
    parser.add_argument("--deep", type=int, default=1000)
    parser.add_argument("--depth-rounds", type=int, default=21)
    parser.add_argument(
        "--paths",
        choices=("compact", "full"),
        default="compact",
        help="depth: ask with compactPaths and put the paths back, as both editors do (default), "
        "or ask for every path in full, as the CLI's --json and older clients do",
    )
    parser.add_argument(
        "--churn",
        type=float,
        default=0.0,
        help="every this many seconds, a file is made and removed in the home directory, two "
        "levels above the project (as other programs do there, or in a shared /tmp); 0: never",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated kinds to time (default: all); pygls_hover is always timed",
    )
    parser.add_argument(
        "--server",
        default=None,
        help="the product's command (default: this Python's -m dsh_sidecar serve)",
    )
    args = parser.parse_args()
    split = args.writes == "split"
    product_argv = (
        args.server.split() if args.server else [sys.executable, "-m", "dsh_sidecar", "serve"]
    )
    pygls_argv = [sys.executable, os.path.join(HERE, "bench_server.py"), "--noop-only"]
    base = tempfile.mkdtemp(prefix="dsh-editor-bench-")
    samples: dict[str, list[float]] = {}
    try:
        # As on a workstation: the home directory (where other programs come and go) holds the
        # sidecar's own directory and, a level down, the projects.
        src = os.path.join(base, "src")
        os.mkdir(src)
        root, agents, source = build_tree(src)
        bottoms = {depth: build_chain(src, depth) for depth in (args.shallow, args.deep)}
        home = os.path.join(base, ".dsh")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        product = Peer(product_argv, env, split)
        pygls = Peer(pygls_argv, env, split)
        try:
            pygls.initialize({}, root)
            product.initialize({"store": {"path": os.path.join(home, "sessions.sqlite3")}}, root)
            with open(agents, encoding="utf-8") as fh:
                text = fh.read()
            opened = {
                "textDocument": {
                    "uri": uri(agents),
                    "languageId": "markdown",
                    "version": 1,
                    "text": text,
                }
            }
            product.notify("textDocument/didOpen", opened)
            pygls.notify("textDocument/didOpen", opened)
            sid = product.request("dsh/session/open", {"cwd": root})["session"]["id"]
            step = {"sessionId": sid, "turn": 1, "step": 1}
            product.request("dsh/step/prepare", {**step, "prompt": {"text": "hi"}})
            product.request("dsh/step/end", step)
            hover = {"textDocument": {"uri": uri(agents)}, "position": {"line": 0, "character": 2}}
            scopes = {"uri": uri(agents)}
            pending = {"sessionId": sid}
            tokens = iter(range(1 << 62))

            def touch() -> list[tuple[str, Any]]:
                return [
                    (
                        "dsh/tool/result",
                        {
                            "sessionId": sid,
                            "token": f"read-{next(tokens)}",
                            "name": "read",
                            "arguments": {"file_path": source},
                            "isError": False,
                        },
                    )
                ]

            # The answers are the real ones: a hover with the chain, every level in scopes, and
            # after the first touch the nested files pending (later touches change nothing).
            answer = product.request("textDocument/hover", hover)
            assert answer and "Place in the chain" in answer["contents"]["value"], answer
            assert len(product.request("dsh/scopes", scopes)["files"]) >= 2 * LEVELS
            assert pygls.request("textDocument/hover", hover) is None
            timed(product, touch(), "dsh/context/pending", pending)
            found = product.request("dsh/context/pending", pending)["messages"]
            assert len(found) == 1, found
            time.sleep(SETTLE_SECONDS)  # the kept answers are kept from here on

            stop = threading.Event()
            if args.churn > 0:
                threading.Thread(target=churn, args=(base, args.churn, stop), daemon=True).start()
            kinds: list[tuple[str, Any]] = [
                ("pygls_hover", lambda: timed(pygls, (), "textDocument/hover", hover)),
                ("hover", lambda: timed(product, (), "textDocument/hover", hover)),
                ("scopes", lambda: timed(product, (), "dsh/scopes", scopes)),
                ("touch_pending", lambda: timed(product, touch(), "dsh/context/pending", pending)),
            ]
            if args.only:
                wanted = {"pygls_hover", *args.only.split(",")}
                kinds = [(name, run) for name, run in kinds if name in wanted]
            samples = {name: [] for name, _ in kinds}
            for round_ in range(args.warm_up + args.rounds):
                shift = round_ % len(kinds)
                for name, run in kinds[shift:] + kinds[:shift]:
                    took = run()
                    if round_ >= args.warm_up:
                        samples[name].append(took)
            stop.set()
            found = product.request("dsh/context/pending", pending)["messages"]
            assert len(found) == 1, found  # the warm touches changed nothing
        finally:
            product.close()
            pygls.close()
        if args.depth_rounds:
            samples.update(
                measure_depth(
                    product_argv,
                    env,
                    split,
                    base,
                    bottoms,
                    args.depth_rounds,
                    args.paths == "compact",
                )
            )
    finally:
        # A 1,000-level chain is deeper than shutil.rmtree's recursion goes.
        subprocess.run(["rm", "-rf", base], check=True)

    stats = {name: (percentile(v, 50), percentile(v, 95)) for name, v in samples.items()}
    base50, base95 = stats["pygls_hover"]
    rows = [
        ("client", f"own framing, writes {args.writes}, {' '.join(product_argv[-3:])}"),
        ("rounds", f"{args.rounds} after {args.warm_up} warm-up, order rotating"),
        ("churn beside the project", f"every {args.churn:g} s" if args.churn > 0 else "none"),
    ]
    out: dict[str, Any] = {"rounds": args.rounds, "writes": args.writes, "churn": args.churn}
    for name, (p50, p95) in stats.items():
        rows.append((f"{name} p50 / p95", f"{ms(p50)} / {ms(p95)}"))
        out[f"{name}_p50_s"], out[f"{name}_p95_s"] = p50, p95
    for name, target in TARGETS.items():
        if name not in stats:
            continue
        r50, r95 = stats[name][0] / base50, stats[name][1] / base95
        rows.append(
            (f"{name} / pygls_hover", f"p50 {r50:.2f}x, p95 {r95:.2f}x  (target p50 <= {target})")
        )
        out[f"{name}_p50_ratio"], out[f"{name}_p95_ratio"] = r50, r95
    if args.depth_rounds:
        depth_ratio = stats[f"depth_{args.deep}"][0] / stats[f"depth_{args.shallow}"][0]
        rows.append(
            (
                f"depth {args.deep} / {args.shallow}",
                f"p50 {depth_ratio:.2f}x  (linear {args.deep / args.shallow:g}x; target <= {DEPTH_TARGET:g}x)",
            )
        )
        out["depth_ratio"] = depth_ratio
    report("editor_roundtrip", rows, out)


if __name__ == "__main__":
    main()

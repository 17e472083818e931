"""Hostile but legal depth: a 1,000-level chain, and touches of very deep missing paths (issue 14
target 3).

The project is a chain of ``--depth`` directories (``d/d/d/...``) with an AGENTS.md at every
level and a source file at the bottom; a second, small project (one AGENTS.md) sits beside it.
The real server (``bench/bench_server.py``: the product ``build_server()`` plus ``bench/noop``)
opens a session at the bottom of the chain and one at its root, with a byte budget
(``maxBytes`` 16 MiB) that holds every level, so each answer carries all 1,000 files. We time, each ``--repeat``
times (the median is printed, and every run):

* ``first_prepare``  step 1 of the bottom session: its baseline of every level;
* ``preview``        ``dsh/context/preview`` of the bottom directory;
* ``scopes``         ``dsh/scopes`` of the bottom source file;
* ``hover``          ``textDocument/hover`` on the bottom AGENTS.md;
* ``did_open``       ``textDocument/didOpen`` of the bottom source file, then
  ``dsh/context/pending`` of both sessions (the root session discovers all 1,000 levels);
* ``unrelated``      ``dsh/scopes`` of the small project, sent 50 ms after a deep ``dsh/hover``
  (so that one is under way): how long the small one waits for the deep one
  (``unrelated_alone`` is the same request with nothing in front of it). Nothing is shared
  between them, so this should be about the same as ``unrelated_alone``, not the deep time;
* ``same_project``   ``dsh/scopes`` of the chain's root directory, sent the same way behind a
  deep hover: a shallow request on the same project (``same_project_alone`` alone);
* ``touch_missing_N``  a ``dsh/tool/result`` read of a path ``N`` components deep that does not
  exist, below the cwd of a session at the small project's root (so the touch's cost is the
  path's, not a large chain's), then ``dsh/context/pending``, for N = 500, 1000, 2000, 4000:
  each doubling of N should at most double the time (linear), not quadruple it (quadratic).
  Components are one character, so 2000 of them stay within one path walk's limit and 4000
  (8,000 bytes) go past it, which a resolve must handle without a walk per component.

Every figure is also divided by ``bench/noop`` of the same run. Targets: first prepare, preview,
scopes, hover each < 1 s; ``unrelated`` and ``same_project`` close to their ``_alone``; a missing
touch twice as deep costing at most 2.5x (linear, with some noise).

    .venv/bin/python bench/deep_tree.py [--depth 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, report
from _rpc import Client, bench_server, file_uri

MISSING_DEPTHS = (500, 1000, 2000, 4000)
BUDGET = 16 * 1024 * 1024
HEAD_START = 0.05


def build_chain(base: str, depth: int) -> tuple[str, str]:
    root = os.path.join(base, "deep")
    os.makedirs(os.path.join(root, ".git"))
    directory = root
    for level in range(depth):
        if level:
            directory = os.path.join(directory, "d")
            os.mkdir(directory)
        with open(os.path.join(directory, "AGENTS.md"), "w", encoding="utf-8") as fh:
            fh.write(f"Level {level}: keep it short.\n")
    with open(os.path.join(directory, "x.py"), "w", encoding="utf-8") as fh:
        fh.write("x = 1\n")
    return root, directory


def build_small(base: str) -> str:
    root = os.path.join(base, "small")
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, "AGENTS.md"), "w", encoding="utf-8") as fh:
        fh.write("small rule\n")
    source = os.path.join(root, "y.py")
    with open(source, "w", encoding="utf-8") as fh:
        fh.write("y = 1\n")
    return source


def behind(client: Client, first: tuple[str, object], second: tuple[str, object]) -> float:
    """Send ``first``, give the server a moment to start on it, then send ``second``: the
    seconds from sending ``second`` until it is answered (the first may still be running)."""
    a = client.request_message(*first)
    b = client.request_message(*second)
    client.send(a)
    time.sleep(HEAD_START)
    start = time.perf_counter()
    client.send(b)
    done: dict[int, float] = {}
    while len(done) < 2:
        message = client.receive()
        if "method" in message:
            client._handle_server_message(message)
        elif message.get("id") in (a["id"], b["id"]):
            done[message["id"]] = time.perf_counter() - start
    return done[b["id"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="dsh-bench-")
    samples: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        samples.setdefault(name, []).append(seconds)
        print(f"  {name}: {ms(seconds)}", file=sys.stderr, flush=True)

    try:
        root, bottom = build_chain(base, args.depth)
        small = build_small(base)
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        agents, source = os.path.join(bottom, "AGENTS.md"), os.path.join(bottom, "x.py")
        for run in range(args.repeat):
            client = Client(bench_server(), env=env)
            try:
                # A budget that holds every level, so each answer carries (and proves) all of them.
                client.initialize(
                    {
                        "store": {"path": os.path.join(base, f"s{run}.sqlite3")},
                        "instructions": {"maxBytes": BUDGET},
                    },
                    root,
                )
                noop = [client.exchange([("bench/noop", None)]) for _ in range(50)]
                add("noop", statistics.median(noop))
                deep = client.request("dsh/session/open", {"cwd": bottom})["session"]["id"]
                top = client.request("dsh/session/open", {"cwd": root})["session"]["id"]
                step = {"sessionId": deep, "turn": 1, "step": 1}
                add(
                    "first_prepare",
                    client.exchange([("dsh/step/prepare", {**step, "prompt": {"text": "hi"}})]),
                )
                client.request("dsh/step/end", step)
                step = {"sessionId": top, "turn": 1, "step": 1}
                client.request("dsh/step/prepare", {**step, "prompt": {"text": "hi"}})
                client.request("dsh/step/end", step)
                add("preview", client.exchange([("dsh/context/preview", {"cwd": bottom})]))
                scopes = ("dsh/scopes", {"uri": file_uri(source)})
                add("scopes", client.exchange([scopes]))
                hover = (
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": file_uri(agents)},
                        "position": {"line": 0, "character": 0},
                    },
                )
                add("hover", client.exchange([hover]))
                opened = (
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": file_uri(source),
                            "languageId": "python",
                            "version": 1,
                            "text": "x = 1\n",
                        }
                    },
                )
                add(
                    "did_open",
                    client.exchange(
                        [
                            opened,
                            ("dsh/context/pending", {"sessionId": deep}),
                            ("dsh/context/pending", {"sessionId": top}),
                        ]
                    ),
                )
                changes = [
                    c
                    for m in client.request("dsh/context/pending", {"sessionId": top})["messages"]
                    for c in m["source"]["changes"]
                ]
                assert len(changes) == args.depth - 1, len(changes)
                small_scopes = ("dsh/scopes", {"uri": file_uri(small)})
                add(
                    "unrelated_alone",
                    statistics.median([client.exchange([small_scopes]) for _ in range(5)]),
                )
                cold = os.path.join(root, "AGENTS.md")  # an edit: the deep hover computes afresh
                with open(cold, "a", encoding="utf-8") as fh:
                    fh.write("edited\n")
                add("unrelated", behind(client, hover, small_scopes))
                shallow = ("dsh/scopes", {"uri": file_uri(os.path.join(root, "AGENTS.md"))})
                add(
                    "same_project_alone",
                    statistics.median([client.exchange([shallow]) for _ in range(5)]),
                )
                with open(cold, "a", encoding="utf-8") as fh:
                    fh.write("edited again\n")
                add("same_project", behind(client, hover, shallow))
                small_root = os.path.dirname(small)
                lone = client.request("dsh/session/open", {"cwd": small_root})["session"]["id"]
                step = {"sessionId": lone, "turn": 1, "step": 1}
                client.request("dsh/step/prepare", {**step, "prompt": {"text": "hi"}})
                client.request("dsh/step/end", step)
                for n in MISSING_DEPTHS:
                    missing = os.path.join(small_root, *(["m"] * n), "x.py")
                    result = (
                        "dsh/tool/result",
                        {
                            "sessionId": lone,
                            "token": f"t{n}",
                            "name": "read",
                            "arguments": {"file_path": missing},
                            "isError": False,
                        },
                    )
                    add(
                        f"touch_missing_{n}",
                        client.exchange([result, ("dsh/context/pending", {"sessionId": lone})]),
                    )
            finally:
                client.close()
    finally:
        # shutil.rmtree recurses once per level and cannot go this deep.
        subprocess.run(["rm", "-rf", base], check=True)
    t = {name: statistics.median(values) for name, values in samples.items()}
    noop_s = t["noop"]
    rows = [("chain", f"{args.depth} levels, an AGENTS.md at each; {args.repeat} runs")]
    out: dict[str, object] = {"depth": args.depth, "repeat": args.repeat}
    for name, values in samples.items():
        runs = ", ".join(ms(v) for v in values)
        rows.append((name, f"{ms(t[name])}  ({t[name] / noop_s:.1f}x noop; runs {runs})"))
        out[f"{name}_s"] = t[name]
    # Each doubling of the depth against the touch before it: at most 2x when linear (less while
    # the round trip's fixed part still shows), 4x when quadratic. Ratios of whole times: taking
    # the shallowest touch's time off first leaves differences of noise at these sizes.
    doubling = [
        t[f"touch_missing_{b}"] / t[f"touch_missing_{a}"]
        for a, b in itertools.pairwise(MISSING_DEPTHS)
    ]
    rows.append(
        (
            "missing touch, depth doubled",
            ", ".join(f"{x:.2f}x" for x in doubling)
            + "  (500 to 1000, to 2000, to 4000; linear: <= 2, quadratic: 4; target <= 2.5)",
        )
    )
    for name in ("unrelated", "same_project"):
        ratio = t[name] / t[f"{name}_alone"]
        rows.append((f"{name} / alone", f"{ratio:.2f}x"))
        out[f"{name}_ratio"] = ratio
    out["missing_doubling"] = doubling
    report("deep_tree", rows, out)


if __name__ == "__main__":
    main()

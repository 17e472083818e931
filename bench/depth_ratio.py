"""``dsh/context/preview`` plus ``dsh/scopes`` at depth 1,000 against depth 100 (issue 23).

Two chains of the same layout as ``bench/deep_tree.py`` (``d/d/d/...`` with an AGENTS.md at
every level and a source file at the bottom), one ``--shallow`` levels deep and one ``--deep``
levels deep, side by side in one directory, served by one real server
(``bench/bench_server.py``: the product ``build_server()``), with a byte budget that holds
every level so each answer carries all of them. Each round asks, for each chain in turn (the
order alternates between rounds), ``dsh/context/preview`` of the bottom directory and then
``dsh/scopes`` of the bottom source file, and times the pair:

* ``cold``  the chain's root AGENTS.md is edited just before the pair, so neither answer can be
  a kept one (``dsh/scopes`` computes the chain again; preview always does);
* ``warm``  nothing changed since the last round: what an editor asking again sees (preview
  computes, ``dsh/scopes`` re-checks its kept answer by stat). The warm rounds start once the
  last edit is more than two seconds old (a recording that saw a change that recent is never
  kept: docs/architecture.md).

The median of each is printed with every round's figure, and the ratio deep / shallow of the
medians: linear in depth is ``deep / shallow`` (10x for the defaults), the target is at most
12x. ``noop`` (``bench/noop``, median of 50) is the round trip both stand on.

    .venv/bin/python bench/depth_ratio.py [--shallow 100] [--deep 1000] [--rounds 7] [--warm-rounds 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import ms, report
from _rpc import Client, bench_server, file_uri
from deep_tree import BUDGET, build_chain

TARGET = 12.0
RACY_WINDOW_SECONDS = 2.1


def pair(client: Client, bottom: str) -> tuple[float, float]:
    """Seconds of ``dsh/context/preview`` of ``bottom`` and of ``dsh/scopes`` of its source."""
    preview = client.exchange([("dsh/context/preview", {"cwd": bottom})])
    scopes = client.exchange([("dsh/scopes", {"uri": file_uri(os.path.join(bottom, "x.py"))})])
    return preview, scopes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shallow", type=int, default=100)
    parser.add_argument("--deep", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7, help="cold rounds")
    parser.add_argument("--warm-rounds", type=int, default=21)
    args = parser.parse_args()
    depths = (args.shallow, args.deep)
    base = tempfile.mkdtemp(prefix="dsh-bench-")
    samples: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        samples.setdefault(name, []).append(seconds)

    try:
        chains = {}
        for depth in depths:
            root, bottom = build_chain(os.path.join(base, f"c{depth}"), depth)
            chains[depth] = (root, bottom)
        home = os.path.join(base, "home")
        os.makedirs(home)
        env = {**os.environ, "DSH_HOME": home, "HOME": base}
        client = Client(bench_server(), env=env)
        try:
            client.initialize(
                {
                    "store": {"path": os.path.join(base, "s.sqlite3")},
                    "instructions": {"maxBytes": BUDGET},
                }
            )
            noop = statistics.median(client.exchange([("bench/noop", None)]) for _ in range(50))
            for depth in depths:  # every level is in each answer
                root, bottom = chains[depth]
                found = client.request("dsh/context/preview", {"cwd": bottom})
                assert len(found["files"]) == depth, (depth, len(found["files"]))
                found = client.request("dsh/scopes", {"uri": file_uri(bottom + "/x.py")})
                assert len(found["files"]) == depth, (depth, len(found["files"]))
            for phase, rounds in (("cold", args.rounds), ("warm", args.warm_rounds)):
                if phase == "warm":
                    time.sleep(RACY_WINDOW_SECONDS)
                    for depth in depths:  # recorded now, kept from here on
                        pair(client, chains[depth][1])
                for round_ in range(rounds):
                    for depth in depths if round_ % 2 == 0 else depths[::-1]:
                        root, bottom = chains[depth]
                        if phase == "cold":
                            with open(os.path.join(root, "AGENTS.md"), "a", encoding="utf-8") as fh:
                                fh.write(f"edit {round_}\n")
                        preview, scopes = pair(client, bottom)
                        add(f"{phase}_{depth}_preview", preview)
                        add(f"{phase}_{depth}_scopes", scopes)
                        add(f"{phase}_{depth}", preview + scopes)
        finally:
            client.close()
    finally:
        # shutil.rmtree recurses once per level and cannot go this deep.
        subprocess.run(["rm", "-rf", base], check=True)
    t = {name: statistics.median(values) for name, values in samples.items()}
    shallow, deep = depths
    rows = [
        ("chains", f"{shallow} and {deep} levels, an AGENTS.md at each"),
        ("rounds", f"{args.rounds} cold, {args.warm_rounds} warm (order alternating)"),
        ("noop p50", ms(noop)),
    ]
    out: dict[str, object] = {
        "shallow": shallow,
        "deep": deep,
        "rounds": args.rounds,
        "warm_rounds": args.warm_rounds,
        "noop_s": noop,
    }
    for name, values in samples.items():
        runs = ", ".join(ms(v) for v in values)
        rows.append((name, f"{ms(t[name])}  (runs {runs})"))
        out[f"{name}_s"] = t[name]
    linear = deep / shallow
    for phase in ("cold", "warm"):
        for part in ("", "_preview", "_scopes"):
            ratio = t[f"{phase}_{deep}{part}"] / t[f"{phase}_{shallow}{part}"]
            label = f"{phase}{part or ' preview + scopes'}: depth {deep} / {shallow}"
            target = f"  (linear {linear:g}x; target <= {TARGET:g}x)" if not part else ""
            rows.append((label, f"{ratio:.2f}x{target}"))
            out[f"{phase}{part}_ratio"] = ratio
    report("depth_ratio", rows, out)


if __name__ == "__main__":
    main()

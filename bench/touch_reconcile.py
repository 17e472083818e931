"""Warm touch reconciliation against its floor and against re-reading (ISSUE 8 target 1).

A project whose touched file sits 12 directories below the root, every directory on the way
(the root included) holding all four default candidates (AGENTS.md, CLAUDE.md and their .local
overlays), each a distinct file of ``--file-bytes`` bytes, and a root ``.gitignore``. A session at
the root has entered its baseline and one touch of the deep file, so every scope is active and
its ``SessionInstructionState`` is warm. We then time, interleaved in one process:

* ``warm``   the product: ``compose(..., touched=[deep file])`` with the warm state (it answers
  "nothing changed" from stats alone);
* ``floor``  a bare ``os.stat`` of every path that touch has to examine: each candidate, the
  user-global file, the ``.gitignore`` of the root and of every directory on the way (it decides
  whether a touched directory is ignored) and the root marker ``.git``; ``floor-candidates``
  stats the candidates alone, for comparison;
* ``reread`` what the touch would cost without the version cache: the product's bounded read,
  SHA-1 and trimmed SHA-1 of every present candidate (``fs.read_text``, ``sha1_hex``,
  ``trimmed_digest``);
* ``cold``   the product's own ``compose`` with the version cache emptied before each call, which
  re-reads and re-hashes every candidate through the real reconcile code.

Targets: warm <= 2.0x floor; reread / warm >= 10.

    .venv/bin/python bench/touch_reconcile.py [--rounds 400] [--file-bytes 8192]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextlib

from _common import interleaved, median, report, us
from dsh_sidecar.config import parse_settings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.compose import (
    ComposeEnv,
    SessionInstructionState,
    compose,
)
from dsh_sidecar.sources.agent_instructions.digests import sha1_hex, trimmed_digest

DEPTH = 12
NAMES = ("AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md")


def build_tree(base: str, file_bytes: int) -> tuple[str, str, list[str]]:
    root = os.path.join(base, "proj")
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, ".gitignore"), "w", encoding="utf-8") as fh:
        fh.write("node_modules/\n*.log\nbuild/\n")
    directory = root
    candidates: list[str] = []
    for level in range(DEPTH + 1):
        if level:
            directory = os.path.join(directory, f"level{level:02d}")
            os.makedirs(directory)
        for name in NAMES:
            path = os.path.join(directory, name)
            line = f"- {name} at level {level}: keep changes small and tested.\n"
            body = (line * (file_bytes // len(line) + 1))[:file_bytes]
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(body)
            candidates.append(path)
    deep = os.path.join(directory, "module.py")
    with open(deep, "w", encoding="utf-8") as fh:
        fh.write("x = 1\n")
    return root, deep, candidates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--file-bytes", type=int, default=8192)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as base:
        root, deep, candidates = build_tree(base, args.file_bytes)
        home = os.path.join(base, "home")
        os.makedirs(home)
        user_global = os.path.join(home, "AGENTS.md")
        with open(user_global, "w", encoding="utf-8") as fh:
            fh.write("user-global rule\n")
        # A budget that holds every file: the warm touch renders nothing, so the budget only
        # decides how many scopes the setup makes active (all of them here).
        settings = parse_settings(
            {"instructions": {"dshHome": home, "maxBytes": 64 * 1024 * 1024}}
        ).instructions
        env = ComposeEnv(root, settings, home, LOCAL_FS, os.path.expanduser("~"))
        state = SessionInstructionState()
        visible = []
        baseline = compose(env, state, visible=(), claimed=(), pending=(), touched=())
        assert baseline is not None
        visible.append(baseline)
        update = compose(env, state, visible=visible, claimed=(), pending=(), touched=[deep])
        assert update is not None
        visible.append(update)
        active = {c["scope"] for m in visible for c in m.source["changes"]}
        assert len(active) == len(candidates) + 1, (len(active), len(candidates))
        assert compose(env, state, visible=visible, claimed=(), pending=(), touched=[deep]) is None

        probed = [user_global, *candidates]
        directories = sorted({os.path.dirname(p) for p in candidates})
        examined = [*probed, *(os.path.join(d, ".gitignore") for d in directories)]
        examined.append(os.path.join(root, ".git"))
        probes = [LOCAL_FS.probe(p) for p in probed]
        max_source = settings.max_source_bytes

        def warm() -> None:
            compose(env, state, visible=visible, claimed=(), pending=(), touched=[deep])

        def floor() -> None:
            for path in examined:
                with contextlib.suppress(FileNotFoundError):
                    os.stat(path)

        def floor_candidates() -> None:
            for path in probed:
                os.stat(path)

        def reread() -> None:
            for probe in probes:
                text = LOCAL_FS.read_text(probe, max_source).text
                assert text is not None
                sha1_hex(text)
                trimmed_digest(text)

        cold_state = SessionInstructionState()
        compose(env, cold_state, visible=visible, claimed=(), pending=(), touched=[deep])

        def cold() -> None:
            cold_state.cache.clear()
            compose(env, cold_state, visible=visible, claimed=(), pending=(), touched=[deep])

        runs = {
            "warm": warm,
            "floor": floor,
            "floor_candidates": floor_candidates,
            "reread": reread,
            "cold": cold,
        }
        interleaved(runs, rounds=20)  # warm-up: page cache, dentries, allocator
        samples = interleaved(runs, rounds=args.rounds)
        t = {name: median(values) for name, values in samples.items()}
        warm_over_floor = t["warm"] / t["floor"]
        warm_over_candidates = t["warm"] / t["floor_candidates"]
        reread_over_warm = t["reread"] / t["warm"]
        cold_over_warm = t["cold"] / t["warm"]
        report(
            "touch_reconcile",
            [
                ("scopes probed", f"{len(probed)} ({DEPTH}-deep path, {len(NAMES)} per directory)"),
                ("file size", f"{args.file_bytes} bytes"),
                ("warm compose", us(t["warm"])),
                ("floor (os.stat walk)", f"{us(t['floor'])} ({len(examined)} paths)"),
                ("floor, candidates only", f"{us(t['floor_candidates'])} ({len(probed)} paths)"),
                ("re-read + hash", us(t["reread"])),
                ("cold-cache compose", us(t["cold"])),
                ("warm / floor", f"{warm_over_floor:.2f}x  (target <= 2.0)"),
                ("warm / candidates-only floor", f"{warm_over_candidates:.2f}x"),
                ("re-read / warm", f"{reread_over_warm:.1f}x  (target >= 10)"),
                ("cold compose / warm", f"{cold_over_warm:.1f}x"),
            ],
            {
                "warm_s": t["warm"],
                "floor_s": t["floor"],
                "reread_s": t["reread"],
                "cold_s": t["cold"],
                "warm_over_floor": warm_over_floor,
                "floor_candidates_s": t["floor_candidates"],
                "warm_over_candidates_floor": warm_over_candidates,
                "reread_over_warm": reread_over_warm,
                "cold_over_warm": cold_over_warm,
                "scopes": len(probed),
                "file_bytes": args.file_bytes,
                "rounds": args.rounds,
            },
        )


if __name__ == "__main__":
    main()

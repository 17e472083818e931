"""A hook command for the real CLIs that records what it is given, and can misbehave on purpose.

    python capture_hook.py --dir DIR --event EVENT [--context TEXT] [--plain TEXT]
                           [--top TEXT] [--exit N] [--garbage] [--sleep SECONDS]

It writes its stdin (the event's JSON) to ``DIR/NNNN-EVENT.json`` (``NNNN`` counts up across
all hooks writing to DIR, in call order) and then, on stdout:

- ``--context TEXT``: ``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext":
  TEXT}}``; a ``{n}`` in TEXT becomes the call's number, so each delivery is unique;
- ``--top TEXT``: a top-level ``"additionalContext": TEXT`` (GitHub Copilot CLI reads only that
  one), beside ``hookSpecificOutput`` when ``--context`` is given too; ``{n}`` as above;
- ``--plain TEXT``: TEXT as is (not JSON);
- ``--garbage``: bytes that are not JSON;
- nothing otherwise.

``--sleep`` waits before answering (for timeouts) and ``--exit`` sets the exit status. Standalone
(standard library only): the CLIs run it with the test's Python.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def _next_path(directory: Path, event: str) -> tuple[int, Path]:
    # O_EXCL makes the numbering safe when a CLI runs several hooks at once.
    n = len(list(directory.glob("*.json"))) + 1
    while True:
        path = directory / f"{n:04d}-{event}.json"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return n, path
        except FileExistsError:
            n += 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--event", required=True)
    parser.add_argument("--context")
    parser.add_argument("--top")
    parser.add_argument("--plain")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0)
    args = parser.parse_args()

    raw = sys.stdin.read()
    args.dir.mkdir(parents=True, exist_ok=True)
    n, path = _next_path(args.dir, args.event)
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"__not_json__": raw}
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")

    if args.sleep:
        time.sleep(args.sleep)
    if args.context is not None or args.top is not None:
        output: dict[str, object] = {}
        if args.top is not None:
            output["additionalContext"] = args.top.replace("{n}", str(n))
        if args.context is not None:
            text = args.context.replace("{n}", str(n))
            output["hookSpecificOutput"] = {"hookEventName": args.event, "additionalContext": text}
        sys.stdout.write(json.dumps(output))
    elif args.plain is not None:
        sys.stdout.write(args.plain)
    elif args.garbage:
        sys.stdout.write("{not json at all\x00\n")
    return int(args.exit)


if __name__ == "__main__":
    sys.exit(main())

"""Whether every reader of a settings file sees the same values in it.

Python's ``json`` accepts text that the agents' readers (Node's ``JSON.parse``, Rust's
``serde_json``) read differently or refuse: ``NaN`` and ``Infinity``, a number beyond the double
range (``1e400``: Infinity in Node, an error in serde_json), a string holding half of a
surrogate pair (``"\\ud800"``), a key given twice (the last wins in Node, an error for serde_json's
structures). ``hooks install`` would decide what is in the file from a value the agent does not
see, so such a file is refused, naming the line and column of the first such token.

The text has already been accepted by ``json.loads``: this pass only looks at its tokens.
"""

from __future__ import annotations

import json
import math
import re

_TOKEN = re.compile(
    r"""
    (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    | (?P<open>[{\[])
    | (?P<close>[}\]])
    | (?P<other>[^"{}\[\]\s,:]+)
    """,
    re.VERBOSE | re.DOTALL,
)
_SPACE = re.compile(r"[ \t\r\n]*")


def first_ambiguity(text: str) -> tuple[int, str] | None:
    """(offset, problem) of the first token that the agents' readers would not all read as
    Python did, or None."""
    # One set of keys per open object, None per open array.
    open_keys: list[set[str] | None] = []
    for match in _TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group()
        if kind == "string":
            value = json.loads(token)
            if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
                return match.start(), (
                    f"a string with half a surrogate pair ({_shown(token)}),"
                    " which not every agent's JSON reader accepts"
                )
            after = _SPACE.match(text, match.end())
            is_key = after is not None and text[after.end() : after.end() + 1] == ":"
            keys = open_keys[-1] if open_keys else None
            if is_key and keys is not None:
                if value in keys:
                    return match.start(), (
                        f"the key {_shown(token)} appears twice"
                        " (JSON readers differ on which one counts)"
                    )
                keys.add(value)
        elif kind == "number":
            if math.isinf(float(token)):
                return match.start(), (
                    f"the number {_shown(token)} is beyond the range of a JSON number"
                    " (an agent would read Infinity or refuse the file)"
                )
        elif kind == "open":
            open_keys.append(set() if token == "{" else None)
        elif kind == "close":
            open_keys.pop()
        elif token not in ("true", "false", "null"):
            return match.start(), f"{_shown(token)} is not JSON"
    return None


def _shown(token: str) -> str:
    return token if len(token) <= 24 else token[:20] + "…"

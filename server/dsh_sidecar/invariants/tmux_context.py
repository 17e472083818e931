"""Invariant companion of tmux-context.

Upstream's companion validates nothing; ours checks the exact shape the producer writes: one text
block, the three-line location format, and the snapshot source carrying the same text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dsh_sidecar.invariants._common import (
    digits_number,
    is_safe_int,
    single_text_block,
    snapshot_source_matches,
)
from dsh_sidecar.model import Event
from dsh_sidecar.sources.tmux_context import PLUGIN

PACKAGE = "@deepseek-ai/dsh-tmux-context"

# No field can hold a newline (the query keeps only the first output line). tmux prints indexes
# and active flags as numbers, so those fields are digit runs here, which also keeps the match
# linear in practice; the session name and layout are free text, the window name a compact JSON
# string literal, and the pane id non-empty.
_JSON_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
READING_PATTERN = re.compile(
    r"tmux location \(turn ([0-9]+)\):\n"
    rf"session [^\n]*, window [0-9]* {_JSON_STRING}, pane [0-9]* [^\n]+\n"
    r"window active=[0-9]*, pane active=[0-9]*, layout [^\n]*"
)

MSG_BLOCK = "tmux-context messages must contain exactly one text block"
MSG_FORMAT = "tmux-context message does not match the location reading format"
MSG_TURN = "tmux-context turn must be a positive safe integer"
MSG_SOURCE = "tmux-context source must carry only the exact snapshot text"


def check(event: Event, history: Sequence[Event]) -> str | None:
    """The violation message for one tmux reading, or None when it is valid."""
    text = single_text_block(event.data)
    if text is None:
        return MSG_BLOCK
    match = READING_PATTERN.fullmatch(text)
    if match is None:
        return MSG_FORMAT
    if not is_safe_int(digits_number(match[1]), 1):
        return MSG_TURN
    if not snapshot_source_matches(event.data.get("source"), PLUGIN, text):
        return MSG_SOURCE
    return None

"""Invariant companion of agent-instructions.

Upstream's companion validates nothing; ours checks the exact durable shape of an instructions
context (reference agent-instructions.md §1.3, §2.7, §2.9): the typed source with its changes, and
one or two text blocks (a baseline block and an update block) that are each framed by a single
``<system-reminder>`` pair, or are the unframed budget notice a tiny budget falls back to.
"Single" is meant as a tolerant reader sees tags (``sources/agent_instructions/escaping.py``):
besides the frame's own two tags, no spelling of an opening or closing tag may appear.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from dsh_sidecar.invariants._common import has_exact_keys
from dsh_sidecar.model import Event
from dsh_sidecar.sources.agent_instructions.escaping import frame_tags

PACKAGE = "@deepseek-ai/dsh-agent-instructions"

OPEN_TAG = "<system-reminder>\n"
CLOSE_TAG = "</system-reminder>"
BUDGET_NOTICE = "Workspace instruction budget "
ACTIONS = frozenset({"set", "replace", "remove"})
_DIGEST = re.compile(r"[0-9a-f]{40}")

MSG_SOURCE = (
    "agent-instructions source must be {kind, form: 'instructions', changes} with an optional "
    "baseline: true carried together with a string baselineIdentity"
)
MSG_BLOCKS = (
    "agent-instructions messages must contain one text block, or two when they carry a baseline"
)


def msg_change(index: int) -> str:
    return (
        f"agent-instructions change {index} must be {{action, scope, path, digest?}} with a known "
        "action, a scope holding one NUL, and a 40-hex digest exactly when the action is not remove"
    )


def msg_frame(index: int) -> str:
    return (
        f"agent-instructions text block {index} must be one <system-reminder> frame "
        "or an unframed budget notice"
    )


def _source_ok(source: Any) -> TypeGuard[Mapping[str, Any]]:
    if not isinstance(source, Mapping):
        return False
    keys = set(source)
    if keys not in (
        {"kind", "form", "changes"},
        {"kind", "form", "changes", "baseline", "baselineIdentity"},
    ):
        return False
    if source["kind"] != "agent-instructions" or source["form"] != "instructions":
        return False
    if "baseline" in keys and (
        source["baseline"] is not True or not isinstance(source["baselineIdentity"], str)
    ):
        return False
    return isinstance(source["changes"], list | tuple)


def _change_ok(change: Any) -> bool:
    if not isinstance(change, Mapping):
        return False
    action = change.get("action")
    if action not in ACTIONS:
        return False
    expected = {"action", "scope", "path"} | ({"digest"} if action != "remove" else set())
    if not has_exact_keys(change, expected):
        return False
    scope, path = change["scope"], change["path"]
    if not isinstance(scope, str) or scope.count("\0") != 1 or not isinstance(path, str):
        return False
    digest = change.get("digest")
    return action == "remove" or (isinstance(digest, str) and bool(_DIGEST.fullmatch(digest)))


def is_framed_or_notice(text: str) -> bool:
    """One frame whose only tags are its first and last line, or an unframed (maybe cut) notice
    without any tag."""
    tags = frame_tags(text)
    if text.startswith(OPEN_TAG) and text.endswith("\n" + CLOSE_TAG):
        return len(tags) == 2 and tags[0].start() == 0 and tags[1].end() == len(text) - 1
    unframed = text.startswith(BUDGET_NOTICE) or (bool(text) and BUDGET_NOTICE.startswith(text))
    return unframed and not tags


def check(event: Event, history: Sequence[Event]) -> str | None:
    """The violation message for one instructions context, or None when it is valid."""
    source = event.data.get("source")
    if not _source_ok(source):
        return MSG_SOURCE
    for index, change in enumerate(source["changes"]):
        if not _change_ok(change):
            return msg_change(index)
    content = event.data.get("content")
    limit = 2 if source.get("baseline") is True else 1
    if not isinstance(content, list | tuple) or not 1 <= len(content) <= limit:
        return MSG_BLOCKS
    for index, block in enumerate(content):
        if not has_exact_keys(block, {"type", "text"}) or block["type"] != "text":
            return MSG_BLOCKS
        if not isinstance(block["text"], str) or not is_framed_or_notice(block["text"]):
            return msg_frame(index)
    return None

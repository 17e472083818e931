"""Reading agent-instructions state back from durable messages (docs/reference/agent-instructions.md, Reading state back).

State lives only in message *sources* (``changes`` lists), never in prose. ``effective`` is the
fold of visible changes overlaid by authority messages (claimed or being composed); pending inbox
messages are never authority.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs

from dsh_sidecar.model import Message

SOURCE_KIND = "agent-instructions"
FORM = "instructions"
ACTIONS = ("set", "replace", "remove")
_HEX40 = re.compile(r"[0-9a-f]{40}")


@attrs.frozen
class Change:
    action: Literal["set", "replace", "remove"]
    scope: str
    path: str
    digest: str | None = None

    @property
    def active(self) -> bool:
        return self.action != "remove"

    def to_json(self) -> dict[str, str]:
        out = {"action": self.action, "scope": self.scope, "path": self.path}
        if self.digest is not None:
            out["digest"] = self.digest
        return out


def parse_change(raw: Any) -> Change | None:
    """Strict parse; malformed entries are skipped, as upstream does.

    Equal changes are one shared object (``shared_change``): every live session over a project
    holds the same thousand changes in its effective state, parsed from its own log.
    """
    if not isinstance(raw, Mapping):
        return None
    action, scope, path = raw.get("action"), raw.get("scope"), raw.get("path")
    if action not in ACTIONS or not isinstance(scope, str) or not isinstance(path, str):
        return None
    digest = raw.get("digest")
    if "digest" in raw and not isinstance(digest, str):
        return None
    return shared_change(Change(action, scope, path, digest))


_SHARED: weakref.WeakValueDictionary[Change, Change] = weakref.WeakValueDictionary()


def shared_change(change: Change) -> Change:
    """The one live object equal to ``change`` (it, when there is none yet)."""
    try:
        return _SHARED.setdefault(change, change)
    except RuntimeError:  # another thread changed the table at the same moment: keep our own
        return change


def is_instructions_message(message: Message) -> bool:
    return message.source.get("kind") == SOURCE_KIND and isinstance(
        message.source.get("changes"), list
    )


def changes_of(message: Message) -> list[Change]:
    if not is_instructions_message(message):
        return []
    return [c for c in (parse_change(raw) for raw in message.source["changes"]) if c is not None]


def effective_changes(
    visible: Iterable[Message], authority: Iterable[Message]
) -> dict[str, Change]:
    """Latest change per scope from visible messages, then authority messages on top."""
    effective: dict[str, Change] = {}
    for message in (*visible, *authority):
        for change in changes_of(message):
            effective[change.scope] = change
    return effective


def is_baseline(message: Message) -> bool:
    return is_instructions_message(message) and message.source.get("baseline") is True


def visible_baseline(visible: Iterable[Message], authority: Iterable[Message]) -> Message | None:
    """The last claimed baseline, or failing that the last visible one."""
    for group in (list(authority), list(visible)):
        for message in reversed(group):
            if is_baseline(message):
                return message
    return None


def make_source(
    changes: Iterable[Change], *, baseline: bool = False, identity: str | None = None
) -> dict[str, Any]:
    source: dict[str, Any] = {"kind": SOURCE_KIND, "form": FORM}
    if baseline:
        source["baseline"] = True
        source["baselineIdentity"] = identity
    source["changes"] = [c.to_json() for c in changes]
    return source


def is_hex_digest(value: str) -> bool:
    return bool(_HEX40.fullmatch(value))

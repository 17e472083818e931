"""The ``dsh`` tree read leniently: one refused key never refuses the others."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from dsh_sidecar.errors import DshError

from .keys import KEYS
from .parse import parse_settings
from .secrets import HIDDEN, hidden, is_secret_key
from .settings import Settings

# Forms to name for keys whose refusal message does not already say what is expected.
_EXPECTED_FORMS = {k.wire: k.expected for k in KEYS if k.expected is not None}


@attrs.frozen
class SettingProblem:
    """One refused key: its dotted name, the value given, and why (naming the expected form).
    ``value`` is never a secret's: ``problem`` hides the value of a key named like one, and
    inside any other value the keys named so (``secrets``)."""

    key: str
    value: Any
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "message": self.message}


def parse_settings_leniently(
    raw: Any, base: Settings
) -> tuple[Settings, tuple[SettingProblem, ...]]:
    """Like ``parse_settings``, but a refused key keeps its ``base`` value (the default at
    start) instead of refusing the whole tree; every refused key is reported once.

    Each refusal names its key (``ConfigError.key`` or ``data["key"]``); that leaf is taken out
    of a copy of ``raw`` and the rest parsed again, so the checks themselves stay in one place.
    """
    if isinstance(raw, Mapping) and set(raw) == {"dsh"}:
        raw = raw["dsh"]
    tree: Any = _copy_tree(raw)
    problems: list[SettingProblem] = []
    while True:
        try:
            return parse_settings(tree, base), tuple(problems)
        except DshError as exc:
            key = exc.data.get("key") if isinstance(exc.data, dict) else None
            value, removed = _pop_leaf(tree, key) if isinstance(key, str) else (None, False)
            if not removed:  # nothing to take out (the tree itself is not an object)
                problems.append(problem("dsh", tree, exc.message))
                return base, tuple(problems)
            problems.append(problem(str(key), value, _with_expected(str(key), exc.message)))


def problem(key: str, value: Any, message: str) -> SettingProblem:
    """The refusal of ``key``, its value as it may be shown: ``HIDDEN`` for a key named like a
    secret (``authToken`` sent inside the settings), secrets inside it hidden otherwise."""
    shown = HIDDEN if value is not None and is_secret_key(key) else hidden(value)
    return SettingProblem(key, shown, message)


def _copy_tree(raw: Any) -> Any:
    if isinstance(raw, Mapping):
        return {k: _copy_tree(v) for k, v in raw.items()}
    return raw


def _pop_leaf(tree: Any, key: str) -> tuple[Any, bool]:
    """Remove the leaf that the dotted ``key`` names from ``tree``; returns the removed value
    and whether anything was.

    A key may itself hold a dot (``{"instructions": {"max.bytes": 1}}`` is refused as
    ``instructions.max.bytes``), so the name is matched against the tree's own keys rather than
    split on every dot: splitting found nothing to remove, and one such typo sent the whole tree
    back to its defaults."""
    path = _path_to(tree, key)
    if path is None:
        return None, False
    node = tree
    for part in path[:-1]:
        node = node[part]
    return node.pop(path[-1]), True


def _path_to(node: Any, key: str) -> list[str] | None:
    """The keys from ``node`` down to the leaf whose dotted path is ``key``, or None."""
    if not isinstance(node, dict):
        return None
    if key in node:
        return [key]
    for name, child in node.items():
        if isinstance(name, str) and key.startswith(name + "."):
            rest = _path_to(child, key[len(name) + 1 :])
            if rest is not None:
                return [name, *rest]
    return None


def _with_expected(key: str, message: str) -> str:
    expected = _EXPECTED_FORMS.get(key)
    if expected is None and "is not a known setting" in message:
        expected = "no such key in this version of the sidecar; remove it"
    return message if expected is None else f"{message} (expected {expected})"

"""The value checks of the settings keys: each takes the key's dotted name and the value given,
returns the value to keep, or raises an error that names the key.

The messages are the contract (upstream's where a key is upstream's, tests assert them byte for
byte), so every check words its refusal itself rather than through a generic schema. A value
quoted in a message goes through ``secrets.hidden`` (``shown``): a wrong value that is an object
holding a token, say, is quoted with the token hidden.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from dsh_sidecar import errors
from dsh_sidecar.errors import ConfigError, DshError
from dsh_sidecar.jsutil import js_trim
from dsh_sidecar.rule_sets import RULE_SET_NAMES

from .secrets import hidden, shown

MAX_SAFE_INTEGER = 2**53 - 1

Check = Callable[[str, Any], Any]


def boolean(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, f"must be true or false, got {shown(value)}")
    return value


def budget(key: str, value: Any) -> float:
    """Any number, as upstream's ``maxBytes``; ``null`` is refused rather than read as unset."""
    if value is None:
        raise ConfigError(key, "is required (a number of bytes)")
    return _number(key, value)


def _number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, f"must be a number, got {shown(value)}")
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        # JSON may carry an integer beyond double range (1e400 written out); JS reads it as
        # Infinity, and Python's math.isfinite would raise OverflowError on it.
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value


def positive_integer(key: str, value: Any) -> int:
    """Upstream's ``z.number().step(1).min(1)``: any integral double >= 1, unlike the session
    settings, which must also be safe integers."""
    if not _integral_double_from_one(value):
        raise ConfigError(key, f"must be a positive integer, got {shown(value)}")
    return int(value)


def _integral_double_from_one(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        as_double = float(value)
    except OverflowError:  # an integer beyond double range is Infinity in JS, which fails step(1)
        return False
    return math.isfinite(as_double) and as_double.is_integer() and as_double >= 1


def _safe_int(value: Any, minimum: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        # Compared as an int: float(value) would overflow for integers beyond double range.
        return minimum <= value <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and minimum <= value <= MAX_SAFE_INTEGER
    return False


def non_negative_safe_integer(key: str, value: Any) -> int:
    if not _safe_int(value, 0):
        raise ConfigError(key, f"must be a non-negative safe integer, got {shown(value)}")
    return int(value)


def optional_path(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not js_trim(value):
        raise ConfigError(key, "must be a non-blank path or null")
    return value


def string_list(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(key, "must be a list of strings")
    return tuple(value)


def patterns(key: str, value: Any) -> tuple[str, ...]:
    """Gitignore-style patterns, each of which pathspec can parse."""
    lines = string_list(key, value)
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception as exc:  # pathspec raises several types for a malformed pattern
        raise ConfigError(key, f"invalid pattern: {exc}") from exc
    return lines


def directories(key: str, value: Any) -> tuple[str, ...]:
    """Absolute or ``~``-relative directories; a relative one would depend on the sidecar's
    working directory, which no user means."""
    entries = string_list(key, value)
    for index, entry in enumerate(entries):
        if "\0" in entry:
            raise ConfigError(key, f"entry {index} contains a NUL character")
        if not (os.path.isabs(entry) or entry == "~" or entry.startswith("~/")):
            raise ConfigError(
                key, f"entry {index} must be an absolute path or start with ~/, got {entry!r}"
            )
    return entries


def files(key: str, value: Any) -> tuple[str, ...]:
    """Absolute or ``~/``-relative files; ``~`` alone is a directory, not a file."""
    entries = string_list(key, value)
    for index, entry in enumerate(entries):
        if "\0" in entry:
            raise ConfigError(key, f"entry {index} contains a NUL character")
        if not (os.path.isabs(entry) or entry.startswith("~/")) or entry.endswith("/"):
            raise ConfigError(
                key, f"entry {index} must be a file's absolute path or start with ~/, got {entry!r}"
            )
    return entries


def rule_sets(key: str, value: Any) -> tuple[str, ...]:
    names = string_list(key, value)
    allowed = ", ".join(f'"{n}"' for n in RULE_SET_NAMES)
    for index, name in enumerate(names):
        if name not in RULE_SET_NAMES:
            raise ConfigError(key, f"entry {index} must be one of {allowed}, got {name!r}")
        if name in names[:index]:
            raise ConfigError(key, f"entry {index} repeats {name!r}")
    return names


def one_of(*choices: str) -> Check:
    allowed = ", ".join(repr(v) for v in choices)

    def check(key: str, value: Any) -> str:
        if value not in choices:
            raise ConfigError(key, f"must be one of {allowed}, got {shown(value)}")
        return str(value)

    return check


def reference_count(key: str, value: Any) -> int:
    """A session-reference limit, refused in upstream's words and with its error code."""
    if not _safe_int(value, 1):
        leaf = key.rpartition(".")[2]
        raise reference_error(key, f"session-reference: {leaf} must be a positive safe integer")
    return int(value)


def reference_error(key: str, message: str) -> DshError:
    return DshError(errors.SESSION_REFERENCE_INVALID_CONFIG, message, {"key": key})


def refresh_interval(plugin: str) -> Check:
    """Upstream's ``validateRefreshInterval`` of the ``plugin`` (``time-context``...)."""

    def check(key: str, value: Any) -> int:
        if not _safe_int(value, 0):
            given = value if not isinstance(value, float) or not value.is_integer() else int(value)
            leaf = key.rpartition(".")[2]
            raise ConfigError(
                key, f"{plugin}: {leaf} must be a non-negative safe integer, got {hidden(given)}"
            )
        return int(value)

    return check


def time_zone(key: str, value: Any) -> str | None:
    if value is None:
        return None
    from dsh_sidecar.zones import canonical_time_zone

    if not isinstance(value, str) or canonical_time_zone(value) is None:
        raise ConfigError(key, f'time-context: invalid IANA timeZone "{hidden(value)}"')
    return value

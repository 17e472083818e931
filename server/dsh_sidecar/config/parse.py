"""The ``dsh`` tree read strictly (the first refused key refuses it all) and written back, both
driven by the key table (keys.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from dsh_sidecar.errors import ConfigError

from . import checks
from .keys import SECTIONS, Section, to_json
from .settings import Settings


def parse_settings(raw: Any, base: Settings | None = None) -> Settings:
    """Parse the camelCase tree; keys left out keep ``base`` (or the defaults)."""
    if base is None:
        base = Settings()
    if raw is None:
        return base
    if not isinstance(raw, Mapping):
        raise ConfigError("dsh", "settings must be an object")
    _refuse_unknown("", raw, {s.name for s in SECTIONS})
    return Settings(
        **{
            s.field: _parse_section(s, _section_tree(raw, s.name), getattr(base, s.field))
            for s in SECTIONS
        }
    )


def _section_tree(raw: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(name, "must be an object")
    return value


def _refuse_unknown(prefix: str, raw: Mapping[str, Any], known: set[str]) -> None:
    extra = sorted(set(raw) - known)
    if extra:
        raise ConfigError(f"{prefix}{extra[0]}", "is not a known setting")


def _parse_section(section: Section, raw: Mapping[str, Any], base: Any) -> Any:
    _refuse_unknown(f"{section.name}.", raw, {k.name for k in section.keys})
    changes = {k.field: k.check(k.wire, raw[k.name]) for k in section.check_order if k.name in raw}
    _check_across_keys(section.name, changes)
    return attrs.evolve(base, **changes)


def _check_across_keys(section: str, changes: Mapping[str, Any]) -> None:
    """Refusals that are not one key's own check."""
    # Upstream bounds maxReferences only once all three session-reference limits are positive
    # safe integers, so a bad candidateLimit is reported before maxReferences: 4.
    if section == "sessionReference" and changes.get("max_references", 0) > 3:
        raise checks.reference_error(
            "sessionReference.maxReferences", "session-reference: maxReferences must not exceed 3"
        )


def settings_to_json(settings: Settings) -> dict[str, Any]:
    """The camelCase tree of ``settings`` (what ``parse_settings`` reads back), keys in
    declaration order."""
    return {
        s.name: {k.name: to_json(getattr(getattr(settings, s.field), k.field)) for k in s.keys}
        for s in SECTIONS
    }

"""The key table (config/keys.py) against the section classes, and the reads that derive from it:
one entry per field, defaults its own checks accept, and checks in declaration order except where
upstream fixes another."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from dsh_sidecar.config import Settings, parse_settings, parse_settings_leniently, settings_to_json
from dsh_sidecar.config.keys import BY_WIRE, KEYS, SECTIONS, SettingKey, snake_case
from dsh_sidecar.errors import DshError


def test_sections_are_the_fields_of_settings_in_order() -> None:
    assert [s.field for s in SECTIONS] == [f.name for f in attrs.fields(Settings)]


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.name)
def test_each_field_of_a_section_has_exactly_one_key(section: Any) -> None:
    cls = type(getattr(Settings(), section.field))
    assert [k.field for k in section.keys] == [f.name for f in attrs.fields(cls)]


def test_wire_names_are_unique_and_dotted_once() -> None:
    assert len(BY_WIRE) == len(KEYS)
    for key in KEYS:
        assert key.wire.count(".") == 1 and key.name[0].islower(), key.wire


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.wire)
def test_the_default_passes_its_own_check(key: SettingKey) -> None:
    checked = key.check(key.wire, key.default)
    assert (list(checked) if isinstance(checked, tuple) else checked) == key.default


def test_serialisation_is_the_table_in_declaration_order() -> None:
    tree = settings_to_json(Settings())
    flat = [
        (f"{section}.{name}", value)
        for section, keys in tree.items()
        for name, value in keys.items()
    ]
    assert flat == [(k.wire, k.default) for k in KEYS]


def test_snake_case() -> None:
    assert snake_case("maxBytes") == "max_bytes"
    assert snake_case("sessionReference") == "session_reference"
    assert snake_case("enabled") == "enabled"


def _first_refused(tree: dict[str, Any]) -> str:
    with pytest.raises(DshError) as caught:
        parse_settings(tree)
    key = caught.value.data["key"]
    assert isinstance(key, str)
    return key


def test_upstream_checks_the_interval_before_the_zone() -> None:
    tree = {"timeContext": {"timeZone": "Mars/Base", "refreshIntervalMs": -1}}
    assert _first_refused(tree) == "timeContext.refreshIntervalMs"


def test_upstream_bounds_max_references_after_every_limits_type() -> None:
    tree = {"sessionReference": {"maxReferences": 4, "maxReferenceBytes": 0}}
    assert _first_refused(tree) == "sessionReference.maxReferenceBytes"
    assert _first_refused({"sessionReference": {"maxReferences": 4}}) == (
        "sessionReference.maxReferences"
    )


def test_lenient_refusals_come_in_check_order() -> None:
    # No setting accepts an arbitrary object; written in reverse to show the order is the check's.
    everything_wrong = {s.name: {k.name: object() for k in reversed(s.keys)} for s in SECTIONS}
    _, refused = parse_settings_leniently(everything_wrong, Settings())
    assert [r.key for r in refused] == [k.wire for s in SECTIONS for k in s.check_order]

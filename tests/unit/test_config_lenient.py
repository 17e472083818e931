"""Lenient settings reads: a refused key keeps its base value, every other key applies, and each
refusal names the key, the value and the expected form (docs/configuration.md)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_sidecar.config import Settings, parse_settings, parse_settings_leniently


def test_a_bad_key_keeps_its_default_and_the_rest_applies() -> None:
    raw = {
        "timeContext": {"enabled": True, "timeZone": "Mars/Olympus"},
        "instructions": {"maxBytes": 1234},
    }
    settings, refused = parse_settings_leniently(raw, Settings())
    assert settings.time_context.enabled is True
    assert settings.time_context.time_zone is None  # the default
    assert settings.instructions.max_bytes == 1234
    assert [(r.key, r.value) for r in refused] == [("timeContext.timeZone", "Mars/Olympus")]
    message = refused[0].message
    assert "timeContext.timeZone" in message and '"Mars/Olympus"' in message
    assert 'such as "Europe/Paris"' in message


def test_a_bad_key_on_a_change_keeps_the_previous_value() -> None:
    base = parse_settings({"timeContext": {"timeZone": "Asia/Tokyo"}})
    raw = {"timeContext": {"timeZone": 42}, "instructions": {"maxBytes": 99}}
    settings, refused = parse_settings_leniently(raw, base)
    assert settings.time_context.time_zone == "Asia/Tokyo"
    assert settings.instructions.max_bytes == 99
    assert [r.key for r in refused] == ["timeContext.timeZone"]


def test_several_bad_keys_are_each_reported_once() -> None:
    raw = {
        "dsh": {
            "instructions": {"maxSourceBytes": 0, "exclude": "vendor/", "unknownKey": 1},
            "sessionReference": {"maxReferences": 9},
            "hover": {"otherFiles": "sometimes"},
            "nope": {},
            "store": {"busyTimeoutMs": 7},
        }
    }
    settings, refused = parse_settings_leniently(raw, Settings())
    assert sorted(r.key for r in refused) == sorted(
        [
            "instructions.maxSourceBytes",
            "instructions.exclude",
            "instructions.unknownKey",
            "sessionReference.maxReferences",
            "hover.otherFiles",
            "nope",
        ]
    )
    assert settings.store.busy_timeout_ms == 7
    assert settings.instructions == Settings().instructions
    unknown = next(r for r in refused if r.key == "instructions.unknownKey")
    assert "remove it" in unknown.message


@pytest.mark.parametrize("raw", [None, {}, {"dsh": {}}])
def test_nothing_given_refuses_nothing(raw: Any) -> None:
    assert parse_settings_leniently(raw, Settings()) == (Settings(), ())


def test_a_section_that_is_not_an_object_is_refused_whole() -> None:
    settings, refused = parse_settings_leniently({"timeContext": "on"}, Settings())
    assert settings == Settings()
    assert [(r.key, r.value) for r in refused] == [("timeContext", "on")]


def test_a_tree_that_is_not_an_object_keeps_the_base() -> None:
    base = parse_settings({"instructions": {"maxBytes": 5}})
    settings, refused = parse_settings_leniently(["x"], base)
    assert settings == base
    assert [(r.key, r.value) for r in refused] == [("dsh", ["x"])]


def test_the_input_is_not_changed() -> None:
    raw = {"timeContext": {"timeZone": "Nowhere/Land"}}
    parse_settings_leniently(raw, Settings())
    assert raw == {"timeContext": {"timeZone": "Nowhere/Land"}}


@pytest.mark.parametrize(
    ("raw", "refused_key"),
    [
        ({"instructions": {"max.bytes": 1, "maxBytes": 5000}}, "instructions.max.bytes"),
        ({"a.b": 1, "instructions": {"maxBytes": 5000}}, "a.b"),
        ({"instructions.maxBytes": 1, "instructions": {"maxBytes": 5000}}, "instructions.maxBytes"),
    ],
)
def test_a_refused_key_with_a_dot_in_its_name_keeps_the_rest(raw: Any, refused_key: str) -> None:
    settings, refused = parse_settings_leniently(raw, Settings())
    assert settings.instructions.max_bytes == 5000  # not the whole tree back to its defaults
    assert [(r.key, r.value) for r in refused] == [(refused_key, 1)]

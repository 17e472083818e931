"""Zone canonicalization and the host-side check.

Upstream behaviour: docs/reference/time-context.md, Timestamp format (the canonical names),
and the same page's Browser zones.
"""

from __future__ import annotations

import pytest

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.zones import (
    ZoneTable,
    canonical_time_zone,
    parse_tzdata_zi,
    validate_client_time_zone,
)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        # the reference table (Node 20 / ICU 78.2)
        ("Asia/Kolkata", "Asia/Calcutta"),
        ("Asia/Kathmandu", "Asia/Katmandu"),
        ("Europe/Kyiv", "Europe/Kiev"),
        ("US/Eastern", "America/New_York"),
        ("Etc/UTC", "UTC"),
        ("Etc/GMT", "UTC"),
        ("GMT", "UTC"),
        ("utc", "UTC"),
        ("asia/shanghai", "Asia/Shanghai"),
        # stable zones are their own canonical name
        ("UTC", "UTC"),
        ("Asia/Shanghai", "Asia/Shanghai"),
        ("America/New_York", "America/New_York"),
        ("Europe/London", "Europe/London"),
        ("Australia/Lord_Howe", "Australia/Lord_Howe"),
        ("America/St_Johns", "America/St_Johns"),
        ("Pacific/Chatham", "Pacific/Chatham"),
        ("Etc/GMT+5", "Etc/GMT+5"),
        # CLDR ids are kept and never followed through an IANA link
        ("Asia/Calcutta", "Asia/Calcutta"),
        ("Europe/Kiev", "Europe/Kiev"),
        ("ASIA/CALCUTTA", "Asia/Calcutta"),
        ("europe/kyiv", "Europe/Kiev"),
    ],
)
def test_canonical_names(name: str, canonical: str) -> None:
    assert canonical_time_zone(name) == canonical


@pytest.mark.parametrize(
    "name", ["", "Not/A_Real_Zone", "Mars/Olympus", "+08:00", "Asia/Shanghai ", "localtime"]
)
def test_unknown_names(name: str) -> None:
    assert canonical_time_zone(name) is None


def test_table_from_tzdata_lines_follows_links_and_cldr_exceptions() -> None:
    zones, links = parse_tzdata_zi(
        [
            "# version test",
            "Z Asia/Kolkata 5:53:28 - LMT 1854 Jun 28",
            "Z Etc/UTC 0 - UTC",
            "Z America/New_York -4:56:2 - LMT 1883 N 18 17u",
            "L Asia/Kolkata Asia/Calcutta",
            "L Etc/UTC Etc/Zulu",
            "L America/New_York US/Eastern",
            "L Africa/Nairobi Africa/Asmera",
            "R G 1916 o - O 1 2s 0 GMT",
        ]
    )
    assert zones == {"Asia/Kolkata", "Etc/UTC", "America/New_York"}
    assert links["US/Eastern"] == "America/New_York"
    table = ZoneTable(zones | {"Africa/Nairobi"}, links)
    assert table.canonical("us/eastern") == "America/New_York"
    assert table.canonical("Asia/Kolkata") == "Asia/Calcutta"
    assert table.canonical("Asia/Calcutta") == "Asia/Calcutta"
    assert table.canonical("Etc/Zulu") == "UTC"
    assert table.canonical("Africa/Asmera") == "Africa/Asmera"
    assert table.canonical("Africa/Nairobi") == "Africa/Nairobi"
    assert table.canonical("Europe/Paris") is None


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("UTC", "UTC"),
        ("Asia/Shanghai", "Asia/Shanghai"),
        ("Etc/UTC", "UTC"),
        ("Asia/Kolkata", "Asia/Calcutta"),
        ("Etc/GMT+5", "Etc/GMT+5"),
        ("America/Argentina/Buenos_Aires", "America/Buenos_Aires"),
    ],
)
def test_client_time_zone_accepts_and_canonicalizes(value: str, stored: str) -> None:
    assert validate_client_time_zone(value) == stored


@pytest.mark.parametrize(
    "value",
    [
        "",
        " UTC",
        "UTC ",
        "Asia/Shanghai\n",
        "utc",  # not exactly UTC and not Area/Location
        "GMT",
        "+08:00",
        "Asia",
        "/Asia/Shanghai",
        "Asia//Shanghai",
        "Not/A_Real_Zone",
        "1Asia/Shanghai",
        None,
        8,
    ],
)
def test_client_time_zone_rejections(value: object) -> None:
    with pytest.raises(DshError) as caught:
        validate_client_time_zone(value)
    assert caught.value.code == errors.INVALID_TIME_ZONE == "invalid-time-zone"
    assert caught.value.message == ("clientTimeZone must be UTC or a valid IANA Area/Location name")
    assert caught.value.data == {"value": value}


def test_config_uses_the_same_table() -> None:
    from dsh_sidecar.config import parse_settings

    settings = parse_settings({"timeContext": {"timeZone": "asia/kolkata"}})
    assert settings.time_context.time_zone == "asia/kolkata"
    with pytest.raises(DshError, match='time-context: invalid IANA timeZone "Nope/Zone"'):
        parse_settings({"timeContext": {"timeZone": "Nope/Zone"}})

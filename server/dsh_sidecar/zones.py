"""Time-zone names the way upstream's Intl (ICU) sees them: known or not, and canonical.

Upstream displays and compares zones by their *Intl-canonical* name (``resolvedOptions().timeZone``
in Node 20 / ICU 78): ``Asia/Kolkata`` resolves to ``Asia/Calcutta``, ``US/Eastern`` to
``America/New_York``, ``Etc/UTC`` to ``UTC``, ``asia/shanghai`` to ``Asia/Shanghai``. This module
is the one canonicalization table of the sidecar; config, the host-side prompt check and the
time-context source all call :func:`canonical_time_zone`.

How the table is built (at import, once):

1. **Known names and IANA links** come from ``tzdata.zi`` (the compact zic input shipped in
   ``/usr/share/zoneinfo`` and in the ``tzdata`` wheel): every ``Z`` line is a zone, every ``L``
   line maps an alias to its target. Debian/Ubuntu build it with ``backzone``, so zones that IANA
   merged but CLDR keeps apart (``Europe/Amsterdam``, ``Atlantic/Reykjavik``) stay zones, as in
   ICU. Without a ``tzdata.zi`` we fall back to :func:`zoneinfo.available_timezones` with no
   links (every name is its own canonical name except the explicit tables below); that is less
   faithful for legacy aliases such as ``US/Eastern``, which then resolve to themselves.
2. **CLDR exceptions**: CLDR keeps some older spellings as the canonical id where IANA renamed
   the zone (``Asia/Calcutta`` for ``Asia/Kolkata``). :data:`CLDR_CANONICAL` maps the IANA name to
   the CLDR one; the CLDR name itself is never followed through an IANA link (``Africa/Asmera`` is
   an IANA link to ``Africa/Nairobi`` but ICU keeps it).
3. **UTC**: ECMA-402 canonicalizes ``Etc/UTC``, ``Etc/GMT`` and every alias of them to ``UTC``.

Lookup is case-insensitive, as ECMA-402 requires. Names the local zoneinfo database cannot load
are unknown (we must be able to format in every zone we accept).
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError

# IANA primary name → CLDR/ICU canonical id, where the two differ (CLDR 48 / ICU 78).
CLDR_CANONICAL: Mapping[str, str] = {
    "Africa/Asmara": "Africa/Asmera",
    "America/Argentina/Buenos_Aires": "America/Buenos_Aires",
    "America/Argentina/Catamarca": "America/Catamarca",
    "America/Argentina/Cordoba": "America/Cordoba",
    "America/Argentina/Jujuy": "America/Jujuy",
    "America/Argentina/Mendoza": "America/Mendoza",
    "America/Atikokan": "America/Coral_Harbour",
    "America/Indiana/Indianapolis": "America/Indianapolis",
    "America/Kentucky/Louisville": "America/Louisville",
    "America/Nuuk": "America/Godthab",
    "Asia/Ho_Chi_Minh": "Asia/Saigon",
    "Asia/Kathmandu": "Asia/Katmandu",
    "Asia/Kolkata": "Asia/Calcutta",
    "Asia/Yangon": "Asia/Rangoon",
    "Atlantic/Faroe": "Atlantic/Faeroe",
    "Europe/Kyiv": "Europe/Kiev",
    "Pacific/Chuuk": "Pacific/Truk",
    "Pacific/Kanton": "Pacific/Enderbury",
    "Pacific/Pohnpei": "Pacific/Ponape",
}

_CLDR_IDS = frozenset(CLDR_CANONICAL.values())
# ECMA-402: these primary names (and so all their aliases) canonicalize to "UTC".
_UTC_PRIMARIES = frozenset({"Etc/UTC", "Etc/GMT", "UTC", "GMT"})
UTC = "UTC"

# Host-side shape check for a browser-reported zone: docs/reference/time-context.md, Browser zones.
CLIENT_TIME_ZONE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+")
CLIENT_TIME_ZONE_MESSAGE = "clientTimeZone must be UTC or a valid IANA Area/Location name"


def parse_tzdata_zi(lines: Iterable[str]) -> tuple[set[str], dict[str, str]]:
    """Zone names and ``alias → target`` links from ``tzdata.zi`` lines."""
    zones: set[str] = set()
    links: dict[str, str] = {}
    for line in lines:
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "Z":
            zones.add(fields[1])
        elif len(fields) >= 3 and fields[0] == "L":
            links[fields[2]] = fields[1]
    return zones, links


def _find_tzdata_zi() -> Path | None:
    for root in zoneinfo.TZPATH:
        candidate = Path(root) / "tzdata.zi"
        if candidate.is_file():
            return candidate
    try:  # the optional tzdata wheel ships the same file
        import importlib.resources

        resource = importlib.resources.files("tzdata").joinpath("zoneinfo", "tzdata.zi")
        if resource.is_file():
            return Path(str(resource))
    except (ImportError, OSError, TypeError):
        pass
    return None


class ZoneTable:
    """Known zone names (case-insensitively) and their canonical spelling."""

    def __init__(self, zones: Iterable[str], links: Mapping[str, str]) -> None:
        self._links = dict(links)
        names = set(zones) | set(self._links)
        self._by_lower = {name.lower(): name for name in sorted(names)}

    def lookup(self, name: str) -> str | None:
        """The database spelling of ``name`` (case-insensitive), or None when unknown."""
        return self._by_lower.get(name.lower())

    def canonical(self, name: str) -> str | None:
        found = self.lookup(name)
        if found is None:
            return None
        if found in _CLDR_IDS:
            return found
        target = found
        seen: set[str] = set()
        while target in self._links and target not in seen:  # tzdata.zi links are one level
            seen.add(target)
            target = self._links[target]
        if target in _UTC_PRIMARIES:
            return UTC
        return CLDR_CANONICAL.get(target, target)


@cache
def _table() -> ZoneTable:
    path = _find_tzdata_zi()
    if path is not None:
        zones, links = parse_tzdata_zi(path.read_text(encoding="utf-8").splitlines())
    else:
        zones, links = set(zoneinfo.available_timezones()), {}
    loadable = {n for n in zones | set(links) if _loadable(n)}
    return ZoneTable(
        (z for z in zones if z in loadable),
        {a: t for a, t in links.items() if a in loadable},
    )


def _loadable(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def canonical_time_zone(name: str) -> str | None:
    """The ICU/Intl-canonical name of ``name``, or None when the zone is unknown."""
    if not isinstance(name, str) or not name:
        return None
    return _table().canonical(name)


def validate_client_time_zone(value: Any) -> str:
    """Host-side check of a prompt's ``clientTimeZone``; returns the canonical name to store.

    Rejects a non-string, an empty value, surrounding whitespace, anything that is neither
    ``UTC`` nor an ``Area/Location`` shape, and a zone the database does not know.
    """
    canonical = None
    if isinstance(value, str) and (value == UTC or CLIENT_TIME_ZONE_PATTERN.fullmatch(value)):
        canonical = canonical_time_zone(value)
    if canonical is None:
        raise DshError(errors.INVALID_TIME_ZONE, CLIENT_TIME_ZONE_MESSAGE, {"value": value})
    return canonical

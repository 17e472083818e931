"""The rule for values never quoted back (docs/configuration.md, "Values never quoted")."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from dsh_sidecar.config import Settings, parse_settings_leniently
from dsh_sidecar.config.secrets import HIDDEN, hidden, is_secret_name, shown


@pytest.mark.parametrize(
    "name",
    [
        "authToken",
        "auth_token",
        "AUTHTOKEN",
        "Auth-Token",
        "ＡＵＴＨＴＯＫＥＮ",
        "auth\u200btoken",
        "apiKey",
        "client_secret",
        "password",
        "passwd",
        "credentials",
        "sessionCookie",
        "x.token",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["enabled", "maxBytes", "timeZone", "otherFiles", "colour"])
def test_other_names(name: str) -> None:
    assert not is_secret_name(name)


def test_hidden_copies_and_leaves_the_rest() -> None:
    given: dict[str, Any] = {"a": [1, {"token": "T", "b": (2, {"apiKey": "K"})}], "n": None}
    assert hidden(given) == {"a": [1, {"token": HIDDEN, "b": [2, {"apiKey": HIDDEN}]}], "n": None}
    assert given["a"][1]["token"] == "T"  # the input is not changed
    plain = {"a": [1, 2], "b": {"c": "d"}}
    assert hidden(plain) is plain
    assert hidden({"token": None}) == {"token": None}  # null tells nothing
    assert shown({"password": "P"}) == f"{{'password': '{HIDDEN}'}}"


def test_hidden_walks_deep_and_cyclic_values() -> None:
    deep: Any = {"token": "T"}
    for _ in range(5000):
        deep = [deep]
    out = hidden(deep)
    for _ in range(5000):
        out = out[0]
    assert out == {"token": HIDDEN}
    cyclic: dict[str, Any] = {"secret": "S"}
    cyclic["self"] = cyclic
    assert hidden(cyclic) == {"secret": HIDDEN, "self": HIDDEN}


def test_hidden_inside_attrs_instances() -> None:
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        initialization_options={"dsh": {"authToken": "T"}},
    )
    out = hidden(params)
    assert isinstance(out, types.InitializeParams)
    assert out.initialization_options == {"dsh": {"authToken": HIDDEN}}
    assert params.initialization_options == {"dsh": {"authToken": "T"}}


def test_lenient_reading_reports_hidden_values() -> None:
    _, refused = parse_settings_leniently(
        {"dsh": {"authToken": "T", "instructions": {"enabled": {"token": "T"}}, "x": 1}},
        Settings(),
    )
    by_key = {r.key: r for r in refused}
    assert by_key["authToken"].value == HIDDEN
    assert by_key["instructions.enabled"].value == {"token": HIDDEN}
    assert "T'" not in by_key["instructions.enabled"].message
    assert by_key["x"].value == 1

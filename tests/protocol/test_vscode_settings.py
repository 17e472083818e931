"""The extension contributes every sidecar setting of docs/configuration.md as `dsh.<key>`, with
the documented default and a matching JSON type, and sends exactly those keys (src/settings.ts)."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG_DOC = REPO / "docs" / "configuration.md"
MANIFEST = REPO / "vscode-extension" / "package.json"
SETTINGS_TS = REPO / "vscode-extension" / "src" / "settings.ts"

# Settings only terminal editors need; docs/configuration.md says the extension does not send it.
NOT_SENT = {"tmuxContext.useClientProcess"}
JSON_TYPES = {"boolean": "boolean", "number": "number", "integer": "integer", "string[]": "array"}


def documented() -> dict[str, tuple[str, object]]:
    """key -> (documented type, default) from the settings table."""
    text = CONFIG_DOC.read_text(encoding="utf-8")
    table = text.split("<!-- settings-table:start -->", 1)[1].split("<!-- settings-table:end -->")[
        0
    ]
    rows: dict[str, tuple[str, object]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        rows[cells[0].strip("`")] = (cells[1], json.loads(cells[2].strip("`")))
    return rows


def sent_keys() -> set[str]:
    """SERVER_SETTING_KEYS of src/settings.ts, as section.key."""
    text = SETTINGS_TS.read_text(encoding="utf-8")
    block = text.split("export const SERVER_SETTING_KEYS = {", 1)[1].split("} as const;", 1)[0]
    keys: set[str] = set()
    for section, body in re.findall(r"(\w+): \[([^\]]*)\]", block):
        keys |= {f"{section}.{k}" for k in re.findall(r"'(\w+)'", body)}
    return keys


def test_the_table_parses() -> None:
    rows = documented()
    assert len(rows) >= 15
    assert rows["instructions.maxBytes"] == ("number", 65536)


def test_every_documented_setting_is_contributed_with_its_default() -> None:
    properties = json.loads(MANIFEST.read_text(encoding="utf-8"))["contributes"]["configuration"][
        0
    ]["properties"]
    for key, (kind, default) in documented().items():
        if key in NOT_SENT:
            assert f"dsh.{key}" not in properties
            continue
        contributed = properties.get(f"dsh.{key}")
        assert contributed is not None, f"dsh.{key} is not contributed"
        assert contributed["default"] == default, f"dsh.{key}: default {contributed['default']!r}"
        types = (
            contributed["type"] if isinstance(contributed["type"], list) else [contributed["type"]]
        )
        if kind in JSON_TYPES:
            assert JSON_TYPES[kind] in types, f"dsh.{key}: type {types}"
        elif kind == "string or null":
            assert set(types) == {"string", "null"}, f"dsh.{key}: type {types}"
        elif kind == "string":
            assert "string" in types, f"dsh.{key}: type {types}"


def test_the_extension_sends_exactly_the_documented_settings() -> None:
    assert sent_keys() == set(documented()) - NOT_SENT


def user_only_documented() -> set[str]:
    """Keys whose "Who may set it" cell says "user only" in the settings table."""
    text = CONFIG_DOC.read_text(encoding="utf-8")
    table = text.split("<!-- settings-table:start -->", 1)[1].split("<!-- settings-table:end -->")[
        0
    ]
    keys: set[str] = set()
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0].startswith("`"):
            assert cells[-1] in ("user only", "user or workspace"), line
            if cells[-1] == "user only":
                keys.add(cells[0].strip("`"))
    return keys


def test_the_settings_a_repository_cannot_set_agree_in_docs_manifest_and_code() -> None:
    """docs/configuration.md's "user only" settings are exactly the machine-scoped ones of the
    manifest and USER_ONLY_SERVER_SETTINGS of src/settings.ts (read from the user's value)."""
    documented_keys = user_only_documented()
    assert "instructions.allowedSymlinkTargets" in documented_keys
    block = SETTINGS_TS.read_text(encoding="utf-8").split("USER_ONLY_SERVER_SETTINGS", 1)[1]
    in_code = set(re.findall(r"'([\w.]+)'", block.split("]);", 1)[0]))
    properties = json.loads(MANIFEST.read_text(encoding="utf-8"))["contributes"]["configuration"][
        0
    ]["properties"]
    server_keys = set(documented())
    scoped = {
        n.removeprefix("dsh.")
        for n, spec in properties.items()
        if spec.get("scope") in ("machine", "application")
    }
    machine = scoped & server_keys
    assert documented_keys == in_code == machine

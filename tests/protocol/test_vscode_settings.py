"""The extension contributes every sidecar setting of the key table (config/keys.py) as
`dsh.<key>`, with its default, its JSON type and the bounds and choices the sidecar's own check
enforces, sends exactly those keys (src/settings.ts), and reads the user-only ones from the user's
settings alone. docs/configuration.md is held to the same table by test_docs_sync.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dsh_sidecar.config import MAX_SAFE_INTEGER, parse_settings
from dsh_sidecar.config.keys import KEYS, SECTIONS, USER_ONLY, SettingKey
from dsh_sidecar.errors import DshError

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "vscode-extension" / "package.json"
SETTINGS_TS = REPO / "vscode-extension" / "src" / "settings.ts"

PROPERTIES: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))["contributes"][
    "configuration"
][0]["properties"]
# The extension's own settings (its README), which it never sends: the sidecar would refuse them.
CLIENT_SETTINGS = {
    "dsh.pythonPath",
    "dsh.importStrategy",
    "dsh.model.provider",
    "dsh.model.baseUrl",
    "dsh.model.name",
    "dsh.model.maxSteps",
    "dsh.model.requestTimeoutSeconds",
    "dsh.chat.autoApproveEdits",
}
VSCODE_KEYS = [k for k in KEYS if not k.terminal_only]
JSON_TYPES = {
    "boolean": ["boolean"],
    "number": ["number"],
    "integer": ["integer"],
    "string": ["string"],
    "string or null": ["string", "null"],
    "string[]": ["array"],
}


def test_every_declared_setting_is_contributed_with_its_default_and_type() -> None:
    for key in KEYS:
        contributed = PROPERTIES.get(f"dsh.{key.wire}")
        if key.terminal_only:
            assert contributed is None, f"dsh.{key.wire} is for terminal editors only"
            continue
        assert contributed is not None, f"dsh.{key.wire} is not contributed"
        assert contributed["default"] == key.default, f"dsh.{key.wire}: {contributed['default']!r}"
        kind = contributed["type"]
        assert (kind if isinstance(kind, list) else [kind]) == JSON_TYPES[key.type], key.wire
        if key.type == "string[]":
            assert contributed["items"]["type"] == "string", key.wire


def test_the_manifest_names_no_server_setting_the_table_lacks() -> None:
    server = {f"dsh.{k.wire}" for k in VSCODE_KEYS}
    assert set(PROPERTIES) - server == CLIENT_SETTINGS
    sections = {s.name for s in SECTIONS}
    assert not {n for n in CLIENT_SETTINGS if n.split(".")[1] in sections}


def sent_keys() -> list[str]:
    """SERVER_SETTING_KEYS of src/settings.ts, as section.key, in its order."""
    text = SETTINGS_TS.read_text(encoding="utf-8")
    block = text.split("export const SERVER_SETTING_KEYS = {", 1)[1].split("} as const;", 1)[0]
    return [
        f"{section}.{key}"
        for section, body in re.findall(r"(\w+): \[([^\]]*)\]", block)
        for key in re.findall(r"'(\w+)'", body)
    ]


def test_the_extension_sends_exactly_the_declared_settings_in_order() -> None:
    assert len(sent_keys()) >= 20
    assert sent_keys() == [k.wire for k in VSCODE_KEYS]


def user_only_in_code() -> list[str]:
    """USER_ONLY_SERVER_SETTINGS of src/settings.ts."""
    block = SETTINGS_TS.read_text(encoding="utf-8").split("USER_ONLY_SERVER_SETTINGS", 1)[1]
    return re.findall(r"'([\w.]+)'", block.split("]);", 1)[0])


def test_the_settings_a_repository_cannot_set_agree_in_table_manifest_and_code() -> None:
    """The table's user-only keys are exactly USER_ONLY_SERVER_SETTINGS of src/settings.ts (read
    from the user's value) and the machine-scoped server settings of the manifest."""
    assert "instructions.allowedSymlinkTargets" in USER_ONLY
    in_code = user_only_in_code()
    assert len(in_code) == len(set(in_code)) and set(in_code) == USER_ONLY
    scoped = {
        name.removeprefix("dsh.")
        for name, spec in PROPERTIES.items()
        if spec.get("scope") in ("machine", "application") and name not in CLIENT_SETTINGS
    }
    assert scoped == USER_ONLY


def accepted(key: SettingKey, value: Any) -> bool:
    """Whether the sidecar's strict read takes ``value`` for ``key``."""
    try:
        parse_settings({key.section: {key.name: value}})
    except DshError:
        return False
    return True


def test_an_integer_settings_bounds_in_the_manifest_are_the_sidecars() -> None:
    # The Settings editor refuses what is outside them; the sidecar would refuse it too, and
    # nothing inside them.
    integers = [k for k in VSCODE_KEYS if k.type == "integer"]
    assert len(integers) >= 7
    for key in integers:
        spec = PROPERTIES[f"dsh.{key.wire}"]
        low = spec.get("minimum")
        assert low is not None, f"dsh.{key.wire} has no minimum"
        assert accepted(key, low) and not accepted(key, low - 1), key.wire
        high = spec.get("maximum")
        if high is None:
            assert accepted(key, MAX_SAFE_INTEGER), f"dsh.{key.wire} needs its maximum"
        else:
            assert accepted(key, high) and not accepted(key, high + 1), key.wire


def test_a_settings_choices_in_the_manifest_are_the_sidecars() -> None:
    for key in VSCODE_KEYS:
        spec = PROPERTIES[f"dsh.{key.wire}"]
        listed = key.type == "string[]"
        choices = spec.get("items", {}).get("enum") if listed else spec.get("enum")
        as_value: Any = (lambda v: [v]) if listed else (lambda v: v)
        if choices is None:
            if key.type == "string":  # a free string: the sidecar takes another word too
                assert accepted(key, "not-a-listed-choice"), f"dsh.{key.wire} needs its enum"
            continue
        for choice in choices:
            assert accepted(key, as_value(choice)), (key.wire, choice)
        assert not accepted(key, as_value("not-a-listed-choice")), key.wire
        if listed:
            repeated = [choices[0], choices[0]]
            assert spec.get("uniqueItems") is (not accepted(key, repeated)), key.wire

"""docs/protocol.md and docs/configuration.md against the code: a method, setting or default that
exists on one side only fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dsh_sidecar import errors
from dsh_sidecar.config import Settings, parse_settings, parse_settings_leniently, settings_to_json
from dsh_sidecar.config import keys as setting_keys
from dsh_sidecar.config.keys import BY_WIRE, KEYS, USER_ONLY
from dsh_sidecar.errors import DshError
from dsh_sidecar.protocol import methods
from dsh_sidecar.protocol import types as wire_types

from . import _docs

PROTOCOL = _docs.protocol_text()
CONFIGURATION = _docs.configuration_text()
SECTIONS = _docs.method_sections(PROTOCOL)
GOLDENS = _docs.goldens(PROTOCOL)
CANCELLABLE = {methods.STEP_PREPARE, methods.CONTEXT_PENDING, methods.SESSION_REFERENCE_CANDIDATES}
PARTS = ("Method", "Direction", "Params", "Result", "Errors", "Ordering", "Example")
DEFAULT_SETTINGS = _docs.flatten(settings_to_json(Settings()))
TABLE = _docs.settings_table(CONFIGURATION)
SETTING_SECTIONS = tuple(s.name for s in setting_keys.SECTIONS)
TERMINAL_ONLY = {k.wire for k in KEYS if k.terminal_only}


def expected_direction(method: str) -> str:
    if method in methods.REQUESTS:
        return "client → server request" + (" (cancellable)" if method in CANCELLABLE else "")
    if method in methods.NOTIFICATIONS:
        return "client → server notification"
    assert method in methods.SERVER_NOTIFICATIONS, method
    return "server → client notification"


# --- protocol.md ----------------------------------------------------------------------------


def test_documented_methods_are_the_methods_table() -> None:
    assert set(SECTIONS) == set(methods.ALL_METHODS)
    assert len(methods.ALL_METHODS) == len(set(methods.ALL_METHODS))


def test_documented_capability_lists_every_method() -> None:
    documented = _docs.marked_json(PROTOCOL, "golden-capabilities")["experimental"]["dsh"]
    assert documented == {
        "protocolVersion": methods.PROTOCOL_VERSION,
        "methods": list(methods.ALL_METHODS),
    }
    assert set(documented["methods"]) == set(SECTIONS)


def test_wire_hash_is_current() -> None:
    documented = _docs.documented_hash(PROTOCOL)
    current = _docs.wire_hash(methods.ALL_METHODS, wire_types)
    assert documented is not None, "docs/protocol.md has no <!-- wire-hash: ... --> line"
    assert documented == current, (
        "methods or wire types changed: update docs/protocol.md, then the hash to " + current
    )
    assert PROTOCOL.rstrip().endswith(f"<!-- wire-hash: {documented} -->")


def test_wire_hash_is_order_independent_and_sensitive() -> None:
    listed = list(methods.ALL_METHODS)
    base = _docs.wire_hash(listed, wire_types)
    assert _docs.wire_hash(list(reversed(listed)), wire_types) == base
    assert _docs.wire_hash([*listed, "dsh/new/method"], wire_types) != base
    assert _docs.wire_hash(listed[1:], wire_types) != base


def _types_module(source: str) -> ModuleType:
    module = ModuleType("fake_wire_types")
    exec(
        compile("from __future__ import annotations\nimport attrs\n" + source, "fake", "exec"),
        module.__dict__,
    )
    return module


def test_wire_hash_sees_every_change_of_a_wire_type() -> None:
    listed = list(methods.ALL_METHODS)
    base = _types_module("@attrs.define\nclass A:\n    x: int\n    y: str | None = None\n")
    variants = [
        "@attrs.define\nclass A:\n    x: int | None\n    y: str | None = None\n",  # type
        "@attrs.define\nclass A:\n    x: int\n    y: str | None\n",  # optional -> required
        "@attrs.define\nclass A:\n    x: int\n    z: str | None = None\n",  # renamed
        "@attrs.define\nclass A:\n    x: int\n",  # removed
        "@attrs.define\nclass B:\n    x: int\n    y: str | None = None\n",  # class renamed
    ]
    hashes = {_docs.wire_hash(listed, _types_module(v)) for v in variants}
    assert _docs.wire_hash(listed, base) not in hashes and len(hashes) == len(variants)
    assert "ScopeFile(path?: str | None, " in _docs.wire_types(wire_types)
    assert "bytes: int | None, digest?: str | None" in _docs.wire_types(wire_types)


@pytest.mark.parametrize("method", methods.ALL_METHODS)
def test_method_section_has_every_part(method: str) -> None:
    section = SECTIONS[method]
    for part in PARTS:
        assert re.search(rf"^\*\*{part}:\*\*", section, re.MULTILINE), f"{method}: no **{part}:**"
    assert re.search(rf"^\*\*Method:\*\* `{re.escape(method)}`$", section, re.MULTILINE)
    assert _docs.section_direction(section) == expected_direction(method)
    assert f"<!-- golden: {method} " in section or f"<!-- golden: {method} -->" in section, (
        f"{method}: its section has no golden example named after it"
    )


@pytest.mark.parametrize("method", sorted(CANCELLABLE))
def test_cancellable_methods_document_request_cancelled(method: str) -> None:
    assert "RequestCancelled" in SECTIONS[method] and "-32800" in SECTIONS[method]


def test_every_golden_is_about_a_known_method() -> None:
    dsh = {g.method for g in GOLDENS.values() if g.method.startswith("dsh/")}
    assert dsh == set(methods.ALL_METHODS), "every dsh/ method has a golden, and no other"
    for golden in GOLDENS.values():
        assert golden.method.startswith(("dsh/", "textDocument/")), golden.name


# Codes that exist in errors.py but never reach a client: INVARIANT is not
# wired into the append path, and a cancelled prepare answers RequestCancelled (-32800).
NOT_ON_THE_WIRE = {errors.INVARIANT, errors.SESSION_REFERENCE_CANCELLED}


def test_error_table_lists_every_code_a_client_can_get() -> None:
    defined = {
        value for name, value in vars(errors).items() if name.isupper() and isinstance(value, str)
    }
    errors_section = PROTOCOL[PROTOCOL.index("\n## Errors\n") :]
    documented = set(re.findall(r"^\| `([A-Za-z_-]+)` \|", errors_section, re.MULTILINE))
    assert documented == defined - NOT_ON_THE_WIRE
    for code in ("unknown-session", "invalid-cwd", "invalid-event", "invalid-config"):
        assert code in documented
    assert "RequestCancelled" in errors_section and "-32800" in errors_section


def test_diagnostic_codes_are_the_servers() -> None:
    from dsh_sidecar.lsp import diagnostics

    documented = set(
        re.findall(r"^\| `([a-z-]+)` \| (?:Error|Warning|Information)", PROTOCOL, re.MULTILINE)
    )
    # The state codes, plus the two literal codes of the content checks.
    source = _docs.ROOT.joinpath("server/dsh_sidecar/lsp/diagnostics.py").read_text()
    literal = set(re.findall(r'"([a-z]+(?:-[a-z]+)+)"', source)) - {diagnostics.SOURCE}
    emitted = set(diagnostics._SEVERITY) | literal
    assert documented == emitted


# --- configuration.md -----------------------------------------------------------------------


def test_every_setting_is_documented() -> None:
    """The reference table lists every declared key once, in declaration order."""
    assert list(TABLE) == [k.wire for k in KEYS]
    assert set(DEFAULT_SETTINGS) == set(BY_WIRE)


def test_documented_defaults_are_the_codes() -> None:
    for key, row in TABLE.items():
        code = BY_WIRE[key].default
        assert row.default == code and type(row.default) is type(code), (
            f"{key}: documented default {row.default!r}, code default {code!r}"
        )
        assert DEFAULT_SETTINGS[key] == code, f"{key}: settings_to_json differs from the table"


def test_documented_types_are_the_declared_ones() -> None:
    for key, row in TABLE.items():
        assert row.type == BY_WIRE[key].type, f"{key}: documented {row.type}"


def test_who_may_set_it_is_the_declared_scope() -> None:
    for key, row in TABLE.items():
        assert row.who == ("user only" if BY_WIRE[key].user_only else "user or workspace"), key


def test_the_settings_a_repository_cannot_set_are_the_user_only_keys() -> None:
    section = CONFIGURATION.split("\n## Settings a repository cannot set\n", 1)[1].split("\n## ")[0]
    rows = re.findall(r"^\| (`.+?) \|", section, re.MULTILINE)
    listed = [name for row in rows for name in re.findall(r"`([a-zA-Z.]+)`", row)]
    assert sorted(listed) == sorted(USER_ONLY)


_TYPE_CHECK = {
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "string or null": lambda v: v is None or isinstance(v, str),
    "string[]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
}


def test_documented_types_fit_the_defaults() -> None:
    for key, row in TABLE.items():
        assert row.type in _TYPE_CHECK, f"{key}: unknown type {row.type!r}"
        assert _TYPE_CHECK[row.type](DEFAULT_SETTINGS[key]), f"{key}: type {row.type}"


def test_documented_defaults_are_accepted_back() -> None:
    tree = _docs.unflatten({key: row.default for key, row in TABLE.items()})
    assert parse_settings(tree) == Settings()
    # initializationOptions may be the bare tree or wrapped in "dsh" (the server's own read).
    for sent in (tree, {"dsh": tree}):
        assert parse_settings_leniently(sent, Settings()) == (Settings(), ())


def test_every_setting_has_its_own_section() -> None:
    headings = re.findall(r"^### `([a-zA-Z.]+)`$", CONFIGURATION, re.MULTILINE)
    assert headings == [k.wire for k in KEYS]
    sections = re.findall(r"^## `([a-zA-Z]+)`$", CONFIGURATION, re.MULTILINE)
    assert sections == list(SETTING_SECTIONS) == list(settings_to_json(Settings()))
    # Each key's heading lies under its section's.
    for key in KEYS:
        before = CONFIGURATION[: CONFIGURATION.index(f"\n### `{key.wire}`\n")]
        assert re.findall(r"^## (.+)$", before, re.MULTILINE)[-1] == f"`{key.section}`", key.wire


@pytest.mark.parametrize("key", [k.wire for k in KEYS])
def test_setting_section_states_doc_line_type_and_default(key: str) -> None:
    start = CONFIGURATION.index(f"### `{key}`\n")
    following = re.search(r"^##", CONFIGURATION[start + 4 :], re.MULTILINE)
    body = (
        CONFIGURATION[start : start + 4 + following.start()] if following else CONFIGURATION[start:]
    )
    row = TABLE[key]
    assert BY_WIRE[key].doc in " ".join(body.split()), f"{key}: its doc line is not in its section"
    assert f"**Type:** {row.type}" in body
    assert f"**Default:** `{json.dumps(row.default, separators=(', ', ': '))}`" in body


def _section_text(section: str) -> str:
    start = CONFIGURATION.index(f"\n## `{section}`\n")
    following = CONFIGURATION.find("\n## ", start + 1)
    return CONFIGURATION[start : following if following != -1 else len(CONFIGURATION)]


@pytest.mark.parametrize("section", SETTING_SECTIONS)
def test_section_examples_are_valid_and_agree(section: str) -> None:
    text = _section_text(section)
    vscode = _docs.fenced_blocks(text, "json")
    neovim = _docs.fenced_blocks(text, "lua")
    assert len(vscode) == 1 and len(neovim) == 1, f"{section}: one VS Code and one Neovim example"

    flat = json.loads(vscode[0])
    assert flat and all(k.startswith(f"dsh.{section}.") for k in flat), f"{section}: VS Code keys"
    assert set(k.removeprefix("dsh.") for k in flat) <= set(DEFAULT_SETTINGS)
    from_vscode = _docs.unflatten({k.removeprefix("dsh."): v for k, v in flat.items()})
    parse_settings(from_vscode)  # raises when the example is not valid

    assert "require('dsh_sidecar').setup" in neovim[0]
    from_neovim = lua_settings(neovim[0])
    parse_settings(from_neovim)
    assert set(from_neovim) == {section}
    # Both examples set the same keys to the same values, except that the Neovim one may add keys
    # only a terminal editor needs.
    vscode_keys = _docs.flatten(from_vscode)
    neovim_keys = _docs.flatten(from_neovim)
    assert {k: neovim_keys[k] for k in vscode_keys} == vscode_keys
    assert set(neovim_keys) - set(vscode_keys) <= TERMINAL_ONLY
    assert not set(vscode_keys) & TERMINAL_ONLY, f"{section}: a terminal-only key in VS Code's"


# Everything a user reads about settings: the docs, the editors' own pages and the READMEs.
USER_DOCS = sorted(
    [
        *_docs.ROOT.joinpath("docs").rglob("*.md"),
        *_docs.ROOT.joinpath("editors").glob("**/*.md"),
        *_docs.ROOT.joinpath("editors", "nvim", "doc").glob("*.txt"),
        _docs.ROOT / "README.md",
        _docs.ROOT / "vscode-extension" / "README.md",
    ]
)
# `instructions.maxBytes`, "dsh.store.path" (a VS Code example): a name in a server section.
_NAMED_SETTING = re.compile(
    r"[`\"](?:dsh\.)?(?P<wire>(?:"
    + "|".join(SETTING_SECTIONS)
    + r")\.(?P<name>[a-z][A-Za-z]*))[`\"]"
)


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: str(p.relative_to(_docs.ROOT)))
def test_docs_name_no_setting_the_table_lacks(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    # `store.py` (architecture.md) is a module, not a setting.
    named = {m["wire"] for m in _NAMED_SETTING.finditer(text) if m["name"] != "py"}
    assert named <= set(BY_WIRE), f"not declared in config/keys.py: {sorted(named - set(BY_WIRE))}"


def test_the_docs_scan_sees_settings() -> None:
    found = {m["wire"] for m in _NAMED_SETTING.finditer(CONFIGURATION)}
    assert found == set(BY_WIRE)


def test_invalid_values_are_refused_as_documented() -> None:
    """Spot checks of the "Invalid" notes: each is refused with a message naming the key."""
    cases: list[tuple[dict[str, Any], str]] = [
        ({"instructions": {"maxBytes": None}}, "instructions.maxBytes"),
        ({"instructions": {"maxBytes": "64k"}}, "instructions.maxBytes"),
        ({"instructions": {"maxSourceBytes": 0}}, "instructions.maxSourceBytes"),
        ({"instructions": {"maxSourceBytes": 1.5}}, "instructions.maxSourceBytes"),
        ({"instructions": {"dshHome": "  "}}, "instructions.dshHome"),
        ({"sessionReference": {"maxReferences": 4}}, "sessionReference.maxReferences"),
        ({"sessionReference": {"candidateLimit": 0}}, "sessionReference.candidateLimit"),
        ({"timeContext": {"timeZone": "Mars/Base"}}, "timeContext.timeZone"),
        ({"timeContext": {"refreshIntervalMs": -1}}, "timeContext.refreshIntervalMs"),
        ({"tmuxContext": {"refreshIntervalMs": 0.5}}, "tmuxContext.refreshIntervalMs"),
        ({"store": {"path": ""}}, "store.path"),
        ({"store": {"bogus": 1}}, "store.bogus"),
    ]
    for tree, key in cases:
        with pytest.raises(DshError) as caught:
            parse_settings(tree)
        assert caught.value.data.get("key") == key, (tree, caught.value)
    # Accepted although unusual, as documented.
    assert parse_settings({"instructions": {"maxBytes": -1}}).instructions.active is False
    integral = parse_settings({"instructions": {"maxSourceBytes": 1024.0}})
    assert integral.instructions.max_source_bytes == 1024


# --- a small reader for the Lua examples ------------------------------------------------------

_LUA_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<punct>[{}=,()]))"
)


def _lua_tokens(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _LUA_TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read Lua at {text[pos : pos + 20]!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match[kind]))
        pos = match.end()
    return tokens


def _lua_value(tokens: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    kind, value = tokens[i]
    if kind == "string":
        return value[1:-1], i + 1
    if kind == "number":
        return (float(value) if "." in value else int(value)), i + 1
    if kind == "name":
        literal = {"true": True, "false": False, "vim.NIL": None}
        if value not in literal:
            raise ValueError(f"unexpected Lua name {value!r}")
        return literal[value], i + 1
    if value != "{":
        raise ValueError(f"unexpected {value!r}")
    i += 1
    items: list[Any] = []
    fields: dict[str, Any] = {}
    while tokens[i][1] != "}":
        if tokens[i][0] == "name" and tokens[i + 1][1] == "=":
            fields[tokens[i][1]], i = _lua_value(tokens, i + 2)
        else:
            item, i = _lua_value(tokens, i)
            items.append(item)
        if tokens[i][1] == ",":
            i += 1
    if items and fields:
        raise ValueError("a Lua table that is both a list and a map")
    return (items if items or not fields else fields), i + 1


def lua_settings(example: str) -> dict[str, Any]:
    """The ``settings = {...}`` table of a setup example, as JSON data."""
    start = example.index("settings =")
    tokens = _lua_tokens(example[start + len("settings =") :])
    value, _ = _lua_value(tokens, 0)
    if not isinstance(value, dict):
        raise ValueError("settings must be a table of sections")
    return value


def test_lua_reader() -> None:
    example = "settings = { a = { b = 1, c = { 'x', \"y\" }, d = true, e = vim.NIL, f = {} } },\n})"
    assert lua_settings(example) == {"a": {"b": 1, "c": ["x", "y"], "d": True, "e": None, "f": []}}

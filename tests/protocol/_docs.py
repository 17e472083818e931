"""Parsers for the machine-readable parts of docs/protocol.md and docs/configuration.md.

The docs are written for people; a few marked blocks in them are also test input:

- ``### `dsh/...` `` headings: one section per method of protocol/methods.py;
- ``<!-- golden: NAME [after: DEP, ...] -->`` followed by a ```json block: an example that
  tests/protocol/test_golden_examples.py replays against the real server;
- ``<!-- golden-project -->`` and ``<!-- golden-capabilities -->`` blocks: the example project
  tree and the ``initialize`` capability every example assumes;
- ``<!-- wire-hash: ... -->``: sha256 of the sorted method list and of every wire type of
  protocol/types.py (its fields, their types and which are optional), so neither can change
  without this file being looked at again;
- the settings table of docs/configuration.md between its start and end markers.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_MD = ROOT / "docs" / "protocol.md"
CONFIGURATION_MD = ROOT / "docs" / "configuration.md"

_METHOD_HEADING = re.compile(r"^### `(?P<method>dsh/[^`]+)`\s*$", re.MULTILINE)
_ANY_HEADING = re.compile(r"^#{1,3} ", re.MULTILINE)
_GOLDEN = re.compile(
    r"^<!-- golden: (?P<name>\S+?)(?: after: (?P<after>[^>]*?))? -->\n```json\n(?P<body>.*?)\n```",
    re.MULTILINE | re.DOTALL,
)
_MARKED_BLOCK = r"^<!-- {marker} -->\n```json\n(?P<body>.*?)\n```"
_HASH = re.compile(r"^<!-- wire-hash: (?P<hash>[0-9a-f]{64}) -->\s*$", re.MULTILINE)
_DIRECTION = re.compile(r"^\*\*Direction:\*\* (?P<direction>.+?)\s*$", re.MULTILINE)


def protocol_text() -> str:
    return PROTOCOL_MD.read_text(encoding="utf-8")


def configuration_text() -> str:
    return CONFIGURATION_MD.read_text(encoding="utf-8")


def wire_types(module: ModuleType) -> str:
    """One line per attrs class defined in ``module``, sorted by name:
    ``Name(field: type, other?: type)`` where ``?`` marks an optional field (left out of the
    JSON when it has no value)."""
    lines = []
    for name, cls in sorted(inspect.getmembers(module, inspect.isclass)):
        if not attrs.has(cls) or cls.__module__ != module.__name__:
            continue
        # The annotation as written: cattrs resolves ``f.type`` to real types once it has
        # structured a class, which would make the hash depend on which tests ran first.
        written = inspect.get_annotations(cls)
        fields = ", ".join(
            f"{f.name}{'' if f.default is attrs.NOTHING else '?'}: {written.get(f.name, f.type)}"
            for f in attrs.fields(cls)
        )
        lines.append(f"{name}({fields})")
    return "\n".join(lines)


def wire_hash(methods: list[str] | tuple[str, ...], types_module: ModuleType) -> str:
    text = "\n".join(sorted(methods)) + "\n\n" + wire_types(types_module)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def method_sections(text: str) -> dict[str, str]:
    """Method name -> its section text (up to the next heading of level 1 to 3)."""
    out: dict[str, str] = {}
    for match in _METHOD_HEADING.finditer(text):
        method = match["method"]
        if method in out:
            raise ValueError(f"{method} is documented twice")
        rest = text[match.end() :]
        following = _ANY_HEADING.search(rest)
        out[method] = rest[: following.start()] if following else rest
    return out


def section_direction(section: str) -> str | None:
    match = _DIRECTION.search(section)
    return match["direction"] if match else None


def documented_hash(text: str) -> str | None:
    found = _HASH.findall(text)
    if len(found) > 1:
        raise ValueError("more than one wire-hash line")
    return found[0] if found else None


@attrs.frozen
class Golden:
    name: str
    after: tuple[str, ...]
    body: str  # JSON text with ${PROJECT}-style placeholders still in it

    @property
    def method(self) -> str:
        return self.name.split("#", 1)[0]

    def load(self, substitutions: dict[str, str]) -> dict[str, Any]:
        text = self.body
        # Longest placeholder first, so ${PROJECT_URI} is not read as ${PROJECT} + "_URI}".
        for key in sorted(substitutions, key=len, reverse=True):
            text = text.replace(key, substitutions[key])
        leftover = re.findall(r"\$\{[A-Z_]+\}", text)
        if leftover:
            raise ValueError(f"golden {self.name}: unknown placeholders {sorted(set(leftover))}")
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError(f"golden {self.name}: not a JSON object")
        return value


def goldens(text: str) -> dict[str, Golden]:
    out: dict[str, Golden] = {}
    for match in _GOLDEN.finditer(text):
        name = match["name"]
        if name in out:
            raise ValueError(f"golden {name} appears twice")
        after = tuple(a.strip() for a in (match["after"] or "").split(",") if a.strip())
        out[name] = Golden(name, after, match["body"])
    return out


def golden_markers(text: str) -> list[str]:
    """Every golden marker line, to catch one whose block the parser did not pick up."""
    return re.findall(r"^<!-- golden: (\S+).*-->", text, re.MULTILINE)


def marked_json(text: str, marker: str) -> Any:
    found = re.findall(
        _MARKED_BLOCK.format(marker=re.escape(marker)), text, re.MULTILINE | re.DOTALL
    )
    if len(found) != 1:
        raise ValueError(f"expected exactly one <!-- {marker} --> block, found {len(found)}")
    return json.loads(found[0])


# --- configuration.md -----------------------------------------------------------------------

_TABLE = re.compile(
    r"<!-- settings-table:start -->\n(?P<table>.*?)\n<!-- settings-table:end -->", re.DOTALL
)
_ROW = re.compile(
    r"^\| `(?P<key>[a-zA-Z.]+)` \| (?P<type>[^|]+?) \| `(?P<default>[^`]+)` \|"
    r".*\| (?P<who>[^|]+?) \|\s*$"
)


@attrs.frozen
class SettingRow:
    key: str
    type: str
    default: Any
    who: str  # "Who may set it": "user only" or "user or workspace"


def settings_table(text: str) -> dict[str, SettingRow]:
    """The reference table: one row per dotted key, the default as a JSON literal."""
    tables = _TABLE.findall(text)
    if len(tables) != 1:
        raise ValueError(f"expected one settings table, found {len(tables)}")
    rows: dict[str, SettingRow] = {}
    for line in tables[0].splitlines():
        if not line.startswith("| `"):
            continue
        match = _ROW.match(line)
        if match is None:
            raise ValueError(f"settings table row not understood: {line}")
        key = match["key"]
        if key in rows:
            raise ValueError(f"{key} is in the settings table twice")
        rows[key] = SettingRow(
            key, match["type"].strip(), json.loads(match["default"]), match["who"].strip()
        )
    return rows


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists and scalars are leaves."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = tree
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)\n```", text, re.MULTILINE | re.DOTALL)

"""The Neovim plugin passes the settings tree through untouched, but it falls back on a few
server defaults itself (config.lua: the root markers and instruction file names it attaches by);
those fallbacks are the key table's defaults (config/keys.py)."""

from __future__ import annotations

import re
from pathlib import Path

from dsh_sidecar.config.keys import BY_WIRE

CONFIG_LUA = Path(__file__).resolve().parents[2] / "editors/nvim/lua/dsh_sidecar/config.lua"

# `instructions.projectRootMarkers or { '.git' }`: a setting, else a list literal.
_FALLBACK = re.compile(r"\b(?P<section>instructions)\.(?P<name>\w+) or \{(?P<items>[^}]*)\}")


def test_the_plugins_fallbacks_are_the_declared_defaults() -> None:
    text = CONFIG_LUA.read_text(encoding="utf-8")
    fallbacks = {
        f"{m['section']}.{m['name']}": re.findall(r"'([^']*)'", m["items"])
        for m in _FALLBACK.finditer(text)
    }
    assert set(fallbacks) == {
        "instructions.projectRootMarkers",
        "instructions.instructionFileCandidates",
        "instructions.localInstructionFileCandidates",
    }
    for wire, items in fallbacks.items():
        assert items == BY_WIRE[wire].default, wire
    # hover.otherFiles: anything but its default turns the plugin's hover handling on.
    assert f"other ~= '{BY_WIRE['hover.otherFiles'].default}'" in text

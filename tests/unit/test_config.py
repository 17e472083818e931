"""Settings: dshHome precedence and tilde forms, candidate filtering, validation by key.

See docs/configuration.md and docs/reference/agent-instructions.md, Configuration.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.config import (
    InstructionSettings,
    Settings,
    describe_dsh_home,
    expand_tilde,
    filter_candidates,
    parse_settings,
    resolve_dsh_home,
    settings_to_json,
)
from dsh_sidecar.errors import INVALID_CONFIG, ConfigError, DshError

HOME = "/home/user"


# --- dshHome ----------------------------------------------------------------------------------


def test_explicit_dsh_home_wins_over_the_environment() -> None:
    assert resolve_dsh_home("/explicit", {"DSH_HOME": "/from-env"}, HOME) == "/explicit"


def test_non_blank_env_dsh_home_wins_over_the_default() -> None:
    assert resolve_dsh_home(None, {"DSH_HOME": "/from-env"}, HOME) == "/from-env"


@pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u3000", "\ufeff"])
def test_blank_env_dsh_home_counts_as_unset(blank: str) -> None:
    assert resolve_dsh_home(None, {"DSH_HOME": blank}, HOME) == "/home/user/.dsh"


def test_env_dsh_home_of_only_u0085_is_not_blank_in_js() -> None:
    # JS trim keeps U+0085, so upstream takes this odd value as a path (relative to cwd).
    assert resolve_dsh_home(None, {"DSH_HOME": "\u0085"}, HOME) == os.path.abspath("\u0085")


def test_default_dsh_home_is_dot_dsh_under_the_os_home() -> None:
    assert resolve_dsh_home(None, {}, HOME) == "/home/user/.dsh"


def test_default_uses_the_real_os_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("DSH_HOME", raising=False)
    assert InstructionSettings().home() == str(tmp_path / ".dsh")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("~", "/home/user"),
        ("~/x", "/home/user/x"),
        ("~\\x", "/home/user/x"),
        ("~/", "/home/user"),
        ("~user/x", os.path.abspath("~user/x")),  # only the bare tilde forms expand
        ("/abs/~/x", "/abs/~/x"),
    ],
)
def test_tilde_forms(given: str, expected: str) -> None:
    assert resolve_dsh_home(given, {}, HOME) == expected
    assert resolve_dsh_home(None, {"DSH_HOME": given}, HOME) == expected


def test_relative_dsh_home_is_made_absolute_against_the_process_cwd() -> None:
    assert resolve_dsh_home("rel/home", {}, HOME) == os.path.join(os.getcwd(), "rel/home")


def test_expand_tilde_leaves_other_paths_alone() -> None:
    assert expand_tilde("x/~", HOME) == "x/~"


@pytest.mark.parametrize(
    ("explicit", "env", "origin"),
    [
        ("/e", {"DSH_HOME": "/x"}, "setting instructions.dshHome"),
        (None, {"DSH_HOME": "/x"}, "environment DSH_HOME"),
        (None, {"DSH_HOME": "  "}, "default: DSH_HOME is blank"),
        (None, {}, "default: DSH_HOME is unset"),
    ],
)
def test_describe_dsh_home_names_the_rule(
    explicit: str | None, env: dict[str, str], origin: str
) -> None:
    path, got = describe_dsh_home(explicit, env, HOME)
    assert got == origin
    assert path == resolve_dsh_home(explicit, env, HOME)


def test_store_path_defaults_under_dsh_home() -> None:
    assert Settings().store_path({"DSH_HOME": "/h"}, HOME) == "/h/sessions.sqlite3"
    explicit = parse_settings({"store": {"path": "~/s.db"}})
    assert explicit.store_path({"DSH_HOME": "/h"}, HOME) == "/home/user/s.db"


# --- candidates -------------------------------------------------------------------------------


def test_candidate_filter_drops_exactly_the_unsafe_names() -> None:
    names = ("", ".", "..", "/", "\\", "a/b", "a\\b", "AGENTS.md", "...", " ", "agents.md")
    assert filter_candidates(names) == ("AGENTS.md", "...", " ", "agents.md")


def test_candidate_filter_keeps_order_and_duplicates() -> None:
    assert filter_candidates(("B.md", "A.md", "B.md")) == ("B.md", "A.md", "B.md")


def test_settings_expose_filtered_candidates() -> None:
    s = parse_settings(
        {
            "instructions": {
                "instructionFileCandidates": ["..", "RULES.md", "x/y.md"],
                "localInstructionFileCandidates": ["", "RULES.local.md"],
            }
        }
    ).instructions
    assert s.base_candidates == ("RULES.md",)
    assert s.local_candidates == ("RULES.local.md",)
    assert s.all_candidates == ("RULES.md", "RULES.local.md")
    # The raw lists are kept as given; only the properties filter.
    assert s.instruction_file_candidates == ("..", "RULES.md", "x/y.md")


# --- maxBytes: any number, but <= 0 / NaN / inf disables -------------------------------------


@pytest.mark.parametrize(
    ("value", "active"),
    [
        (65536, True),
        (1, True),
        (0.5, True),
        (0, False),
        (-1, False),
        (math.nan, False),
        (math.inf, False),
        (-math.inf, False),
        (10**400, False),  # JSON integer beyond double range: Infinity in JS
    ],
)
def test_max_bytes_activity(value: float, active: bool) -> None:
    s = parse_settings({"instructions": {"maxBytes": value}}).instructions
    assert s.active is active


def test_disabled_is_inactive_whatever_the_budget() -> None:
    assert not parse_settings({"instructions": {"enabled": False}}).instructions.active


# --- validation: every bad value names its key ------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, 0.5, 1.5, "x", "1", True, None, [1], math.inf, math.nan])
def test_max_source_bytes_must_be_a_positive_integer(value: Any) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings({"instructions": {"maxSourceBytes": value}})
    assert info.value.key == "instructions.maxSourceBytes"
    assert info.value.code == INVALID_CONFIG
    assert str(info.value).startswith("instructions.maxSourceBytes: must be a positive integer")


def test_max_source_bytes_message_is_exact() -> None:
    expected = r"^instructions\.maxSourceBytes: must be a positive integer, got 0$"
    with pytest.raises(ConfigError, match=expected):
        parse_settings({"instructions": {"maxSourceBytes": 0}})


@pytest.mark.parametrize("value", [1, 2.0, 1e6, 2**53 - 1, 2**53, 2**60])
def test_max_source_bytes_accepts_integers(value: Any) -> None:
    s = parse_settings({"instructions": {"maxSourceBytes": value}}).instructions
    assert s.max_source_bytes == int(value)
    assert isinstance(s.max_source_bytes, int)


def test_integer_beyond_double_range_is_rejected_not_a_crash() -> None:
    # JSON can spell 1e400 as digits; JS reads it as Infinity, which fails step(1).
    with pytest.raises(ConfigError, match="maxSourceBytes"):
        parse_settings({"instructions": {"maxSourceBytes": 10**400}})


@pytest.mark.parametrize(
    ("tree", "key"),
    [
        ({"instructions": {"maxBytes": "1"}}, "instructions.maxBytes"),
        ({"instructions": {"maxBytes": True}}, "instructions.maxBytes"),
        ({"instructions": {"maxBytes": None}}, "instructions.maxBytes"),
        ({"instructions": {"enabled": 1}}, "instructions.enabled"),
        ({"instructions": {"dshHome": ""}}, "instructions.dshHome"),
        ({"instructions": {"dshHome": "   "}}, "instructions.dshHome"),
        ({"instructions": {"dshHome": 3}}, "instructions.dshHome"),
        ({"instructions": {"projectRootMarkers": ".git"}}, "instructions.projectRootMarkers"),
        ({"instructions": {"projectRootMarkers": [1]}}, "instructions.projectRootMarkers"),
        (
            {"instructions": {"instructionFileCandidates": None}},
            "instructions.instructionFileCandidates",
        ),
        (
            {"instructions": {"localInstructionFileCandidates": [None]}},
            "instructions.localInstructionFileCandidates",
        ),
        ({"instructions": {"respectGitignore": "yes"}}, "instructions.respectGitignore"),
        ({"instructions": {"exclude": "vendor/"}}, "instructions.exclude"),
        ({"instructions": {"exclude": ["!"]}}, "instructions.exclude"),
        ({"instructions": {"bogus": 1}}, "instructions.bogus"),
        ({"instructions": []}, "instructions"),
        ({"store": {"path": ""}}, "store.path"),
        ({"store": {"where": "x"}}, "store.where"),
        ({"timeContext": {"refreshIntervalMs": -1}}, "timeContext.refreshIntervalMs"),
        ({"timeContext": {"timeZone": "Mars/Olympus"}}, "timeContext.timeZone"),
        ({"tmuxContext": {"enabled": "no"}}, "tmuxContext.enabled"),
        ({"tmuxContext": {"refreshIntervalMs": 0.5}}, "tmuxContext.refreshIntervalMs"),
        ({"unknownSection": {}}, "unknownSection"),
    ],
)
def test_every_invalid_value_names_its_key(tree: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(tree)
    assert info.value.key == key
    assert str(info.value).startswith(f"{key}: ")


@pytest.mark.parametrize("key", ["maxReferences", "candidateLimit", "maxReferenceBytes"])
def test_session_reference_errors_carry_their_key(key: str) -> None:
    with pytest.raises(DshError) as info:
        parse_settings({"sessionReference": {key: 0}})
    assert info.value.data == {"key": f"sessionReference.{key}"}
    assert key in info.value.message


def test_integers_beyond_double_range_are_refused_not_a_crash() -> None:
    # math.isfinite(10**400) raises OverflowError; the safe-integer checks must not reach it.
    with pytest.raises(DshError) as info:
        parse_settings({"sessionReference": {"maxReferences": 10**400}})
    assert info.value.data == {"key": "sessionReference.maxReferences"}
    with pytest.raises(ConfigError) as config_info:
        parse_settings({"tmuxContext": {"refreshIntervalMs": 10**400}})
    assert config_info.value.key == "tmuxContext.refreshIntervalMs"


def test_settings_must_be_an_object() -> None:
    with pytest.raises(ConfigError, match="settings must be an object"):
        parse_settings(["instructions"])


def test_keys_left_out_keep_the_base() -> None:
    base = parse_settings({"instructions": {"maxBytes": 10, "exclude": ["vendor/"]}})
    again = parse_settings({"instructions": {"maxSourceBytes": 7}}, base)
    assert again.instructions.max_bytes == 10
    assert again.instructions.exclude == ("vendor/",)
    assert again.instructions.max_source_bytes == 7


def test_settings_round_trip_through_json() -> None:
    s = parse_settings(
        {
            "instructions": {
                "maxBytes": 1.5,
                "dshHome": "~/h",
                "exclude": ["a/"],
                "allowedSymlinkTargets": ["~/dotfiles", "/etc/agents"],
            },
            "store": {"path": "/s.db"},
        }
    )
    assert parse_settings(settings_to_json(s)) == s


def test_defaults_match_the_protocol() -> None:
    assert settings_to_json(Settings())["instructions"] == {
        "enabled": True,
        "maxBytes": 65536,
        "maxSourceBytes": 1048576,
        "dshHome": None,
        "projectRootMarkers": [".git"],
        "instructionFileCandidates": ["AGENTS.md", "CLAUDE.md"],
        "localInstructionFileCandidates": ["AGENTS.local.md", "CLAUDE.local.md"],
        "respectGitignore": True,
        "exclude": [],
        "allowedSymlinkTargets": [],
        "overrideFiles": False,
        "imports": False,
        "ruleSets": [],
        "userGlobalFiles": [],
    }

"""The ``dsh`` tree read strictly (the first refused key refuses it all) and written back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from dsh_sidecar.errors import ConfigError

from . import checks
from .settings import (
    HOVER_OTHER_FILES,
    HoverSettings,
    InstructionSettings,
    SessionReferenceSettings,
    Settings,
    StoreSettings,
    TimeContextSettings,
    TmuxContextSettings,
)


def _section(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(key, "must be an object")
    return value


def _unknown_keys(section: str, raw: Mapping[str, Any], known: set[str]) -> None:
    extra = sorted(set(raw) - known)
    if extra:
        raise ConfigError(f"{section}.{extra[0]}", "is not a known setting")


def _parse_instructions(raw: Mapping[str, Any], base: InstructionSettings) -> InstructionSettings:
    p = "instructions"
    _unknown_keys(
        p,
        raw,
        {
            "enabled",
            "maxBytes",
            "maxSourceBytes",
            "dshHome",
            "projectRootMarkers",
            "instructionFileCandidates",
            "localInstructionFileCandidates",
            "respectGitignore",
            "exclude",
            "allowedSymlinkTargets",
            "overrideFiles",
            "imports",
            "ruleSets",
            "userGlobalFiles",
        },
    )
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = checks.boolean(f"{p}.enabled", raw["enabled"])
    if "maxBytes" in raw:
        changes["max_bytes"] = checks.budget(f"{p}.maxBytes", raw["maxBytes"])
    if "maxSourceBytes" in raw:
        changes["max_source_bytes"] = checks.positive_integer(
            f"{p}.maxSourceBytes", raw["maxSourceBytes"]
        )
    if "dshHome" in raw:
        changes["dsh_home"] = checks.optional_path(f"{p}.dshHome", raw["dshHome"])
    for key, attr in (
        ("projectRootMarkers", "project_root_markers"),
        ("instructionFileCandidates", "instruction_file_candidates"),
        ("localInstructionFileCandidates", "local_instruction_file_candidates"),
        ("exclude", "exclude"),
    ):
        if key in raw:
            changes[attr] = checks.string_list(f"{p}.{key}", raw[key])
    if "respectGitignore" in raw:
        changes["respect_gitignore"] = checks.boolean(
            f"{p}.respectGitignore", raw["respectGitignore"]
        )
    if "exclude" in changes:
        changes["exclude"] = checks.patterns(f"{p}.exclude", changes["exclude"])
    if "allowedSymlinkTargets" in raw:
        changes["allowed_symlink_targets"] = checks.directories(
            f"{p}.allowedSymlinkTargets", raw["allowedSymlinkTargets"]
        )
    for key, attr in (("overrideFiles", "override_files"), ("imports", "imports")):
        if key in raw:
            changes[attr] = checks.boolean(f"{p}.{key}", raw[key])
    if "ruleSets" in raw:
        changes["rule_sets"] = checks.rule_sets(f"{p}.ruleSets", raw["ruleSets"])
    if "userGlobalFiles" in raw:
        changes["user_global_files"] = checks.files(f"{p}.userGlobalFiles", raw["userGlobalFiles"])
    return attrs.evolve(base, **changes)


def _parse_session_reference(
    raw: Mapping[str, Any], base: SessionReferenceSettings
) -> SessionReferenceSettings:
    _unknown_keys(
        "sessionReference", raw, {"enabled", "maxReferences", "candidateLimit", "maxReferenceBytes"}
    )
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = checks.boolean("sessionReference.enabled", raw["enabled"])
    # Upstream checks the keys in this order and words the messages exactly so.
    for key, attr in (
        ("maxReferences", "max_references"),
        ("candidateLimit", "candidate_limit"),
        ("maxReferenceBytes", "max_reference_bytes"),
    ):
        if key in raw:
            changes[attr] = checks.reference_count(f"sessionReference.{key}", raw[key])
    if changes.get("max_references", 0) > 3:
        raise checks.reference_error(
            "sessionReference.maxReferences", "session-reference: maxReferences must not exceed 3"
        )
    return attrs.evolve(base, **changes)


def _parse_time(raw: Mapping[str, Any], base: TimeContextSettings) -> TimeContextSettings:
    _unknown_keys("timeContext", raw, {"enabled", "timeZone", "refreshIntervalMs"})
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = checks.boolean("timeContext.enabled", raw["enabled"])
    # Upstream validates the interval before the zone.
    if "refreshIntervalMs" in raw:
        changes["refresh_interval_ms"] = checks.refresh_interval("time-context")(
            "timeContext.refreshIntervalMs", raw["refreshIntervalMs"]
        )
    if "timeZone" in raw:
        changes["time_zone"] = checks.time_zone("timeContext.timeZone", raw["timeZone"])
    return attrs.evolve(base, **changes)


def _parse_tmux(raw: Mapping[str, Any], base: TmuxContextSettings) -> TmuxContextSettings:
    _unknown_keys("tmuxContext", raw, {"enabled", "refreshIntervalMs", "useClientProcess"})
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = checks.boolean("tmuxContext.enabled", raw["enabled"])
    if "refreshIntervalMs" in raw:
        changes["refresh_interval_ms"] = checks.refresh_interval("tmux-context")(
            "tmuxContext.refreshIntervalMs", raw["refreshIntervalMs"]
        )
    if "useClientProcess" in raw:
        changes["use_client_process"] = checks.boolean(
            "tmuxContext.useClientProcess", raw["useClientProcess"]
        )
    return attrs.evolve(base, **changes)


def _parse_store(raw: Mapping[str, Any], base: StoreSettings) -> StoreSettings:
    _unknown_keys("store", raw, {"path", "busyTimeoutMs"})
    changes: dict[str, Any] = {}
    if "path" in raw:
        changes["path"] = checks.optional_path("store.path", raw["path"])
    if "busyTimeoutMs" in raw:
        changes["busy_timeout_ms"] = checks.non_negative_safe_integer(
            "store.busyTimeoutMs", raw["busyTimeoutMs"]
        )
    return attrs.evolve(base, **changes)


def _parse_hover(raw: Mapping[str, Any], base: HoverSettings) -> HoverSettings:
    _unknown_keys("hover", raw, {"otherFiles"})
    if "otherFiles" in raw:
        return HoverSettings(
            other_files=checks.one_of(*HOVER_OTHER_FILES)("hover.otherFiles", raw["otherFiles"])
        )
    return base


def parse_settings(raw: Any, base: Settings) -> Settings:
    if raw is None:
        return base
    if not isinstance(raw, Mapping):
        raise ConfigError("dsh", "settings must be an object")
    known = {"instructions", "sessionReference", "timeContext", "tmuxContext", "store", "hover"}
    extra = sorted(set(raw) - known)
    if extra:
        raise ConfigError(extra[0], "is not a known setting")
    return Settings(
        instructions=_parse_instructions(_section(raw, "instructions"), base.instructions),
        session_reference=_parse_session_reference(
            _section(raw, "sessionReference"), base.session_reference
        ),
        time_context=_parse_time(_section(raw, "timeContext"), base.time_context),
        tmux_context=_parse_tmux(_section(raw, "tmuxContext"), base.tmux_context),
        store=_parse_store(_section(raw, "store"), base.store),
        hover=_parse_hover(_section(raw, "hover"), base.hover),
    )


def settings_to_json(settings: Settings) -> dict[str, Any]:
    """The camelCase tree of ``settings`` (what ``Settings.from_json`` reads back)."""
    i, r, t, x = (
        settings.instructions,
        settings.session_reference,
        settings.time_context,
        settings.tmux_context,
    )
    return {
        "instructions": {
            "enabled": i.enabled,
            "maxBytes": i.max_bytes,
            "maxSourceBytes": i.max_source_bytes,
            "dshHome": i.dsh_home,
            "projectRootMarkers": list(i.project_root_markers),
            "instructionFileCandidates": list(i.instruction_file_candidates),
            "localInstructionFileCandidates": list(i.local_instruction_file_candidates),
            "respectGitignore": i.respect_gitignore,
            "exclude": list(i.exclude),
            "allowedSymlinkTargets": list(i.allowed_symlink_targets),
            "overrideFiles": i.override_files,
            "imports": i.imports,
            "ruleSets": list(i.rule_sets),
            "userGlobalFiles": list(i.user_global_files),
        },
        "sessionReference": {
            "enabled": r.enabled,
            "maxReferences": r.max_references,
            "candidateLimit": r.candidate_limit,
            "maxReferenceBytes": r.max_reference_bytes,
        },
        "timeContext": {
            "enabled": t.enabled,
            "timeZone": t.time_zone,
            "refreshIntervalMs": t.refresh_interval_ms,
        },
        "tmuxContext": {
            "enabled": x.enabled,
            "refreshIntervalMs": x.refresh_interval_ms,
            "useClientProcess": x.use_client_process,
        },
        "store": {"path": settings.store.path, "busyTimeoutMs": settings.store.busy_timeout_ms},
        "hover": {"otherFiles": settings.hover.other_files},
    }

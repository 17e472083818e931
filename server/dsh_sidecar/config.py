"""Settings: the ``dsh`` tree of docs/configuration.md, normalized as upstream does.

Upstream's rules for the instruction keys: docs/reference/agent-instructions.md, Configuration.

Parsing is explicit rather than a generic structure call so that every invalid value is reported
with the dotted camelCase key that names it, and nothing falls back silently.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import attrs

from dsh_sidecar import errors
from dsh_sidecar.errors import ConfigError, DshError
from dsh_sidecar.jsutil import js_trim
from dsh_sidecar.rule_sets import RULE_SET_NAMES

DEFAULT_BASE_CANDIDATES = ("AGENTS.md", "CLAUDE.md")
DEFAULT_LOCAL_CANDIDATES = ("AGENTS.local.md", "CLAUDE.local.md")
DEFAULT_MAX_BYTES = 65536
DEFAULT_MAX_SOURCE_BYTES = 1048576
MAX_SAFE_INTEGER = 2**53 - 1
DEFAULT_HOME_DIRNAME = ".dsh"
# Codex's override: in a directory where it exists it replaces that directory's AGENTS.md.
OVERRIDE_NAME = "AGENTS.override.md"
OVERRIDDEN_NAME = "AGENTS.md"


def filter_candidates(names: tuple[str, ...]) -> tuple[str, ...]:
    """Same-directory file names only: drop '', '.', '..' and anything with a separator."""
    return tuple(n for n in names if n not in ("", ".", "..") and "/" not in n and "\\" not in n)


def os_home(env: Mapping[str, str] | None = None) -> str:
    """The user's home directory: ``$HOME`` of ``env`` (this process's environment by default)
    when it is set and not empty, else this user's entry in the password database, which is
    where Python's ``expanduser`` and Node's ``os.homedir`` look when ``HOME`` is unset.

    An empty ``HOME`` counts as unset: taken literally it would put the DSH home at ``/.dsh``.
    Without either, nothing sensible is left to guess, so the caller gets a ``ConfigError``
    that says what to set.
    """
    home = (os.environ if env is None else env).get("HOME")
    if home:
        return home
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):  # no pwd module (Windows), or no entry for this uid
        entry = ""
    if entry:
        return entry
    raise ConfigError(
        "instructions.dshHome",
        "the home directory is unknown (HOME is empty or unset and this user has no home "
        "directory in the password database); set DSH_HOME or instructions.dshHome",
    )


def os_home_or_default(home: str | None) -> str:
    """``home`` when the caller knows it (a session's environment), else this process's."""
    return home if home is not None else os_home()


def expand_tilde(path: str, home: str) -> str:
    if path == "~":
        return home
    if path.startswith(("~/", "~\\")):
        return os.path.join(home, path[2:])
    return path


def default_dsh_home(home: str | None = None) -> str:
    return os.path.abspath(os.path.join(home or os_home(), DEFAULT_HOME_DIRNAME))


def resolve_dsh_home(
    explicit: str | None, env: Mapping[str, str] | None = None, home: str | None = None
) -> str:
    """Explicit setting, then a non-blank ``$DSH_HOME``, then ``~/.dsh``; tilde-expanded, absolute."""
    return describe_dsh_home(explicit, env, home)[0]


def describe_dsh_home(
    explicit: str | None, env: Mapping[str, str] | None = None, home: str | None = None
) -> tuple[str, str]:
    """``resolve_dsh_home`` plus which rule chose it, for ``dsh-sidecar doctor``."""
    env = os.environ if env is None else env
    if explicit is not None:
        chosen, origin = explicit, "setting instructions.dshHome"
    else:
        from_env = env.get("DSH_HOME")
        if from_env is None:
            chosen, origin = None, "default (DSH_HOME is unset)"
        elif not js_trim(from_env):
            # Upstream counts a blank or whitespace-only value as unset.
            chosen, origin = None, "default (DSH_HOME is blank)"
        else:
            chosen, origin = from_env, "environment DSH_HOME"
    if chosen is None:
        return default_dsh_home(home or os_home()), origin
    if chosen == "~" or chosen.startswith(("~/", "~\\")):
        chosen = expand_tilde(chosen, home or os_home())
    return os.path.abspath(chosen), origin


@attrs.frozen
class InstructionSettings:
    enabled: bool = True
    max_bytes: float = DEFAULT_MAX_BYTES
    max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES
    dsh_home: str | None = None
    project_root_markers: tuple[str, ...] = (".git",)
    instruction_file_candidates: tuple[str, ...] = DEFAULT_BASE_CANDIDATES
    local_instruction_file_candidates: tuple[str, ...] = DEFAULT_LOCAL_CANDIDATES
    respect_gitignore: bool = True
    exclude: tuple[str, ...] = ()
    # Directories outside the project that a project instruction file may link into (absolute,
    # or ``~``-relative); expanded against the home directory by ``symlink_target_dirs``.
    allowed_symlink_targets: tuple[str, ...] = ()
    # The conventions other agents' repositories carry, each off by default
    # (docs/configuration.md): AGENTS.override.md, @path imports, path-scoped rule folders,
    # and more user-global files after $DSH_HOME/AGENTS.md.
    override_files: bool = False
    imports: bool = False
    rule_sets: tuple[str, ...] = ()
    user_global_files: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        """False when disabled or when the budget is non-positive or non-finite.

        Upstream turns itself off for such a budget (docs/reference/agent-instructions.md,
        Configuration).
        """
        return self.enabled and math.isfinite(self.max_bytes) and self.max_bytes > 0

    @property
    def base_candidates(self) -> tuple[str, ...]:
        return filter_candidates(self.instruction_file_candidates)

    @property
    def local_candidates(self) -> tuple[str, ...]:
        return filter_candidates(self.local_instruction_file_candidates)

    @property
    def all_candidates(self) -> tuple[str, ...]:
        return self.base_candidates + self.local_candidates

    @property
    def directory_names(self) -> tuple[str, ...]:
        """The base names probed in each directory, in order: with ``override_files``,
        ``AGENTS.override.md`` takes the slot right before ``AGENTS.md``, which it replaces."""
        base = self.base_candidates
        if self.override_files and OVERRIDDEN_NAME in base and OVERRIDE_NAME not in base:
            index = base.index(OVERRIDDEN_NAME)
            return (*base[:index], OVERRIDE_NAME, *base[index:])
        return base

    @property
    def overrides(self) -> bool:
        """Whether a directory's AGENTS.override.md replaces its AGENTS.md."""
        return self.override_files and OVERRIDDEN_NAME in self.base_candidates

    def user_global_paths(self, home: str) -> tuple[tuple[str, str], ...]:
        """``(entry as written, absolute path)`` of each extra user-global file, in order."""
        return tuple(
            (entry, os.path.normpath(expand_tilde(entry, home))) for entry in self.user_global_files
        )

    def home(self, env: Mapping[str, str] | None = None, home: str | None = None) -> str:
        return resolve_dsh_home(self.dsh_home, env, home)

    def symlink_target_dirs(self, home: str) -> tuple[str, ...]:
        """``allowed_symlink_targets`` as absolute paths, ``~`` expanded to ``home``."""
        return tuple(os.path.normpath(expand_tilde(d, home)) for d in self.allowed_symlink_targets)


@attrs.frozen
class SessionReferenceSettings:
    enabled: bool = True
    max_references: int = 3
    candidate_limit: int = 50
    max_reference_bytes: int = 65536


@attrs.frozen
class TimeContextSettings:
    enabled: bool = False
    time_zone: str | None = None
    refresh_interval_ms: int = 0


@attrs.frozen
class TmuxContextSettings:
    enabled: bool = False
    refresh_interval_ms: int = 0
    # Terminal editors (Neovim in a tmux pane) spawn the sidecar without a controlling tty; with
    # this on, the tty of the client's processId from ``initialize`` stands in for our own.
    use_client_process: bool = False


HOVER_OTHER_FILES = ("off", "firstLine", "always")


@attrs.frozen
class HoverSettings:
    # Hover on a file that is not an instruction file: off (the status bar and inspector tell the
    # chain), on its first line only, or everywhere (it fires on every cursor rest).
    other_files: str = "off"


DEFAULT_BUSY_TIMEOUT_MS = 5000


@attrs.frozen
class StoreSettings:
    path: str | None = None
    # How long a write waits for another process's write lock before failing with store-busy.
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS


@attrs.frozen
class Settings:
    instructions: InstructionSettings = InstructionSettings()
    session_reference: SessionReferenceSettings = SessionReferenceSettings()
    time_context: TimeContextSettings = TimeContextSettings()
    tmux_context: TmuxContextSettings = TmuxContextSettings()
    store: StoreSettings = StoreSettings()
    hover: HoverSettings = HoverSettings()

    def store_path(self, env: Mapping[str, str] | None = None, home: str | None = None) -> str:
        path = self.store.path
        if path is not None:
            if path == "~" or path.startswith(("~/", "~\\")):
                path = expand_tilde(path, home or os_home())
            return os.path.abspath(path)
        return os.path.join(self.instructions.home(env, home), "sessions.sqlite3")

    @classmethod
    def from_json(cls, raw: Any, base: Settings | None = None) -> Settings:
        """Parse the camelCase tree; keys left out keep ``base`` (or the defaults)."""
        return _parse_settings(raw, base or cls())


# --- parsing ----------------------------------------------------------------------------------


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


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, f"must be true or false, got {value!r}")
    return value


def _number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, f"must be a number, got {value!r}")
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        # JSON may carry an integer beyond double range (1e400 written out); JS reads it as
        # Infinity, and Python's math.isfinite would raise OverflowError on it.
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value


def _string_list(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(key, "must be a list of strings")
    return tuple(value)


def _optional_path(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not js_trim(value):
        raise ConfigError(key, "must be a non-blank path or null")
    return value


def _safe_int(value: Any, minimum: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        # Compared as an int: float(value) would overflow for integers beyond double range.
        return minimum <= value <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and minimum <= value <= MAX_SAFE_INTEGER
    return False


def _positive_integer(value: Any) -> bool:
    """Upstream's ``z.number().step(1).min(1)``: any integral double >= 1, unlike the session
    settings, which must also be safe integers."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        as_double = float(value)
    except OverflowError:  # an integer beyond double range is Infinity in JS, which fails step(1)
        return False
    return math.isfinite(as_double) and as_double.is_integer() and as_double >= 1


def _parse_instructions(raw: Mapping[str, Any], base: InstructionSettings) -> InstructionSettings:
    p = "instructions"
    _unknown_keys(p, raw, {
        "enabled", "maxBytes", "maxSourceBytes", "dshHome", "projectRootMarkers",
        "instructionFileCandidates", "localInstructionFileCandidates", "respectGitignore",
        "exclude", "allowedSymlinkTargets", "overrideFiles", "imports", "ruleSets",
        "userGlobalFiles",
    })  # fmt: skip
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = _bool(f"{p}.enabled", raw["enabled"])
    if "maxBytes" in raw:
        if raw["maxBytes"] is None:
            raise ConfigError(f"{p}.maxBytes", "is required (a number of bytes)")
        changes["max_bytes"] = _number(f"{p}.maxBytes", raw["maxBytes"])
    if "maxSourceBytes" in raw:
        value = raw["maxSourceBytes"]
        if not _positive_integer(value):
            raise ConfigError(f"{p}.maxSourceBytes", f"must be a positive integer, got {value!r}")
        changes["max_source_bytes"] = int(value)
    if "dshHome" in raw:
        changes["dsh_home"] = _optional_path(f"{p}.dshHome", raw["dshHome"])
    for key, attr in (
        ("projectRootMarkers", "project_root_markers"),
        ("instructionFileCandidates", "instruction_file_candidates"),
        ("localInstructionFileCandidates", "local_instruction_file_candidates"),
        ("exclude", "exclude"),
    ):
        if key in raw:
            changes[attr] = _string_list(f"{p}.{key}", raw[key])
    if "respectGitignore" in raw:
        changes["respect_gitignore"] = _bool(f"{p}.respectGitignore", raw["respectGitignore"])
    if "exclude" in changes:
        _check_patterns(f"{p}.exclude", changes["exclude"])
    if "allowedSymlinkTargets" in raw:
        name = f"{p}.allowedSymlinkTargets"
        dirs = _string_list(name, raw["allowedSymlinkTargets"])
        changes["allowed_symlink_targets"] = _directories(name, dirs)
    for key, attr in (("overrideFiles", "override_files"), ("imports", "imports")):
        if key in raw:
            changes[attr] = _bool(f"{p}.{key}", raw[key])
    if "ruleSets" in raw:
        changes["rule_sets"] = _rule_sets(f"{p}.ruleSets", raw["ruleSets"])
    if "userGlobalFiles" in raw:
        name = f"{p}.userGlobalFiles"
        changes["user_global_files"] = _files(name, _string_list(name, raw["userGlobalFiles"]))
    return attrs.evolve(base, **changes)


def _rule_sets(key: str, value: Any) -> tuple[str, ...]:
    names = _string_list(key, value)
    allowed = ", ".join(f'"{n}"' for n in RULE_SET_NAMES)
    for index, name in enumerate(names):
        if name not in RULE_SET_NAMES:
            raise ConfigError(key, f"entry {index} must be one of {allowed}, got {name!r}")
        if name in names[:index]:
            raise ConfigError(key, f"entry {index} repeats {name!r}")
    return names


def _files(key: str, entries: tuple[str, ...]) -> tuple[str, ...]:
    """Absolute or ``~/``-relative files; ``~`` alone is a directory, not a file."""
    for index, entry in enumerate(entries):
        if "\0" in entry:
            raise ConfigError(key, f"entry {index} contains a NUL character")
        if not (os.path.isabs(entry) or entry.startswith("~/")) or entry.endswith("/"):
            raise ConfigError(
                key, f"entry {index} must be a file's absolute path or start with ~/, got {entry!r}"
            )
    return entries


def _directories(key: str, entries: tuple[str, ...]) -> tuple[str, ...]:
    """Absolute or ``~``-relative directories; a relative one would depend on the sidecar's
    working directory, which no user means."""
    for index, entry in enumerate(entries):
        if "\0" in entry:
            raise ConfigError(key, f"entry {index} contains a NUL character")
        if not (os.path.isabs(entry) or entry == "~" or entry.startswith("~/")):
            raise ConfigError(
                key, f"entry {index} must be an absolute path or start with ~/, got {entry!r}"
            )
    return entries


def _check_patterns(key: str, patterns: tuple[str, ...]) -> None:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines(patterns)
    except Exception as exc:  # pathspec raises several types for a malformed pattern
        raise ConfigError(key, f"invalid pattern: {exc}") from exc


def _parse_session_reference(
    raw: Mapping[str, Any], base: SessionReferenceSettings
) -> SessionReferenceSettings:
    _unknown_keys(
        "sessionReference", raw, {"enabled", "maxReferences", "candidateLimit", "maxReferenceBytes"}
    )
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = _bool("sessionReference.enabled", raw["enabled"])
    # Upstream checks the keys in this order and words the messages exactly so.
    for key, attr in (
        ("maxReferences", "max_references"),
        ("candidateLimit", "candidate_limit"),
        ("maxReferenceBytes", "max_reference_bytes"),
    ):
        if key in raw:
            if not _safe_int(raw[key], 1):
                raise _reference_config_error(
                    key, f"session-reference: {key} must be a positive safe integer"
                )
            changes[attr] = int(raw[key])
    if changes.get("max_references", 0) > 3:
        raise _reference_config_error(
            "maxReferences", "session-reference: maxReferences must not exceed 3"
        )
    return attrs.evolve(base, **changes)


def _reference_config_error(key: str, message: str) -> DshError:
    return DshError(
        errors.SESSION_REFERENCE_INVALID_CONFIG, message, {"key": f"sessionReference.{key}"}
    )


def _interval(section: str, plugin: str, value: Any) -> int:
    if not _safe_int(value, 0):
        shown = value if not isinstance(value, float) or not value.is_integer() else int(value)
        raise ConfigError(
            f"{section}.refreshIntervalMs",
            f"{plugin}: refreshIntervalMs must be a non-negative safe integer, got {shown}",
        )
    return int(value)


def _parse_time(raw: Mapping[str, Any], base: TimeContextSettings) -> TimeContextSettings:
    _unknown_keys("timeContext", raw, {"enabled", "timeZone", "refreshIntervalMs"})
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = _bool("timeContext.enabled", raw["enabled"])
    # Upstream validates the interval before the zone.
    if "refreshIntervalMs" in raw:
        changes["refresh_interval_ms"] = _interval(
            "timeContext", "time-context", raw["refreshIntervalMs"]
        )
    if "timeZone" in raw and raw["timeZone"] is not None:
        zone = raw["timeZone"]
        from dsh_sidecar.zones import canonical_time_zone

        if not isinstance(zone, str) or canonical_time_zone(zone) is None:
            raise ConfigError(
                "timeContext.timeZone", f'time-context: invalid IANA timeZone "{zone}"'
            )
        changes["time_zone"] = zone
    elif "timeZone" in raw:
        changes["time_zone"] = None
    return attrs.evolve(base, **changes)


def _parse_tmux(raw: Mapping[str, Any], base: TmuxContextSettings) -> TmuxContextSettings:
    _unknown_keys("tmuxContext", raw, {"enabled", "refreshIntervalMs", "useClientProcess"})
    changes: dict[str, Any] = {}
    if "enabled" in raw:
        changes["enabled"] = _bool("tmuxContext.enabled", raw["enabled"])
    if "refreshIntervalMs" in raw:
        changes["refresh_interval_ms"] = _interval(
            "tmuxContext", "tmux-context", raw["refreshIntervalMs"]
        )
    if "useClientProcess" in raw:
        changes["use_client_process"] = _bool(
            "tmuxContext.useClientProcess", raw["useClientProcess"]
        )
    return attrs.evolve(base, **changes)


def _parse_store(raw: Mapping[str, Any], base: StoreSettings) -> StoreSettings:
    _unknown_keys("store", raw, {"path", "busyTimeoutMs"})
    changes: dict[str, Any] = {}
    if "path" in raw:
        changes["path"] = _optional_path("store.path", raw["path"])
    if "busyTimeoutMs" in raw:
        value = raw["busyTimeoutMs"]
        if not _safe_int(value, 0):
            raise ConfigError(
                "store.busyTimeoutMs", f"must be a non-negative safe integer, got {value!r}"
            )
        changes["busy_timeout_ms"] = int(value)
    return attrs.evolve(base, **changes)


def _parse_hover(raw: Mapping[str, Any], base: HoverSettings) -> HoverSettings:
    _unknown_keys("hover", raw, {"otherFiles"})
    if "otherFiles" in raw:
        value = raw["otherFiles"]
        if value not in HOVER_OTHER_FILES:
            allowed = ", ".join(repr(v) for v in HOVER_OTHER_FILES)
            raise ConfigError("hover.otherFiles", f"must be one of {allowed}, got {value!r}")
        return HoverSettings(other_files=value)
    return base


def _parse_settings(raw: Any, base: Settings) -> Settings:
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
            "enabled": i.enabled, "maxBytes": i.max_bytes, "maxSourceBytes": i.max_source_bytes,
            "dshHome": i.dsh_home, "projectRootMarkers": list(i.project_root_markers),
            "instructionFileCandidates": list(i.instruction_file_candidates),
            "localInstructionFileCandidates": list(i.local_instruction_file_candidates),
            "respectGitignore": i.respect_gitignore, "exclude": list(i.exclude),
            "allowedSymlinkTargets": list(i.allowed_symlink_targets),
            "overrideFiles": i.override_files, "imports": i.imports,
            "ruleSets": list(i.rule_sets), "userGlobalFiles": list(i.user_global_files),
        },
        "sessionReference": {
            "enabled": r.enabled, "maxReferences": r.max_references,
            "candidateLimit": r.candidate_limit, "maxReferenceBytes": r.max_reference_bytes,
        },
        "timeContext": {
            "enabled": t.enabled, "timeZone": t.time_zone, "refreshIntervalMs": t.refresh_interval_ms,
        },
        "tmuxContext": {
            "enabled": x.enabled, "refreshIntervalMs": x.refresh_interval_ms,
            "useClientProcess": x.use_client_process,
        },
        "store": {"path": settings.store.path, "busyTimeoutMs": settings.store.busy_timeout_ms},
        "hover": {"otherFiles": settings.hover.other_files},
    }  # fmt: skip


# --- lenient parsing: one bad key never refuses the others ---------------------------------------

# Forms to name for keys whose refusal message does not already say what is expected.
_EXPECTED_FORMS = {
    "timeContext.timeZone": 'an IANA time zone name such as "Europe/Paris", or null',
}


@attrs.frozen
class SettingProblem:
    """One refused key: its dotted name, the value given, and why (naming the expected form)."""

    key: str
    value: Any
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "message": self.message}


def parse_settings_leniently(
    raw: Any, base: Settings
) -> tuple[Settings, tuple[SettingProblem, ...]]:
    """Like ``Settings.from_json``, but a refused key keeps its ``base`` value (the default at
    start) instead of refusing the whole tree; every refused key is reported once.

    Each refusal names its key (``ConfigError.key`` or ``data["key"]``); that leaf is taken out
    of a copy of ``raw`` and the rest parsed again, so the checks themselves stay in one place.
    """
    if isinstance(raw, Mapping) and set(raw) == {"dsh"}:
        raw = raw["dsh"]
    tree: Any = _copy_tree(raw)
    problems: list[SettingProblem] = []
    while True:
        try:
            return _parse_settings(tree, base), tuple(problems)
        except DshError as exc:
            key = exc.data.get("key") if isinstance(exc.data, dict) else None
            value, removed = _pop_leaf(tree, key) if isinstance(key, str) else (None, False)
            if not removed:  # nothing to take out (the tree itself is not an object)
                problems.append(SettingProblem("dsh", tree, exc.message))
                return base, tuple(problems)
            problems.append(SettingProblem(str(key), value, _with_expected(str(key), exc.message)))


def _copy_tree(raw: Any) -> Any:
    if isinstance(raw, Mapping):
        return {k: _copy_tree(v) for k, v in raw.items()}
    return raw


def _pop_leaf(tree: Any, key: str) -> tuple[Any, bool]:
    """Remove ``a.b`` from ``tree``; returns the removed value and whether anything was."""
    *parents, leaf = key.split(".")
    node = tree
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or leaf not in node:
        return None, False
    return node.pop(leaf), True


def _with_expected(key: str, message: str) -> str:
    expected = _EXPECTED_FORMS.get(key)
    if expected is None and "is not a known setting" in message:
        expected = "no such key in this version of the sidecar; remove it"
    return message if expected is None else f"{message} (expected {expected})"

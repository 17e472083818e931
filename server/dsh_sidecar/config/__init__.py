"""Settings: the ``dsh`` tree of docs/configuration.md, normalized as upstream does.

One module a job: ``keys`` (every settings key declared once: its wire name, check, type, doc
line and scope; the rest derives from it), ``settings`` (the frozen sections and their defaults),
``checks`` (each key's value check and its exact refusal), ``parse`` (the strict read and the
tree written back), ``lenient`` (the read that keeps going past a refused key), ``secrets``
(the values never quoted back: those of keys named like a secret) and ``home`` (the home
directory and the DSH home). Everything else imports from here.
"""

from __future__ import annotations

from .checks import MAX_SAFE_INTEGER
from .home import (
    DEFAULT_HOME_DIRNAME,
    default_dsh_home,
    describe_dsh_home,
    expand_tilde,
    os_home,
    os_home_or_default,
    resolve_dsh_home,
)
from .lenient import SettingProblem, parse_settings_leniently
from .parse import parse_settings, settings_to_json
from .settings import (
    DEFAULT_BASE_CANDIDATES,
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_LOCAL_CANDIDATES,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_SOURCE_BYTES,
    HOVER_OTHER_FILES,
    OVERRIDDEN_NAME,
    OVERRIDE_NAME,
    HoverSettings,
    InstructionSettings,
    SessionReferenceSettings,
    Settings,
    StoreSettings,
    TimeContextSettings,
    TmuxContextSettings,
    filter_candidates,
)

__all__ = [
    "DEFAULT_BASE_CANDIDATES",
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_HOME_DIRNAME",
    "DEFAULT_LOCAL_CANDIDATES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_SOURCE_BYTES",
    "HOVER_OTHER_FILES",
    "MAX_SAFE_INTEGER",
    "OVERRIDDEN_NAME",
    "OVERRIDE_NAME",
    "HoverSettings",
    "InstructionSettings",
    "SessionReferenceSettings",
    "SettingProblem",
    "Settings",
    "StoreSettings",
    "TimeContextSettings",
    "TmuxContextSettings",
    "default_dsh_home",
    "describe_dsh_home",
    "expand_tilde",
    "filter_candidates",
    "os_home",
    "os_home_or_default",
    "parse_settings",
    "parse_settings_leniently",
    "resolve_dsh_home",
    "settings_to_json",
]

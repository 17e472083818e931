"""The home directory and the DSH home: which one applies, and ``~`` expansion."""

from __future__ import annotations

import os
from collections.abc import Mapping

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.jsutil import js_trim

DEFAULT_HOME_DIRNAME = ".dsh"


def os_home(env: Mapping[str, str] | None = None) -> str:
    """The user's home directory: ``$HOME`` of ``env`` (this process's environment by default)
    when it is set and not empty, else this user's entry in the password database, which is
    where Python's ``expanduser`` and Node's ``os.homedir`` look when ``HOME`` is unset.

    An empty ``HOME`` counts as unset too, where both differ: Node's ``os.homedir`` returns the
    empty string (a DSH home relative to the working directory) and Python's ``expanduser``
    makes ``~`` the root, so the DSH home would be ``/.dsh``; neither is anyone's home.
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
            chosen, origin = None, "default: DSH_HOME is unset"
        elif not js_trim(from_env):
            # Upstream counts a blank or whitespace-only value as unset.
            chosen, origin = None, "default: DSH_HOME is blank"
        else:
            chosen, origin = from_env, "environment DSH_HOME"
    if chosen is None:
        return default_dsh_home(home or os_home()), origin
    if chosen == "~" or chosen.startswith(("~/", "~\\")):
        chosen = expand_tilde(chosen, home or os_home())
    return os.path.abspath(chosen), origin

"""The two ignore files git reads besides ``.gitignore``, found without running git.

With ``instructions.respectGitignore`` on, a directory that git would ignore is never searched by
a touch. Git takes its patterns from three places, in rising precedence: the user's global
excludes file (``core.excludesFile`` of the user's git configuration, by default
``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``), the repository's
``info/exclude``, and the ``.gitignore`` files of the tree. This module finds the first two:

- ``info/exclude`` lives in the repository's git directory: ``<root>/.git`` when that is a
  directory; for a linked worktree or a submodule ``.git`` is a file (``gitdir: <path>``) and
  the git directory's ``commondir`` file, when present, names the shared directory that holds
  ``info/exclude``.
- ``core.excludesFile`` is read from ``$XDG_CONFIG_HOME/git/config`` (``~/.config/git/config``)
  and then ``~/.gitconfig``, the later winning, as git reads them. ``include`` directives, the
  system configuration and the repository's own configuration are not read.

Every file involved is small and read through the filesystem seam; ``GitExcludes`` keeps what it
derived by the version of the files it came from, so nothing is parsed twice.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Callable, Mapping

import attrs

from dsh_sidecar.fs import LocalFileSystem, Probe, ProbeState

MAX_GIT_FILE_BYTES = 64 * 1024

# What a probe said about a file: its state and version; an ignore decision depends on it.
Seen = tuple[ProbeState, str | None]
Prober = Callable[[str], Probe]


@attrs.frozen
class GitUser:
    """Where git looks for the user's own configuration and ignore file."""

    home: str
    xdg_config_home: str | None = None  # ``$XDG_CONFIG_HOME``; unset and empty are the same

    @classmethod
    def from_env(cls, env: Mapping[str, str], home: str) -> GitUser:
        return cls(home, env.get("XDG_CONFIG_HOME") or None)

    @property
    def config_dir(self) -> str:
        base = self.xdg_config_home or os.path.join(self.home, ".config")
        return os.path.join(base, "git")

    @property
    def config_files(self) -> tuple[str, str]:
        """Read in this order; a later value wins."""
        return os.path.join(self.config_dir, "config"), os.path.join(self.home, ".gitconfig")

    @property
    def default_excludes_file(self) -> str:
        return os.path.join(self.config_dir, "ignore")

    def expand(self, path: str, base: str) -> str:
        """A path from the configuration: ``~/`` is the home directory; a relative one is taken
        relative to ``base`` (the project root, where git runs)."""
        if path == "~" or path.startswith("~/"):
            return os.path.join(self.home, path[2:])
        return os.path.normpath(os.path.join(base, path))


class GitExcludes:
    """The repository's ``info/exclude`` and the user's global excludes file for one project
    root, re-derived only when one of the files they come from changes version."""

    def __init__(self, project_root: str, fs: LocalFileSystem, user: GitUser | None) -> None:
        self.project_root = project_root
        self.fs = fs
        self.user = user
        self._texts: dict[str, tuple[str, str | None]] = {}  # path -> (version, text)

    def seen_through(self, fs: LocalFileSystem) -> GitExcludes:
        """These excludes asking ``fs`` (the texts kept are shared)."""
        view = copy.copy(self)
        view.fs = fs
        return view

    def files(self, probe: Prober) -> tuple[str, ...]:
        """The exclude files in rising precedence (global first), whether or not they exist.

        ``probe`` is how each file consulted is looked at, so the caller sees every one of them
        (a later change of any of them must be noticed)."""
        out = [self._global_file(probe)] if self.user is not None else []
        info = self._info_exclude(probe)
        if info is not None:
            out.append(info)
        return tuple(out)

    # --- the repository's info/exclude -----------------------------------------------------------

    def _info_exclude(self, probe: Prober) -> str | None:
        dotgit = os.path.join(self.project_root, ".git")
        git_dir = self._git_dir(dotgit, probe)
        if git_dir is None:
            return None
        common = os.path.join(git_dir, "commondir")
        text = self._text(common, probe)
        if text is not None and text.strip():
            git_dir = os.path.normpath(os.path.join(git_dir, text.strip()))
        return os.path.join(git_dir, "info", "exclude")

    def _git_dir(self, dotgit: str, probe: Prober) -> str | None:
        # Probed first in every case, so a ".git" that turns from a directory into a file (or
        # goes away) is a change the caller sees.
        text = self._text(dotgit, probe)  # a worktree's or submodule's ".git" file
        if text is None:
            try:
                is_dir = stat.S_ISDIR(self.fs.stat(dotgit).st_mode)
            except (OSError, ValueError):
                return None
            return dotgit if is_dir else None
        first = text.split("\n", 1)[0].strip()
        if not first.startswith("gitdir:"):
            return None
        target = first[len("gitdir:") :].strip()
        if not target:
            return None
        return os.path.normpath(os.path.join(self.project_root, target))

    # --- the user's global excludes file ---------------------------------------------------------

    def _global_file(self, probe: Prober) -> str:
        assert self.user is not None
        chosen: str | None = None
        for config in self.user.config_files:
            text = self._text(config, probe)
            if text is None:
                continue
            found = excludes_file_setting(text)
            if found is not None:
                chosen = found
        if chosen is None or not chosen:
            return self.user.default_excludes_file
        return self.user.expand(chosen, self.project_root)

    # --- reading ---------------------------------------------------------------------------------

    def _text(self, path: str, probe: Prober) -> str | None:
        found = probe(path)
        if not found.present or found.version is None:
            self._texts.pop(path, None)
            return None
        cached = self._texts.get(path)
        if cached is not None and cached[0] == found.version:
            return cached[1]
        read = self.fs.read_text(found, MAX_GIT_FILE_BYTES)
        self._texts[path] = (found.version, read.text)
        return read.text


def excludes_file_setting(text: str) -> str | None:
    """The last ``core.excludesFile`` value of a git configuration file, or None.

    Git's format: ``[section]`` or ``[section "subsection"]`` headers, ``key = value`` lines,
    names case-insensitive, ``#`` and ``;`` comments outside double quotes, ``\\"`` and ``\\\\``
    escapes inside them. A key without ``=`` is a boolean (not a path) and is skipped.
    """
    found: str | None = None
    in_core = False
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            header = line[1 : line.find("]")] if "]" in line else ""
            in_core = header.strip().lower() == "core"
            continue
        if not in_core or "=" not in line:
            continue
        key, _, value = line.partition("=")
        if key.strip().lower() != "excludesfile":
            continue
        found = _config_value(value)
    return found


def _config_value(raw: str) -> str:
    out: list[str] = []
    quoted = False
    index = 0
    text = raw.strip()
    while index < len(text):
        char = text[index]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and index + 1 < len(text):
            index += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(text[index], text[index]))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()

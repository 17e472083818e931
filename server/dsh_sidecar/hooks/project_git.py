"""Which project ``hooks install`` writes into, and what git thinks of the files it writes.

The project is never guessed: it is ``--project DIR``, or the git repository the shell stands in
(the nearest directory upwards holding a ``.git`` entry, a directory or a worktree's file, as git
finds it). Outside any repository, without ``--project``, install refuses.

git itself is asked two things, and only when it is installed (a missing or failing git never
fails an install): whether a file install writes is tracked (``git ls-files --error-unmatch``:
then the change reaches everyone who pulls), and whether Claude Code's
``.claude/settings.local.json`` is ignored. Claude Code keeps that file out of git by adding
``**/.claude/settings.local.json`` to the user's global excludes file, but only when it writes
local settings itself or, in an interactive session's housekeeping, once the file exists (its
``localSettings`` writes and housekeeping call the same global-ignore step; a headless run added
nothing), so a file install creates would show as untracked, one ``git add -A`` away from a
commit, until then.
Install adds the same rule to the repository's own ``info/exclude`` (never to a tracked
``.gitignore``, never to the user's global git configuration).
"""

from __future__ import annotations

import os
import shutil
import subprocess

LOCAL_RULE = "**/.claude/settings.local.json"
_GIT_TIMEOUT = 10.0  # seconds; a git that hangs must not hang the install


def git_root(start: str) -> str | None:
    """The top directory of the git working tree holding ``start``; None outside any."""
    directory = os.path.abspath(start)
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _git(directory: str, *args: str) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None or not os.path.isdir(directory):
        return None
    try:
        # core.fsmonitor off: a repository's own configuration must not start a program here.
        return subprocess.run(
            [git, "-c", "core.fsmonitor=false", "-C", directory, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return None


def tracked_by_git(path: str) -> bool:
    """Whether git tracks the file at ``path`` (False when git is missing or says no)."""
    done = _git(os.path.dirname(path), "ls-files", "--error-unmatch", "--", os.path.basename(path))
    return done is not None and done.returncode == 0


def ensure_local_ignored(root: str) -> str | None:
    """Make git ignore ``<root>/.claude/settings.local.json``: the exclude file changed, or None
    when nothing had to change (already ignored, or the rule already there). Raises OSError when
    the exclude file cannot be written."""
    relative = os.path.join(".claude", "settings.local.json")
    check = _git(root, "check-ignore", "-q", "--", relative)
    if check is not None and check.returncode == 0:
        return None
    exclude = _exclude_file(root)
    if exclude is None:
        raise OSError(f"{root}: no git directory to hold an exclude rule")
    try:
        with open(exclude, "rb") as handle:
            current = handle.read()
    except FileNotFoundError:
        current = b""
    if LOCAL_RULE.encode() in current.splitlines():
        return None
    separator = b"" if not current or current.endswith(b"\n") else b"\n"
    os.makedirs(os.path.dirname(exclude), exist_ok=True)
    with open(exclude, "ab") as handle:
        handle.write(
            separator
            + b"# dsh-sidecar hooks install: Claude Code's local settings stay out of git\n"
            + LOCAL_RULE.encode()
            + b"\n"
        )
    return exclude


def _exclude_file(root: str) -> str | None:
    done = _git(root, "rev-parse", "--git-path", "info/exclude")
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return os.path.normpath(os.path.join(root, done.stdout.strip()))
    # No git to ask: a plain repository keeps it in .git/info/exclude; a worktree's .git file
    # points elsewhere, which only git can resolve.
    git_dir = os.path.join(root, ".git")
    return os.path.join(git_dir, "info", "exclude") if os.path.isdir(git_dir) else None

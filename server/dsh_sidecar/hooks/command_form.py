"""The command ``hooks install`` writes, and reading it back.

Two forms of the same ``dsh-sidecar hook --agent X``:

- **this machine's** (a project's ``.claude/settings.local.json``, the user's files): the absolute
  path of this ``dsh-sidecar``, so the hooks run whatever ``PATH`` the agent was started with;
- **portable** (a project file the team shares): the bare name, found on each machine's ``PATH``,
  so that no path of one machine ends up in a file git tracks.

Either is written behind a guard that ends the hook with status 0 and no output when its program
is missing (a deleted virtualenv, a teammate without dsh-sidecar, a moved checkout). Without it
the three CLIs react to a missing program in their own ways (each observed with the pinned CLI,
docs/agents.md): Claude Code reports ``hook failed`` with the shell's ``not found`` for every
event, and Gemini CLI 0.61.0 turns the exit status 127 into a ``deny`` and blocks every prompt
(``Agent execution blocked: bash: … No such file or directory``). All three run a hook's
command through a shell on Linux and macOS (Claude Code ``/bin/sh -c`` unless a hook asks for
PowerShell, Codex CLI a shell, Gemini CLI ``bash -c``), and the guard is plain POSIX shell: a
test of the program, ``exit 0``, ``exec``. Windows is not a platform of these hooks: there Claude
Code runs hook commands with Git Bash (where the guard works) but Gemini CLI with PowerShell
(where it does not parse, as an unguarded missing program does not run either).

``unguarded`` gives back the command inside either guard, so that every form ever written (the
bare absolute path of earlier versions, ``python -m dsh_sidecar``, guarded or not) is recognised
as ours by ``install.is_ours``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil

PROGRAM = "dsh-sidecar"

_ON_PATH = re.compile(r"command -v (?P<name>\S+) >/dev/null 2>&1 \|\| exit 0; exec (?P<rest>.+)")
_AT_PATH = re.compile(r"\[ -x (?P<name>.+?) \] \|\| exit 0; exec (?P<rest>.+)")


def portable_command(agent: str) -> str:
    """The shared form: ``dsh-sidecar`` from the ``PATH`` of whoever runs the agent."""
    return f"command -v {PROGRAM} >/dev/null 2>&1 || exit 0; exec {PROGRAM} hook --agent {agent}"


def guarded(command: str) -> str:
    """``command`` (a program's absolute path and its arguments) run only when the program is
    there; otherwise the hook ends at once with status 0 and no output."""
    program = shlex.split(command)[0]
    return f"[ -x {shlex.quote(program)} ] || exit 0; exec {command}"


def unguarded(command: str) -> str:
    """The command a guard of ours wraps; any other command as it is."""
    for pattern in (_ON_PATH, _AT_PATH):
        match = pattern.fullmatch(command)
        if match is None:
            continue
        try:
            name, rest = shlex.split(match["name"]), shlex.split(match["rest"])
        except ValueError:
            return command
        if len(name) == 1 and rest[:1] == name:
            return match["rest"]
    return command


def is_portable(command: str) -> bool:
    """Whether the command names its program without a path (found on each machine's PATH)."""
    program = program_of(command)
    return program is not None and "/" not in program


def program_of(command: str) -> str | None:
    """The program a hook command runs (inside our guard, after ``NAME=value`` assignments)."""
    try:
        words = shlex.split(unguarded(command))
    except ValueError:
        return None
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        words = words[1:]
    return words[0] if words else None


def missing_program(command: str, path: str | None, cwd: str) -> str | None:
    """The program of ``command`` when it no longer exists (an absolute or relative path that is
    not an executable file, or a bare name not on ``path``); None when it is there."""
    program = program_of(command)
    if program is None:
        return None
    if "/" in program:
        location = os.path.join(cwd, os.path.expanduser(program))
        return None if os.path.isfile(location) and os.access(location, os.X_OK) else program
    return None if shutil.which(program, path=path) is not None else program

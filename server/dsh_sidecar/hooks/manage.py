"""What ``dsh-sidecar hooks install|uninstall|status`` and ``doctor`` print about agent hooks.

The command line (cli.py) parses the options; this module does the work and returns the lines,
so the wording lives next to the operations it describes.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dsh_sidecar.agents.registry import hook_ids, hook_record, hooks_of
from dsh_sidecar.config import Settings

from .command_form import PROGRAM, guarded, is_portable, missing_program, portable_command
from .confine import OutsideProjectError, check_inside
from .install import (
    InstallError,
    event_hooks,
    hook_command,
    install,
    is_ours,
    settings_path,
    shown_path,
    status,
    uninstall,
)
from .project_git import LOCAL_RULE, ensure_local_ignored, git_root, tracked_by_git
from .settings_file import SettingsFileError, read_settings
from .trust import trust_here, trust_step


@dataclass(frozen=True)
class Report:
    lines: list[str]
    errors: list[str]
    warnings: list[str] = field(default_factory=list)  # stderr, after the lines; exit 0

    @property
    def ok(self) -> bool:
        return not self.errors


class NoProjectError(Exception):
    """Install was not told the project and does not stand in a git repository."""


def find_project(given: str | None, cwd: str) -> tuple[str, str]:
    """The project and how it was found: ``--project``, else the git repository of ``cwd``."""
    if given is not None:
        return os.path.abspath(given), "given with --project"
    root = git_root(cwd)
    if root is None:
        raise NoProjectError(
            f"{cwd} is not inside a git repository: name the project with --project DIR"
            " (or use --scope user for every project of this user)"
        )
    return root, "the git repository you are in"


def places(agent: str) -> tuple[str, ...]:
    """Where an agent reads hooks from, as its record lists them: Claude Code has a project file
    of this machine's too (``.claude/settings.local.json``, which it reads beside the shared
    ``settings.json``)."""
    return hooks_of(agent).scopes()


def has_local(agent: str) -> bool:
    """Whether the agent reads a project settings file of this machine's, which git leaves out
    (a project install goes there unless ``--shared``)."""
    return "local" in places(agent)


def place_path(agent: str, place: str, root: str, env: Mapping[str, str], home: str) -> str:
    return settings_path(agent, place, root, env, home)


def records_dir(env: Mapping[str, str], home: str) -> str:
    """Where install keeps what it changed, for uninstall: the user's DSH home, never the
    project."""
    return os.path.join(Settings().instructions.home(env, home), "hooks", "installed")


def install_hooks(
    agent: str,
    scope: str,
    root: str,
    env: Mapping[str, str],
    home: str,
    executable: str,
    *,
    shared: bool = False,
    found: str | None = None,
) -> Report:
    """Install for ``agent``: at project scope, Claude Code's ``settings.local.json`` with this
    machine's command, or (``shared``, and always for Codex CLI and Gemini CLI, which have no
    project file of their own that git leaves out) the project's shared file with the portable
    one. ``found``: how the project was found, printed first."""
    name = hook_record(agent).name
    local = scope == "project" and has_local(agent) and not shared
    portable = scope == "project" and not local
    path = place_path(agent, "local" if local else scope, root, env, home)
    command = portable_command(agent) if portable else guarded(hook_command(agent, executable))
    records = records_dir(env, home)
    confine = root if scope == "project" else None
    lines = [] if found is None else [f"installing into the project at {root} ({found})"]
    shared_path = settings_path(agent, "project", root, env, home)
    if local and _team_entries(agent, shared_path):
        # The team's entries already run for this machine; a local copy would run every event
        # twice.
        lines.append(
            f"{name}: the hooks are already in {shared_path}, for the team (dsh-sidecar from"
            " PATH); nothing written"
        )
        return Report(lines, [], _path_warnings(executable, env))
    changed: list[str] = []
    notes: list[str] = []
    try:
        if local:
            _check_readable(shared_path, root)  # its cleanup below must not fail half-way
        outcome = install(agent, path, command, root=confine, records=records)
        if outcome.changed:
            changed.append(path)
        if local:
            # This machine's entries of an earlier version went into the shared file.
            earlier = uninstall(agent, shared_path, root=root, records=records, keep_portable=True)
            if earlier.changed:
                changed.extend(earlier.deleted or [shared_path])
                notes.append(
                    f"  removed this machine's entries of an earlier install from {shared_path}"
                )
    except InstallError as exc:
        return Report([], [str(exc)])
    warnings: list[str] = []
    if local and git_root(root) is not None:
        try:
            exclude = ensure_local_ignored(root)
        except OSError as exc:
            warnings.append(
                f"could not make git ignore {path} ({exc.strerror or exc}): add"
                f" {LOCAL_RULE} to .git/info/exclude yourself"
            )
        else:
            if exclude is not None:
                changed.append(exclude)
                notes.append(
                    f"  added {LOCAL_RULE} to {exclude}: git leaves this machine's file out"
                )
    if portable:
        notes.append(
            "  for the team: commit it; each teammate needs dsh-sidecar on PATH (pipx install"
            " of a dsh-sidecar checkout, or a virtualenv's dsh-sidecar linked into"
            " ~/.local/bin); without it the hooks end at once and print nothing"
        )
        warnings.extend(_path_warnings(executable, env))
    # Only the file the command went into names this machine; a cleaned shared file does not.
    warnings.extend(
        _tracked_warning(p, machine_path=p == path and not portable)
        for p in changed
        if tracked_by_git(p)
    )
    events = ", ".join(e.event for e in event_hooks(agent))
    shown = shown_path(path, home)
    head = (
        f"{name}: hooks installed in {shown} ({events})"
        if outcome.changed
        else f"{name}: hooks already installed in {shown}; unchanged"
    )
    lines += [head, f"  command: {command}", *notes, trust_step(agent, scope, root, env, home)]
    if changed:
        lines.append("files changed: " + ", ".join(shown_path(p, home) for p in changed))
    return Report(lines, [], warnings)


def _check_readable(path: str, root: str) -> None:
    try:
        check_inside(path, root)
        read_settings(path)
    except (OutsideProjectError, SettingsFileError) as exc:
        raise InstallError(f"{exc}; left unchanged") from exc


def _team_entries(agent: str, path: str) -> bool:
    """Whether the shared file holds a portable entry of ours."""
    return any(is_portable(c) for c in our_commands(agent, path))


def our_commands(agent: str, path: str) -> list[str]:
    """The commands of our entries in a settings file (none when it is missing or unreadable)."""
    try:
        document = read_settings(path).document or {}
    except SettingsFileError:
        return []
    table = document.get("hooks")
    commands: list[str] = []
    for groups in table.values() if isinstance(table, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if is_ours(handler, agent) and handler["command"] not in commands:
                    commands.append(handler["command"])
    return commands


def _path_warnings(executable: str, env: Mapping[str, str]) -> list[str]:
    if shutil.which(PROGRAM, path=env.get("PATH")) is not None:
        return []
    link = (
        ""
        if " -m dsh_sidecar" in executable
        else f"ln -s {shlex.quote(executable)} ~/.local/bin/ (with ~/.local/bin on PATH), or "
    )
    return [
        f"{PROGRAM} is not on PATH here, so these hooks do nothing on this machine until it is:"
        f" {link}pipx install a dsh-sidecar checkout"
    ]


def _tracked_warning(path: str, *, machine_path: bool = False) -> str:
    if machine_path:
        return (
            f"{path} is tracked by git, and it now names a path of this machine: keep it out of"
            " commits"
        )
    return f"{path} is tracked by git: once committed, this change reaches everyone who pulls"


def uninstall_hooks(
    agent: str,
    scope: str,
    root: str,
    env: Mapping[str, str],
    home: str,
    *,
    shared: bool = False,
    found: str | None = None,
) -> Report:
    """Remove ours. At project scope, Claude Code's local file, and this machine's (absolute)
    entries an earlier version wrote into the shared file; ``shared``: the shared file's entries,
    the team's included."""
    name = hook_record(agent).name
    if scope == "user":
        targets = [("user", False)]
    elif has_local(agent) and not shared:
        targets = [("local", False), ("project", True)]
    else:
        targets = [("project", False)]
    lines = [] if found is None else [f"removing from the project at {root} ({found})"]
    removed = False
    warnings: list[str] = []
    for place, keep_portable in targets:
        path = place_path(agent, place, root, env, home)
        try:
            outcome = uninstall(
                agent,
                path,
                root=root if scope == "project" else None,
                records=records_dir(env, home),
                keep_portable=keep_portable,
            )
        except InstallError as exc:
            return Report([], [str(exc)])
        shown = shown_path(path, home)
        if outcome.deleted:
            gone = " and ".join(shown_path(p, home) for p in outcome.deleted)
            lines.append(f"{name}: dsh-sidecar hooks removed; deleted {gone}, created by install")
        elif outcome.changed:
            lines.append(f"{name}: dsh-sidecar hooks removed from {shown}")
            if tracked_by_git(path):
                warnings.append(_tracked_warning(path))
        removed = removed or outcome.changed
    first = shown_path(place_path(agent, targets[0][0], root, env, home), home)
    if not removed:
        lines.append(f"{name}: nothing to remove: no dsh-sidecar hooks in {first}")
    if has_local(agent) and scope == "project" and not shared:
        shared_path = settings_path(agent, "project", root, env, home)
        if _team_entries(agent, shared_path):
            lines.append(
                f"  the team's entries in {shared_path} stay (dsh-sidecar from PATH);"
                f" `dsh-sidecar hooks uninstall --agent {agent} --shared` removes them"
            )
    return Report(lines, [], warnings)


def status_lines(
    agents: Sequence[str], root: str | None, env: Mapping[str, str], home: str
) -> Report:
    """One line per agent and file: the file, whether our hooks are in it, and for installed
    ones whether the agent would run them for ``root`` (None: no project, user files only)."""
    lines, errors = [], []
    if root is None:
        lines.append("not in a git repository: the user's files only (--project DIR names one)")
    for agent in agents:
        for place in places(agent):
            if root is None and place != "user":
                continue
            found = status(agent, place_path(agent, place, root or "", env, home))
            line = f"{agent:<6}  {place:<7}  {shown_path(found.path, home)}  {found.state}"
            if found.detail:
                line += f" ({found.detail})"
            if found.state == "unreadable":
                errors.append(found.detail)
            elif found.state != "not installed":
                trust = trust_here(agent, _scope(place), root or os.getcwd(), env, home)
                line += f"; {'runs here' if trust.runs else 'does not run here'}: {trust.detail}"
            lines.append(line)
    return Report(lines, errors)


def _scope(place: str) -> str:
    return "user" if place == "user" else "project"


def doctor_rows(root: str, env: Mapping[str, str], home: str) -> list[str]:
    """``doctor``'s ``hooks`` rows, one per agent: where they are installed and whether the agent
    would run them here."""
    rows = []
    for agent in hook_ids():
        found = {
            place: status(agent, place_path(agent, place, root, env, home))
            for place in places(agent)
        }
        installed = [p for p in places(agent) if found[p].state != "not installed"]
        if not installed:
            where = ", ".join(f"{p} {shown_path(found[p].path, home)}" for p in places(agent))
            rows.append(f"{agent}: not installed ({where})")
            continue
        parts = []
        for place in installed:
            state = found[place]
            text = f"{state.state} in {place} {shown_path(state.path, home)}"
            if state.state != "unreadable":
                trust = trust_here(agent, _scope(place), root, env, home)
                text += f", {'runs here' if trust.runs else 'does not run here'}: {trust.detail}"
            else:
                text += f": {state.detail}"
            parts.append(text)
        rows.append(f"{agent}: " + "; ".join(parts))
    return rows


def dead_hook_rows(root: str, env: Mapping[str, str], home: str) -> list[str]:
    """``doctor``'s findings: each settings file (any agent, any place) with an entry of ours
    whose program is gone, and the command that takes the entries out."""
    rows = []
    for agent in hook_ids():
        for place in places(agent):
            path = place_path(agent, place, root, env, home)
            for command in our_commands(agent, path):
                program = missing_program(command, env.get("PATH"), root)
                if program is None:
                    continue
                gone = "is not on PATH" if "/" not in program else "no longer exists"
                rows.append(
                    f"{agent}: the hooks in {shown_path(path, home)} run {program}, which {gone};"
                    f" remove them with `{_uninstall_command(agent, place, program)}`"
                )
                break
    return rows


def _uninstall_command(agent: str, place: str, program: str) -> str:
    command = f"dsh-sidecar hooks uninstall --agent {agent}"
    if place == "user":
        return command + " --scope user"
    if has_local(agent) and place == "project" and "/" not in program:
        return command + " --shared"  # the default keeps the team's portable entries
    return command

"""What ``dsh-sidecar hooks install|uninstall|status`` and ``doctor`` print about agent hooks.

The command line (cli.py) parses the options; this module does the work and returns the lines,
so the wording lives next to the operations it describes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dsh_sidecar.config import Settings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root

from .install import (
    AGENT_NAMES,
    HOOK_EVENTS,
    SCOPES,
    InstallError,
    hook_command,
    install,
    settings_path,
    shown_path,
    status,
    uninstall,
)
from .trust import trust_here, trust_step


@dataclass(frozen=True)
class Report:
    lines: list[str]
    errors: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors


def project_root(given: str | None, markers: tuple[str, ...]) -> str:
    """``--root``, else the project root of the current directory (where the agent starts)."""
    if given is not None:
        return os.path.abspath(given)
    return find_project_root(os.getcwd(), markers, LOCAL_FS)


def records_dir(env: Mapping[str, str], home: str) -> str:
    """Where install keeps what it changed, for uninstall: the user's DSH home, never the
    project."""
    return os.path.join(Settings().instructions.home(env, home), "hooks", "installed")


def install_hooks(
    agent: str, scope: str, root: str, env: Mapping[str, str], home: str, executable: str
) -> Report:
    path = settings_path(agent, scope, root, env, home)
    command = hook_command(agent, executable)
    name = AGENT_NAMES[agent]
    try:
        outcome = install(
            agent,
            path,
            command,
            root=root if scope == "project" else None,
            records=records_dir(env, home),
        )
    except InstallError as exc:
        return Report([], [str(exc)])
    events = ", ".join(e.event for e in HOOK_EVENTS[agent])
    shown = shown_path(path, home)
    head = (
        f"{name}: hooks installed in {shown} ({events})"
        if outcome.changed
        else f"{name}: hooks already installed in {shown}; unchanged"
    )
    return Report([head, f"  command: {command}", trust_step(agent, scope, root, env, home)], [])


def uninstall_hooks(agent: str, scope: str, root: str, env: Mapping[str, str], home: str) -> Report:
    path = settings_path(agent, scope, root, env, home)
    try:
        outcome = uninstall(
            agent, path, root=root if scope == "project" else None, records=records_dir(env, home)
        )
    except InstallError as exc:
        return Report([], [str(exc)])
    name, shown = AGENT_NAMES[agent], shown_path(path, home)
    if outcome.deleted:
        gone = " and ".join(shown_path(p, home) for p in outcome.deleted)
        return Report(
            [f"{name}: dsh-sidecar hooks removed; deleted {gone}, created by install"], []
        )
    if outcome.changed:
        return Report([f"{name}: dsh-sidecar hooks removed from {shown}"], [])
    return Report([f"{name}: nothing to remove: no dsh-sidecar hooks in {shown}"], [])


def status_lines(agents: Sequence[str], root: str, env: Mapping[str, str], home: str) -> Report:
    """One line per agent and scope: the file, whether our hooks are in it, and for installed
    ones whether the agent would run them for ``root``."""
    lines, errors = [], []
    for agent in agents:
        for scope in SCOPES:
            found = status(agent, settings_path(agent, scope, root, env, home))
            line = f"{agent:<6}  {scope:<7}  {shown_path(found.path, home)}  {found.state}"
            if found.detail:
                line += f" ({found.detail})"
            if found.state == "unreadable":
                errors.append(found.detail)
            elif found.state != "not installed":
                trust = trust_here(agent, scope, root, env, home)
                line += f"; {'runs here' if trust.runs else 'does not run here'}: {trust.detail}"
            lines.append(line)
    return Report(lines, errors)


def doctor_rows(root: str, env: Mapping[str, str], home: str) -> list[str]:
    """``doctor``'s ``hooks`` rows, one per agent: where they are installed and whether the agent
    would run them here."""
    rows = []
    for agent in AGENT_NAMES:
        found = {
            scope: status(agent, settings_path(agent, scope, root, env, home)) for scope in SCOPES
        }
        installed = [s for s in SCOPES if found[s].state != "not installed"]
        if not installed:
            where = ", ".join(f"{s} {shown_path(found[s].path, home)}" for s in SCOPES)
            rows.append(f"{agent}: not installed ({where})")
            continue
        parts = []
        for scope in installed:
            state = found[scope]
            text = f"{state.state} in {scope} {shown_path(state.path, home)}"
            if state.state != "unreadable":
                trust = trust_here(agent, scope, root, env, home)
                text += f", {'runs here' if trust.runs else 'does not run here'}: {trust.detail}"
            else:
                text += f": {state.detail}"
            parts.append(text)
        rows.append(f"{agent}: " + "; ".join(parts))
    return rows

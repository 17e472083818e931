"""Files one side loads and the other does not, each with the reason the other side leaves it.

When this sidecar does not load a file an agent loads, the reason is the sidecar's own (its chain
entry says why: ignored, omitted by the budget, ...) or, for a file it never looks at, the
setting that would make it look. Settings that are not part of this build are marked as coming
with the conventions work, so the hints stay true before and after those settings land.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from dsh_sidecar.agents.rules import AgentRules
from dsh_sidecar.config import Settings, settings_to_json
from dsh_sidecar.rule_sets import RULE_SETS
from dsh_sidecar.sources.agent_instructions.paths import SCOPE_SEPARATOR
from dsh_sidecar.sources.agent_instructions.paths import USER_GLOBAL as SIDECAR_USER_GLOBAL

from .model import AgentFile, Difference, SidecarFile
from .simulate import IMPORT, RULE, USER_GLOBAL

USER_GLOBAL_SCOPE = SIDECAR_USER_GLOBAL + SCOPE_SEPARATOR

# Each convention's own folder, and Copilot's user-profile one (not a repository rule set).
_RULE_SET_OF_FOLDER = {rs.folder: rs.name for rs in RULE_SETS.values()} | {
    ".copilot/instructions": "copilot"
}


def differences(
    rules: AgentRules,
    agent_files: tuple[AgentFile, ...],
    sidecar: tuple[SidecarFile, ...],
    resolve: Callable[[str], str],
) -> tuple[tuple[Difference, ...], tuple[Difference, ...]]:
    """``(only the agent loads, only the sidecar loads)``, each in its own side's order."""
    agent_by_key = {resolve(f.path): f for f in agent_files}
    sidecar_by_key = {resolve(f.path): f for f in sidecar}
    agent_loaded = {k for k, f in agent_by_key.items() if f.loaded}
    sidecar_loaded = {k for k, f in sidecar_by_key.items() if f.loaded}
    only_agent: list[Difference] = []
    for key, found in agent_by_key.items():
        if key in agent_loaded and key not in sidecar_loaded:
            side = sidecar_by_key.get(key)
            reason = _sidecar_reason(side) if side is not None else setting_hint(rules, found)
            only_agent.append(Difference(found.path, found.display_path, reason))
    only_sidecar: list[Difference] = []
    for key, entry in sidecar_by_key.items():
        if key in sidecar_loaded and key not in agent_loaded:
            other = agent_by_key.get(key)
            if other is not None:
                reason = other.reason or other.state
            elif entry.scope.startswith(USER_GLOBAL_SCOPE):
                reason = f"{rules.name} does not read this sidecar's user-global file" + _own(rules)
            else:
                reason = f"{rules.name} does not read {os.path.basename(entry.path)}" + _names_read(
                    rules
                )
            only_sidecar.append(Difference(entry.path, entry.display_path, reason))
    return tuple(only_agent), tuple(only_sidecar)


def _sidecar_reason(entry: SidecarFile) -> str:
    return f"{entry.state}: {entry.reason}" if entry.reason else entry.state


def user_global_files(rules: AgentRules) -> list[str]:
    """The agent's own user-global files, as its documentation names them."""
    return [f"{g.directory}/{n}" for g in rules.user_global for n in g.names]


def _own(rules: AgentRules) -> str:
    own = user_global_files(rules)
    return " (its own: " + ", ".join(own) + ")" if own else " (it has no user-global file)"


def _names_read(rules: AgentRules) -> str:
    names = list(dict.fromkeys((*rules.walk.names, *rules.nested.names)))
    if not names:
        return ""
    fallback = rules.fallback
    if fallback is not None:
        return (
            " (it reads " + ", ".join(names) + "; " + ", ".join(fallback.names) + " only when "
            "its start walk finds none of those)"
        )
    return " (it reads " + ", ".join(names) + ")"


def setting_hint(rules: AgentRules, found: AgentFile) -> str:
    """The sidecar setting that would load ``found``, for a file the sidecar never looks at."""
    name = _looked_for(rules, found.path)
    if found.kind == USER_GLOBAL:
        return _setting("instructions.userGlobalFiles", "lists extra user-global files")
    if found.kind == IMPORT:
        return _setting("instructions.imports", "follows @path imports")
    if found.kind == RULE:
        for folder, rule_set in _RULE_SET_OF_FOLDER.items():
            # The sidecar reads rule folders of the project root only.
            if found.display_path.startswith(folder + "/"):
                return _setting("instructions.ruleSets", f'with "{rule_set}" reads these rules')
        if found.display_path.startswith("~/"):
            return "no setting of this sidecar reads rule files in the home directory"
        posix = found.path.replace(os.sep, "/")
        if any(f"/{folder}/" in posix for folder in _RULE_SET_OF_FOLDER):
            return "no setting of this sidecar reads rule folders below the project root"
        return "no setting of this sidecar reads these rule files"
    if name == ".github/copilot-instructions.md":
        return _setting("instructions.ruleSets", 'with "copilot" reads this file')
    if name == "AGENTS.override.md":
        return _setting(
            "instructions.overrideFiles", "reads AGENTS.override.md instead of AGENTS.md"
        )
    if "/" in name:
        return (
            "no setting of this sidecar reads it: instruction file candidates are names of files "
            "in the directory itself"
        )
    return _setting("instructions.instructionFileCandidates", f"with {name} added reads it")


def _looked_for(rules: AgentRules, path: str) -> str:
    """The name the agent looked for (``.claude/CLAUDE.md``), longest match first."""
    posix = path.replace(os.sep, "/")
    names = sorted({*rules.walk.names, *rules.nested.names}, key=len, reverse=True)
    return next((n for n in names if posix.endswith("/" + n)), os.path.basename(path))


def _setting(key: str, effect: str) -> str:
    pending = "" if _known(key) else " (coming with the conventions work)"
    return f"not read by this sidecar; {key}{pending} {effect}"


def _known(key: str) -> bool:
    section, _, name = key.partition(".")
    tree = settings_to_json(Settings())
    return name in tree.get(section, {})

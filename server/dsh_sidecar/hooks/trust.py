"""Whether an agent would run the hooks installed for a directory, and the step that makes it.

Each agent's record names its step (``agents/record.py``, ``TrustStep``); ``CHECKS`` and
``STEPS`` below hold each step's check and instructions. Observed with the real CLIs
(docs/agents.md, "Trust"):

- Claude Code runs the hooks of its user and project settings; it has no separate hook trust.
- Codex CLI runs hooks only for a trusted project (``[projects."<dir>"] trust_level =
  "trusted"`` in ``$CODEX_HOME/config.toml``) or, in ``codex exec``, with
  ``--dangerously-bypass-hook-trust``; an untrusted hook is skipped without a word.
- Gemini CLI runs a project's ``.gemini/settings.json`` hooks only in a trusted folder:
  ``GEMINI_CLI_TRUST_WORKSPACE=true``, folder trust turned off, or a ``TRUST_FOLDER`` /
  ``TRUST_PARENT`` rule in ``~/.gemini/trustedFolders.json`` (the longest matching rule wins).
- GitHub Copilot CLI runs its user hooks (``~/.copilot/settings.json``) everywhere and a
  project's hook files only in a trusted folder: ``--trust-folder`` for one run, or the folder
  or one above it in ``trustedFolders`` of ``~/.copilot/config.json`` (``$COPILOT_HOME``), a
  file it writes with ``//`` comments (docs/reference/agent-clis.md, GitHub Copilot CLI 1.0.102).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dsh_sidecar.agents.record import TrustStep
from dsh_sidecar.agents.registry import hook_record, hooks_of

from .install import shown_path
from .settings_file import SettingsFileError, first_comment_line, read_regular_file


@dataclass(frozen=True)
class Trust:
    runs: bool
    detail: str  # why, in a few words


def copilot_home(env: Mapping[str, str], home: str) -> str:
    return env.get("COPILOT_HOME") or os.path.join(home, ".copilot")


def codex_home(env: Mapping[str, str], home: str) -> str:
    return env.get("CODEX_HOME") or os.path.join(home, ".codex")


def gemini_home(env: Mapping[str, str], home: str) -> str:
    return os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini")


def _step_of(agent: str) -> TrustStep:
    return hooks_of(agent).trust


def trust_here(agent: str, scope: str, root: str, env: Mapping[str, str], home: str) -> Trust:
    """Whether ``agent`` runs the hooks of ``scope`` for ``root``, by its record's trust step."""
    step = _step_of(agent)
    if step == "none":
        return Trust(True, "no trust step")
    return CHECKS[step](scope, root, env, home)


def trust_step(agent: str, scope: str, root: str, env: Mapping[str, str], home: str) -> str:
    """What to do once so that the agent runs the hooks just installed (a few lines), by its
    record's trust step."""
    step = _step_of(agent)
    if step == "none":
        name = hook_record(agent).name
        return f"{name} runs them in every session started after this: no trust step."
    return STEPS[step](scope, root, env, home)


def _codex_step(scope: str, root: str, env: Mapping[str, str], home: str) -> str:
    config = shown_path(os.path.join(codex_home(env, home), "config.toml"), home)
    trusted = f'  [projects."{root}"]\n  trust_level = "trusted"\n'
    if scope == "project":
        return (
            f"Codex CLI runs a project's hooks only in a trusted project. Add to {config}:\n"
            f"{trusted}"
            "(or run `codex exec --trust` there once). Then `codex exec` needs"
            " --dangerously-bypass-hook-trust, and interactive Codex asks you to review the"
            " new hooks."
        )
    return (
        f"Codex CLI runs these hooks in a trusted project. Add to {config}:\n"
        f"{trusted}"
        "or run `codex exec --dangerously-bypass-hook-trust`."
    )


def _gemini_step(scope: str, root: str, env: Mapping[str, str], home: str) -> str:
    if scope == "user":
        return "Gemini CLI runs user hooks in any folder: no trust step."
    folders = shown_path(os.path.join(gemini_home(env, home), "trustedFolders.json"), home)
    return (
        "Gemini CLI runs a project's hooks only in a trusted folder: answer its trust"
        f' prompt, or add "{root}": "TRUST_FOLDER" to {folders};'
        " headless (-p) runs need GEMINI_CLI_TRUST_WORKSPACE=true."
    )


def _copilot_step(scope: str, root: str, env: Mapping[str, str], home: str) -> str:
    if scope == "user":
        return "GitHub Copilot CLI runs user hooks in any folder: no trust step."
    config = shown_path(os.path.join(copilot_home(env, home), "config.json"), home)
    return (
        "GitHub Copilot CLI runs a project's hooks only in a trusted folder: trust the"
        f' folder for good when it asks, or add "{root}" to "trustedFolders" in {config};'
        " a headless run (copilot -p) of an untrusted folder needs --trust-folder."
    )


def _codex_trust(scope: str, root: str, env: Mapping[str, str], home: str) -> Trust:
    config = shown_path(os.path.join(codex_home(env, home), "config.toml"), home)
    try:
        read = read_regular_file(os.path.join(codex_home(env, home), "config.toml"))
        document = tomllib.loads(read[0].decode("utf-8")) if read is not None else {}
    except (SettingsFileError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return Trust(False, f"{config} does not parse ({exc})")
    projects = document.get("projects")
    candidates = {root, os.path.realpath(root)}
    if isinstance(projects, dict):
        for key, value in projects.items():
            if key in candidates and isinstance(value, dict):
                level = value.get("trust_level")
                if level == "trusted" and scope == "project":
                    return Trust(
                        True,
                        f"{root} is a trusted project in {config}; new hooks need Codex's review"
                        " (codex exec: --dangerously-bypass-hook-trust)",
                    )
                if level == "trusted":
                    return Trust(True, f"{root} is a trusted project in {config}")
                return Trust(False, f"{root} has trust_level {level!r} in {config}")
    return Trust(
        False,
        f"{root} is not a trusted project in {config}"
        + (
            ""
            if scope == "project"
            else " (only `codex exec --dangerously-bypass-hook-trust` runs them)"
        ),
    )


def _gemini_trust(scope: str, root: str, env: Mapping[str, str], home: str) -> Trust:
    setting = env.get("GEMINI_CLI_TRUST_WORKSPACE")
    if setting == "false" or env.get("GEMINI_RESTRICTED_MODE") == "true":
        return Trust(False, "the environment turns workspace trust off")
    if scope == "user":
        return Trust(True, "user hooks need no folder trust")
    if setting == "true":
        return Trust(True, "GEMINI_CLI_TRUST_WORKSPACE=true")
    settings = _json_file(os.path.join(gemini_home(env, home), "settings.json"))
    security = settings.get("security") if isinstance(settings, dict) else None
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return Trust(True, "folder trust is turned off (security.folderTrust.enabled)")
    real = env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(
        gemini_home(env, home), "trustedFolders.json"
    )
    rules, path = _json_file(real), shown_path(real, home)
    verdict = _longest_rule(rules if isinstance(rules, dict) else {}, root)
    if verdict == "DO_NOT_TRUST":
        return Trust(False, f"{root} is marked DO_NOT_TRUST in {path}")
    if verdict is not None:
        return Trust(True, f"{root} is trusted in {path}")
    return Trust(False, f"{root} is not a trusted folder ({path})")


def _copilot_trust(scope: str, root: str, env: Mapping[str, str], home: str) -> Trust:
    if scope == "user":
        return Trust(True, "user hooks need no folder trust")
    real = os.path.join(copilot_home(env, home), "config.json")
    path = shown_path(real, home)
    try:
        read = read_regular_file(real)
        config = json.loads(strip_comments(read[0].decode("utf-8"))) if read is not None else {}
    except (SettingsFileError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return Trust(False, f"{path} does not parse ({exc})")
    folders = config.get("trustedFolders") if isinstance(config, dict) else None
    location = os.path.realpath(root)
    for folder in folders if isinstance(folders, list) else []:
        if not isinstance(folder, str) or not folder:
            continue
        trusted = os.path.realpath(folder)
        if location == trusted or location.startswith(trusted.rstrip("/") + "/"):
            return Trust(True, f"{folder} is a trusted folder in {path}")
    return Trust(False, f"{root} is not a trusted folder ({path}; copilot -p: --trust-folder)")


_JSONC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def strip_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments (Copilot CLI's config.json) as plain JSON:
    each comment outside a string becomes a space."""
    return _JSONC_TOKEN.sub(lambda m: m.group() if m.group().startswith('"') else " ", text)


def _longest_rule(rules: Mapping[str, Any], root: str) -> str | None:
    """Gemini's rule for a folder: the longest rule path that contains it wins; TRUST_PARENT
    trusts the rule path's parent."""
    location = os.path.realpath(root)
    best_length, best = -1, None
    for rule_path, level in rules.items():
        if level not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"):
            continue
        effective = os.path.dirname(rule_path) if level == "TRUST_PARENT" else rule_path
        effective = os.path.realpath(effective)
        inside = location == effective or location.startswith(effective.rstrip("/") + "/")
        if inside and len(rule_path) > best_length:
            best_length, best = len(rule_path), level
    return best


def _json_file(path: str) -> object:
    """A small JSON (or JSONC without comments) file's value, or None when it is absent or bad."""
    try:
        read = read_regular_file(path)
        text = read[0].decode("utf-8") if read is not None else ""
    except (SettingsFileError, UnicodeDecodeError):
        return None
    if first_comment_line(text) is not None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


Check = Callable[[str, str, Mapping[str, str], str], Trust]
Step = Callable[[str, str, Mapping[str, str], str], str]
# Every trust step of agents/record.py (``TrustStep``) but "none": whether the agent would run
# the hooks here, and what to tell the user to do once.
CHECKS: dict[TrustStep, Check] = {
    "codex-trusted-project": _codex_trust,
    "gemini-trusted-folder": _gemini_trust,
    "copilot-trusted-folder": _copilot_trust,
}
STEPS: dict[TrustStep, Step] = {
    "codex-trusted-project": _codex_step,
    "gemini-trusted-folder": _gemini_step,
    "copilot-trusted-folder": _copilot_step,
}

"""``explain_file``: for one file (and an optional session directory), what this sidecar loads and
what each agent would load, side by side."""

from __future__ import annotations

import os
from collections.abc import Mapping

from dsh_sidecar import config, errors
from dsh_sidecar.agents import AGENTS, AgentRules
from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sources.agent_instructions.confinement import confinement_for
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.observed import OneLook

from .compare import differences
from .model import AgentExplanation, Explanation, VerifiedRef
from .sidecar import sidecar_part
from .simulate import Where, simulate

# Agents read whole files; the simulation reads at least enough for Codex's 32 KiB limit and
# never more than this per file (sizes come from stat, so bigger files still count right).
MIN_READ_CAP = 64 * 1024


def explain_file(
    path: str,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    *,
    dsh_home: str,
    cwd: str | None = None,
    home: str | None = None,
    env: Mapping[str, str] | None = None,
    os_home: str | None = None,
    agents: tuple[AgentRules, ...] = AGENTS,
) -> Explanation:
    """Explain ``path`` (absolute; its directory must exist, the file need not).

    ``cwd`` is the session directory; without it the session runs at the file's project root,
    where an editor starts its agent. ``home`` and ``env`` are where agents find their
    user-global files (``~``, ``CODEX_HOME``); they default to this process's.
    """
    fs = OneLook(fs)
    file_path = target_file(path, fs)
    directory = os.path.dirname(file_path)
    if cwd is None:
        session_dir = find_project_root(directory, settings.project_root_markers, fs)
    else:
        session_dir = fs.resolve(cwd)
        if not fs.is_directory(session_dir):
            raise DshError(errors.INVALID_CWD, f"cwd {cwd!r} is not an existing directory")
    part = sidecar_part(file_path, session_dir, settings, fs, dsh_home=dsh_home, os_home=os_home)
    workspace = find_project_root(directory, settings.project_root_markers, fs)
    where = Where(
        file=file_path,
        cwd=part.cwd,
        workspace=workspace,
        home=home if home is not None else config.os_home(),
        env=os.environ if env is None else env,
        read_cap=max(settings.max_source_bytes, MIN_READ_CAP),
        confinement=confinement_for(
            workspace, settings, fs, os_home if os_home is not None else config.os_home()
        ),
    )
    explained = []
    for rules in agents:
        run = simulate(rules, where, fs)
        only_agent, only_sidecar = differences(rules, run.files, part.files, fs.resolve)
        explained.append(
            AgentExplanation(
                id=rules.id,
                name=rules.name,
                working_directory=run.working_directory,
                order=rules.order,
                files=run.files,
                only_agent=only_agent,
                only_sidecar=only_sidecar,
                sources=run.sources,
                undocumented=rules.undocumented,
                size_limit=run.limit,
                verified=(
                    VerifiedRef(rules.verified.version, rules.verified.package)
                    if rules.verified is not None
                    else None
                ),
            )
        )
    return Explanation(
        file=file_path,
        cwd=part.cwd,
        project_root=part.project_root,
        max_bytes=settings.max_bytes,
        sidecar=part.files,
        agents=tuple(explained),
    )


def target_file(path: str, fs: LocalFileSystem) -> str:
    """``path`` with its directory resolved through symlinks; a file, not a directory."""
    if not os.path.isabs(path):
        raise DshError(errors.INVALID_URI, f"{path!r} is not an absolute path")
    if "\x00" in path:
        raise DshError(errors.INVALID_URI, f"{path!r} contains a NUL character")
    normalized = os.path.normpath(path)
    if fs.is_directory(normalized):
        raise DshError(
            errors.INVALID_URI, f"{normalized} is a directory; explain needs a file in it"
        )
    directory = fs.resolve(os.path.dirname(normalized))
    if not fs.is_directory(directory):
        raise DshError(
            errors.INVALID_URI, f"{os.path.dirname(normalized)} is not an existing directory"
        )
    return os.path.join(directory, os.path.basename(normalized))

"""The explanation of one file: what this sidecar loads and what each agent would load.

Every record knows its JSON form (``to_json``), which is both ``dsh-sidecar explain --json`` and
the ``dsh/explain`` result (docs/protocol.md): camelCase keys, optional fields left out.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

# The sidecar's chain states that reach the model (baseline.py); a future state that carries
# ``included_bytes`` (an imported file, say) counts as loaded without a change here.
LOADED_AGENT_STATES = frozenset({"loaded", "truncated"})
UNREACHED = "unreached"


@attrs.frozen
class SidecarFile:
    """One file of this sidecar's chain for the file, with how it arrives (``via``)."""

    path: str
    display_path: str
    scope: str
    state: str
    bytes: int | None
    via: str | None = None  # "baseline" (first step) or "touch" (when the file is touched)
    included_bytes: int | None = None
    digest: str | None = None
    reason: str | None = None

    @property
    def loaded(self) -> bool:
        if self.included_bytes is None:
            return False
        return self.included_bytes > 0 or self.bytes == 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "displayPath": self.display_path,
            "scope": self.scope,
            "state": self.state,
        }
        _put(out, "bytes", self.bytes)
        _put(out, "via", self.via)
        _put(out, "includedBytes", self.included_bytes)
        _put(out, "digest", self.digest)
        _put(out, "reason", self.reason)
        return out


@attrs.frozen
class AgentFile:
    """One file an agent would consider, in its load order, and what becomes of it.

    ``kind``: ``user-global``, ``project`` (its start-up walk), ``nested`` (a directory on the
    way to the file), ``rule`` (a path-scoped rule file) or ``import``. ``state``: ``loaded``,
    ``truncated`` (its size limit cut it to ``kept_bytes``), ``dropped`` (the limit was used up),
    ``empty`` (skipped as blank), ``shadowed`` (another name wins the directory), ``unmatched``
    (a rule whose globs miss the file), ``on-request`` (the model decides from a description),
    ``manual`` (only when added by hand), ``not-read`` (present, but not something the agent
    reads here), ``unreadable``, ``unknown`` (a rule file the agent reads whose frontmatter
    this sidecar may not read: ``boundary`` says why).

    For a file that reaches the model (``loaded``): ``when`` is ``start`` (with the session's
    first request) or ``after-read`` (once the agent reads, or for an editor's agent works on,
    the file explained); ``sent_bytes`` is what the agent sends for this file alone (its size
    limit's cut, frontmatter left out where the agent strips it, an inlined ``@path`` left out
    since the imported file is its own entry). Both are None for any other state.

    ``boundary`` is set when this sidecar's trust boundary keeps it from reading the file (a
    link out of the project): the agent's state stays what the agent does (it follows links),
    judged on the file's size alone, and ``sent_bytes`` is left out (unknown unread).
    """

    path: str
    display_path: str
    kind: str
    state: str
    bytes: int | None
    kept_bytes: int | None = None
    reason: str | None = None
    when: str | None = None
    sent_bytes: int | None = None
    # Why this sidecar will not read or send the file (its trust boundary), beside what the
    # agent does with it: the agent's state never says the sidecar's limits.
    boundary: str | None = None

    @property
    def loaded(self) -> bool:
        return self.state in LOADED_AGENT_STATES

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "displayPath": self.display_path,
            "kind": self.kind,
            "state": self.state,
        }
        _put(out, "bytes", self.bytes)
        _put(out, "keptBytes", self.kept_bytes)
        _put(out, "sentBytes", self.sent_bytes)
        _put(out, "when", self.when)
        _put(out, "reason", self.reason)
        _put(out, "boundary", self.boundary)
        return out


@attrs.frozen
class Difference:
    """A file one side loads and the other does not, and why the other does not."""

    path: str
    display_path: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "displayPath": self.display_path, "reason": self.reason}


@attrs.frozen
class LimitInfo:
    setting: str
    bytes: int
    cut: str

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.setting, "bytes": self.bytes, "cut": self.cut}


@attrs.frozen
class SourceRef:
    url: str
    checked: str

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "checked": self.checked}


@attrs.frozen
class VerifiedRef:
    """The agent release the model was checked against with the real CLI (tests/conformance)."""

    version: str
    package: str

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "package": self.package}


@attrs.frozen
class AgentExplanation:
    id: str
    name: str
    working_directory: str
    order: str
    files: tuple[AgentFile, ...]
    only_agent: tuple[Difference, ...]
    only_sidecar: tuple[Difference, ...]
    sources: tuple[SourceRef, ...]
    undocumented: tuple[str, ...]
    size_limit: LimitInfo | None = None
    verified: VerifiedRef | None = None

    @property
    def loaded(self) -> tuple[AgentFile, ...]:
        return tuple(f for f in self.files if f.loaded)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "workingDirectory": self.working_directory,
            "order": self.order,
            "files": [f.to_json() for f in self.files],
            "onlyAgent": [d.to_json() for d in self.only_agent],
            "onlySidecar": [d.to_json() for d in self.only_sidecar],
            "sources": [s.to_json() for s in self.sources],
            "undocumented": list(self.undocumented),
        }
        if self.size_limit is not None:
            out["sizeLimit"] = self.size_limit.to_json()
        if self.verified is not None:
            out["verified"] = self.verified.to_json()
        return out


@attrs.frozen
class Explanation:
    file: str
    cwd: str
    project_root: str
    max_bytes: float
    sidecar: tuple[SidecarFile, ...]
    agents: tuple[AgentExplanation, ...]

    def agent(self, agent_id: str) -> AgentExplanation:
        return next(a for a in self.agents if a.id == agent_id)

    def to_json(self) -> dict[str, Any]:
        sidecar: dict[str, Any] = {"files": [f.to_json() for f in self.sidecar]}
        _put(sidecar, "maxBytes", json_number(self.max_bytes))
        return {
            "file": self.file,
            "cwd": self.cwd,
            "projectRoot": self.project_root,
            "sidecar": sidecar,
            "agents": [a.to_json() for a in self.agents],
        }


def json_number(value: float) -> int | float | None:
    """An integral budget as an integer; a non-finite one (which JSON cannot carry) as null."""
    if not math.isfinite(value):
        return None
    return int(value) if float(value).is_integer() else value


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value

"""``dsh-sidecar hooks install|uninstall|status``: our entries in each agent's hook settings.

Where each agent reads hooks, which events get an entry, how its matcher is written and the
unit of its timeout are its record's (``agents/record.py``, ``Hooks``; the table in
docs/agents.md). All of them take the same shape: ``{"hooks": {EVENT: [{"matcher": …, "hooks": [{"type":
"command", "command": …, "timeout": …}]}]}}``. Our entry is one group per event holding one
command, ``<absolute path of dsh-sidecar> hook --agent X``; any handler whose command is
dsh-sidecar's ``hook --agent X`` is ours (whatever path it was installed from), and nothing else
is ever changed or removed. Installing twice leaves the file byte for byte as it was: a file is
rewritten only when its parsed content changes.

The decisions are made on the parsed file (``with_our_hooks``, ``without_our_hooks``); the file
is then edited as text (settings_edit.py), so every byte outside our entries stays as it was,
and the edited text must parse to exactly the decided value before it is written. What install
changed is recorded in the user's DSH home (install_record.py), so that uninstall gives back the
file install found, or removes the file and directories install created.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dsh_sidecar.agents.record import Matcher
from dsh_sidecar.agents.registry import hook_ids, hook_record, hooks_of

from . import install_record
from .command_form import is_portable, unguarded
from .confine import OutsideProjectError, check_inside
from .settings_edit import add_ours, remove_ours
from .settings_file import (
    SettingsFile,
    SettingsFileError,
    check_writable,
    parse_settings,
    read_settings,
    remove_settings,
    render_settings,
    write_settings,
)

SCOPES = ("project", "user")
# Short: a hook answers in well under a second (docs/benchmarks.md); past this the agent cancels
# it and goes on without its text. Gemini counts milliseconds, the other two seconds.
TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class EventHook:
    event: str  # the agent's event name
    matcher: str | None  # a tool-name pattern; None: every occurrence of the event


def _alternatives(names: Iterable[str], matcher: Matcher) -> str | None:
    joined = "|".join(sorted(names))
    # Gemini tests its matcher as an unanchored JavaScript RegExp ("replace" would match any
    # tool whose name contains it); Claude Code matches a plain ``A|B`` list exactly.
    if matcher == "every-tool":
        return None
    return f"^({joined})$" if matcher == "anchored-regex" else joined


def event_hooks(agent: str) -> tuple[EventHook, ...]:
    """The entries we install for ``agent``: its record's installed events (every one the hook
    runtime answers but the pre-tool ones, whose text no CLI shows the model before the tool
    runs), the after-tool one matching the record's tools, so that the hook and its
    installation cannot disagree."""
    hooks = hooks_of(agent)
    tools = _alternatives((t.name for t in hooks.tools), hooks.matcher)
    return tuple(
        EventHook(e.name, tools if e.seam == "after-tool" else None)
        for e in hooks.installed_events()
    )


# The agents whose hooks install writes, their display names and their entries (views of their
# records, for the callers that want a table).
AGENT_NAMES: dict[str, str] = {agent: hook_record(agent).name for agent in hook_ids()}
HOOK_EVENTS: dict[str, tuple[EventHook, ...]] = {agent: event_hooks(agent) for agent in hook_ids()}


class InstallError(Exception):
    """Refused, the file left as it was: the message names it (and the line)."""


# --- where ------------------------------------------------------------------------------------


def settings_path(agent: str, scope: str, root: str, env: Mapping[str, str], home: str) -> str:
    """The settings file of ``agent`` at ``scope`` (project, local, user), from its record; a
    scope the agent does not have is an ``InstallError``."""
    place = hooks_of(agent).place(scope)
    if place is None:
        raise InstallError(f"{hook_record(agent).name} has no {scope} settings file")
    if place.scope != "user":
        return os.path.join(root, place.path)
    moved = env.get(place.env) if place.env else None
    if moved and place.env_replaces == "directory":
        return os.path.join(moved, os.path.basename(place.path))
    return os.path.join(moved or home, place.path)


def shown_path(path: str, home: str) -> str:
    """A path under the home directory as ``~/…`` (shorter, and the same on every machine)."""
    if home and home != "/" and path.startswith(home.rstrip("/") + "/"):
        return "~/" + path[len(home.rstrip("/")) + 1 :]
    return path


# --- what -------------------------------------------------------------------------------------


def default_executable() -> str:
    """The absolute path of the ``dsh-sidecar`` command running now, else the one installed beside
    this Python (``python -m dsh_sidecar`` from a virtualenv), else ``python -m dsh_sidecar``."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "dsh-sidecar" and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    beside = os.path.join(os.path.dirname(sys.executable), "dsh-sidecar")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m dsh_sidecar"


def hook_command(agent: str, executable: str) -> str:
    program = executable if " -m dsh_sidecar" in executable else shlex.quote(executable)
    return f"{program} hook --agent {agent}"


def our_handler(agent: str, command: str) -> dict[str, Any]:
    unit = hooks_of(agent).timeout_unit
    timeout = TIMEOUT_SECONDS * 1000 if unit == "milliseconds" else TIMEOUT_SECONDS
    return {"type": "command", "command": command, "timeout": timeout}


def our_group(agent: str, event: EventHook, command: str) -> dict[str, Any]:
    group: dict[str, Any] = {}
    if event.matcher is not None:
        group["matcher"] = event.matcher
    group["hooks"] = [our_handler(agent, command)]
    return group


def is_ours(handler: object, agent: str) -> bool:
    """Whether a hook handler runs dsh-sidecar's ``hook --agent <agent>``, from any path."""
    if not isinstance(handler, Mapping):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(unguarded(command))
    except ValueError:
        return False
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        words = words[1:]  # ``DSH_HOME=… dsh-sidecar hook …``
    if words and os.path.basename(words[0]) == "dsh-sidecar":
        rest = words[1:]
    elif words[1:3] == ["-m", "dsh_sidecar"]:
        rest = words[3:]
    else:
        return False
    return rest[:3] == ["hook", "--agent", agent]


# --- merging ----------------------------------------------------------------------------------


def _hooks_table(document: Mapping[str, Any], path: str) -> dict[str, Any]:
    table = document.get("hooks", {})
    if not isinstance(table, dict):
        raise InstallError(f'{path}: "hooks" is not an object')
    for event, groups in table.items():
        if not isinstance(groups, list):
            raise InstallError(f'{path}: "hooks"."{event}" is not a list')
    return table


def _removable(handler: object, agent: str, keep_portable: bool) -> bool:
    """Ours, and not a portable entry that ``keep_portable`` keeps (the team's, in a shared
    file, when only this machine's entries go)."""
    if not is_ours(handler, agent):
        return False
    if not keep_portable:
        return True
    return isinstance(handler, Mapping) and not is_portable(str(handler.get("command")))


def _without_ours(groups: list[Any], agent: str, keep_portable: bool = False) -> list[Any]:
    kept = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(
            _removable(h, agent, keep_portable) for h in handlers
        ):
            kept.append(group)
            continue
        others = [h for h in handlers if not _removable(h, agent, keep_portable)]
        if others:
            kept.append({**group, "hooks": others})
    return kept


def with_our_hooks(document: dict[str, Any], agent: str, command: str, path: str) -> dict[str, Any]:
    """``document`` with exactly our groups for every event of the table; an existing group that
    is already exactly ours keeps its place, other entries are untouched."""
    table = dict(_hooks_table(document, path))
    for event in event_hooks(agent):
        wanted = our_group(agent, event, command)
        groups = table.get(event.event, [])
        if wanted in groups:
            first = groups.index(wanted)
            kept: list[Any] = []
            for i, group in enumerate(groups):
                kept.extend([group] if i == first else _without_ours([group], agent))
            table[event.event] = kept
        else:
            table[event.event] = [*_without_ours(groups, agent), wanted]
    return {**document, "hooks": table}


def without_our_hooks(
    document: dict[str, Any], agent: str, path: str, keep_portable: bool = False
) -> dict[str, Any]:
    """``document`` without any handler of ours (but portable ones, with ``keep_portable``); an
    event left with no group is dropped, and ``hooks`` too when it becomes empty (only when we
    emptied them)."""
    if "hooks" not in document:
        return document
    table = _hooks_table(document, path)
    changed: dict[str, Any] = {}
    for event, groups in table.items():
        kept = _without_ours(groups, agent, keep_portable)
        if kept != groups and not kept:
            continue
        changed[event] = kept
    if changed == table:
        return document
    result = dict(document)
    if changed or not table:
        result["hooks"] = changed
    else:
        del result["hooks"]
    return result


# --- the operations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    path: str
    changed: bool
    deleted: tuple[str, ...] = ()  # uninstall: the file and directories install had created


def install(
    agent: str, path: str, command: str, *, root: str | None = None, records: str | None = None
) -> Outcome:
    """Add our hooks to the file at ``path``. ``root``: a project's file, which must not lead
    out of it. ``records``: where to keep what changed, for ``uninstall`` (none when None)."""
    try:
        if root is not None:
            check_inside(path, root)
        current = read_settings(path)
        before = current.document if current.document is not None else {}
        after = with_our_hooks(before, agent, command, path)
        if current.document is not None and after == before:
            return Outcome(path, changed=False)
        text, prefix = _text(current)
        wanted = [(e.event, our_group(agent, e, command)) for e in event_hooks(agent)]
        if text.strip():
            edited = add_ours(text, before, wanted, lambda h: is_ours(h, agent))
            data = _encoded(path, prefix + edited, after)
        else:
            data = _encoded(path, render_settings(after), after)
        check_writable(current)  # before the record: a refusal leaves no trace
        if records is not None:
            install_record.save(
                records, current.target, agent, _new_record(current, data, records, agent)
            )
        write_settings(current, data)
    except (
        SettingsFileError,
        InstallError,
        OutsideProjectError,
        install_record.RecordError,
    ) as exc:
        raise InstallError(f"{exc}; left unchanged") from exc
    return Outcome(path, changed=True)


def uninstall(
    agent: str,
    path: str,
    *,
    root: str | None = None,
    records: str | None = None,
    keep_portable: bool = False,
) -> Outcome:
    """Take our hooks out of the file at ``path``: the file install found (byte for byte, or
    none at all) when it is as install left it, else the file without our entries.
    ``keep_portable``: only this machine's entries go (absolute paths); portable ones stay, and
    so does the file's record while one of them is in it."""
    try:
        if root is not None:
            check_inside(path, root)
        current = read_settings(path)
        record = None if records is None else install_record.load(records, current.target, agent)
        if current.document is None or current.data is None:
            if records is not None:
                install_record.forget(records, current.target, agent)
            return Outcome(path, changed=False)
        portable_kept = keep_portable and without_our_hooks(
            current.document, agent, path, keep_portable=True
        ) != without_our_hooks(current.document, agent, path)
        if portable_kept:
            return _remove(agent, current, keep_portable=True)
        if record is not None and record.after == current.data:
            outcome = _restore(agent, current, record)
        elif (
            record is not None
            and record.before is None
            and without_our_hooks(current.document, agent, path) == {}
        ):
            # Changed since, but only in our entries (a moved program's path, say): nothing of
            # anyone else's is left in the file install created, so it goes as if unchanged.
            deleted = remove_settings(current, record.created_dirs)
            outcome = Outcome(path, changed=True, deleted=tuple(deleted))
        else:
            outcome = _remove(agent, current)
        if records is not None:
            install_record.forget(records, current.target, agent)
    except (SettingsFileError, InstallError, OutsideProjectError) as exc:
        raise InstallError(f"{exc}; left unchanged") from exc
    return outcome


def _text(current: SettingsFile) -> tuple[str, str]:
    """The file's text without its byte-order mark, and the mark (kept when writing)."""
    text = (current.data or b"").decode("utf-8")
    return (text[1:], "\ufeff") if text.startswith("\ufeff") else (text, "")


def _encoded(path: str, text: str, expected: dict[str, Any]) -> bytes:
    """The bytes to write, after checking that they read back as exactly ``expected``."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InstallError(f"{path}: the hook command is not UTF-8 text") from exc
    written = parse_settings(path, data)
    if json.dumps(written) != json.dumps(expected):  # order-sensitive, unlike ==
        raise InstallError(f"{path}: could not edit the file faithfully")
    return data


def _new_record(
    current: SettingsFile, data: bytes, records: str, agent: str
) -> install_record.Record:
    """Keep the bytes from before the first install while the file is as install left it."""
    previous = install_record.load(records, current.target, agent)
    if previous is not None and previous.after == current.data:
        return install_record.Record(previous.before, data, previous.created_dirs)
    created = (
        ()
        if current.data is not None
        else install_record.missing_dirs(os.path.dirname(current.target))
    )
    return install_record.Record(current.data, data, created)


def _restore(agent: str, current: SettingsFile, record: install_record.Record) -> Outcome:
    if record.before is None:
        deleted = remove_settings(current, record.created_dirs)
        return Outcome(current.path, changed=True, deleted=tuple(deleted))
    # The file install found may itself hold our entries (an older install without a record):
    # those go too.
    found = SettingsFile(
        current.path,
        current.target,
        parse_settings(current.path, record.before),
        current.mode,
        record.before,
    )
    removed = _without_ours_bytes(agent, found)
    write_settings(current, record.before if removed is None else removed)
    return Outcome(current.path, changed=True)


def _remove(agent: str, current: SettingsFile, keep_portable: bool = False) -> Outcome:
    data = _without_ours_bytes(agent, current, keep_portable)
    if data is None:
        return Outcome(current.path, changed=False)
    write_settings(current, data)
    return Outcome(current.path, changed=True)


def _without_ours_bytes(
    agent: str, current: SettingsFile, keep_portable: bool = False
) -> bytes | None:
    """The file's bytes without our entries; None when it holds none."""
    before = current.document or {}
    after = without_our_hooks(before, agent, current.path, keep_portable)
    if after == before:
        return None
    text, prefix = _text(current)
    edited = remove_ours(text, before, lambda h: _removable(h, agent, keep_portable))
    return _encoded(current.path, prefix + edited, after)


@dataclass(frozen=True)
class Status:
    path: str
    state: str  # installed, not installed, partly installed, outdated, unreadable
    detail: str = ""

    @property
    def installed(self) -> bool:
        return self.state == "installed"


def status(agent: str, path: str, command: str | None = None) -> Status:
    """Whether the file holds our hooks for every event of the table (with ``command``, when
    given; else any dsh-sidecar path counts)."""
    try:
        current = read_settings(path)
        document = current.document or {}
        table = _hooks_table(document, path)
    except (SettingsFileError, InstallError) as exc:
        return Status(path, "unreadable", str(exc))
    present, missing, stale = [], [], []
    for event in event_hooks(agent):
        groups = table.get(event.event, [])
        ours = [
            h
            for g in groups
            if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"]
            if is_ours(h, agent)
        ]
        if not ours:
            missing.append(event.event)
            continue
        present.append(event.event)
        exact = our_group(agent, event, command or ours[0].get("command", ""))
        if exact not in groups:
            stale.append(event.event)
    if not present:
        return Status(path, "not installed")
    if missing:
        return Status(path, "partly installed", "missing " + ", ".join(missing))
    if stale:
        return Status(path, "outdated", "differs from this version's entry: " + ", ".join(stale))
    return Status(path, "installed")

"""Every key of the ``dsh`` settings tree, declared once.

The strict and the lenient read, the unknown-key refusals and ``settings_to_json`` derive from
``KEYS``, and so do the tests that hold docs/configuration.md, the VS Code manifest and
src/settings.ts to it. A new setting is one entry here plus its field on the section's class in
settings.py (tests/unit/test_settings_keys.py fails until both exist).
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from . import checks
from .settings import HOVER_OTHER_FILES, Settings


@attrs.frozen
class SettingKey:
    # Dotted camelCase, as on the wire and in the docs: "instructions.maxBytes".
    wire: str
    # The type column of docs/configuration.md's table, which the VS Code manifest also states.
    type: str
    check: checks.Check
    # A sentence of the key's own section in docs/configuration.md, which says what it does.
    doc: str
    # What a lenient refusal adds as the expected form, when the check's message does not say.
    expected: str | None = None
    # Widens what the sidecar reads or where it writes, so no editor takes it from a workspace.
    user_only: bool = False
    # Only terminal editors need it; the VS Code extension neither contributes nor sends it.
    terminal_only: bool = False
    # Upstream checks it after the other keys of its section, which decides the first refusal.
    checked_last: bool = False

    @property
    def section(self) -> str:
        return self.wire.partition(".")[0]

    @property
    def name(self) -> str:
        """The key within its section: ``maxBytes``."""
        return self.wire.partition(".")[2]

    @property
    def field(self) -> str:
        """The attribute of the section's class: ``max_bytes``."""
        return snake_case(self.name)

    @property
    def default(self) -> Any:
        """The JSON value of the section class's default (settings.py holds the defaults)."""
        return to_json(getattr(getattr(Settings(), snake_case(self.section)), self.field))


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def to_json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


KEYS: tuple[SettingKey, ...] = (
    SettingKey(
        "instructions.enabled",
        "boolean",
        checks.boolean,
        "Turns the workspace-instructions source on or off.",
    ),
    SettingKey(
        "instructions.maxBytes",
        "number",
        checks.budget,
        "The byte budget of one rendered block: the baseline, or one batch of additional "
        "instructions, counted in UTF-8 bytes of the text the model sees.",
    ),
    SettingKey(
        "instructions.maxSourceBytes",
        "integer",
        checks.positive_integer,
        "The largest instruction file that is read at all.",
    ),
    SettingKey(
        "instructions.dshHome",
        "string or null",
        checks.optional_path,
        "The directory of the user-global `AGENTS.md` (which applies to every project) and, "
        "unless `store.path` says otherwise, of the session store.",
        user_only=True,
    ),
    SettingKey(
        "instructions.projectRootMarkers",
        "string[]",
        checks.string_list,
        "Names (files or directories) whose presence marks the project root.",
        user_only=True,
    ),
    SettingKey(
        "instructions.instructionFileCandidates",
        "string[]",
        checks.string_list,
        "The instruction file names looked for in each directory, in this order.",
        user_only=True,
    ),
    SettingKey(
        "instructions.localInstructionFileCandidates",
        "string[]",
        checks.string_list,
        "Overlay names, read after a directory's instruction files (personal additions that are "
        "usually not committed).",
        user_only=True,
    ),
    SettingKey(
        "instructions.respectGitignore",
        "boolean",
        checks.boolean,
        "When `true`, an instruction file inside a directory that git ignores is never "
        "discovered by a touch",
    ),
    SettingKey(
        "instructions.exclude",
        "string[]",
        checks.patterns,
        "More gitignore-style patterns, relative to the project root, with the same effect as "
        "`.gitignore` entries for `respectGitignore`",
    ),
    SettingKey(
        "instructions.allowedSymlinkTargets",
        "string[]",
        checks.directories,
        "Directories outside the project that a project instruction file may link into.",
        user_only=True,
    ),
    SettingKey(
        "instructions.overrideFiles",
        "boolean",
        checks.boolean,
        "Codex's `AGENTS.override.md`: in a directory where it is present, it replaces that "
        "directory's `AGENTS.md`",
    ),
    SettingKey(
        "instructions.imports",
        "boolean",
        checks.boolean,
        "Claude Code's `@path` imports.",
        user_only=True,
    ),
    SettingKey(
        "instructions.ruleSets",
        "string[]",
        checks.rule_sets,
        "Path-scoped rule files of the project root, by convention",
    ),
    SettingKey(
        "instructions.userGlobalFiles",
        "string[]",
        checks.files,
        "More user-global files, loaded after `$DSH_HOME/AGENTS.md` in the order listed, each "
        "with its own scope",
        user_only=True,
    ),
    SettingKey(
        "sessionReference.enabled",
        "boolean",
        checks.boolean,
        "When `false`, mentions stay in the prompt as typed and no snapshot is added.",
    ),
    SettingKey(
        "sessionReference.maxReferences",
        "integer",
        checks.reference_count,
        "The most distinct sessions one message may mention",
    ),
    SettingKey(
        "sessionReference.candidateLimit",
        "integer",
        checks.reference_count,
        "The most candidates `dsh/sessionReferences/candidates` returns.",
    ),
    SettingKey(
        "sessionReference.maxReferenceBytes",
        "integer",
        checks.reference_count,
        "The byte budget of one mentioned session's snapshot",
    ),
    SettingKey(
        "timeContext.enabled",
        "boolean",
        checks.boolean,
        "Turns time readings on.",
    ),
    SettingKey(
        "timeContext.timeZone",
        "string or null",
        checks.time_zone,
        "The zone times are shown in when the prompt carries no `clientTimeZone`.",
        expected='an IANA time zone name such as "Europe/Paris", or null',
        checked_last=True,
    ),
    SettingKey(
        "timeContext.refreshIntervalMs",
        "integer",
        checks.refresh_interval("time-context"),
        "The least time between two readings of a session, measured from the latest reading in "
        "its log",
    ),
    SettingKey(
        "tmuxContext.enabled",
        "boolean",
        checks.boolean,
        "Turns tmux readings on.",
    ),
    SettingKey(
        "tmuxContext.refreshIntervalMs",
        "integer",
        checks.refresh_interval("tmux-context"),
        "The least time between two tmux queries of a session, measured from the latest reading "
        "in its log.",
    ),
    SettingKey(
        "tmuxContext.useClientProcess",
        "boolean",
        checks.boolean,
        "Locate the pane through the editor's process (the `processId` of `initialize`) instead "
        "of the sidecar's own.",
        terminal_only=True,
    ),
    SettingKey(
        "store.path",
        "string or null",
        checks.optional_path,
        "The SQLite file of the session store.",
        user_only=True,
    ),
    SettingKey(
        "store.busyTimeoutMs",
        "integer",
        checks.non_negative_safe_integer,
        "How long a write waits for the store's write lock while another connection (usually "
        "another sidecar process sharing the file) holds it.",
    ),
    SettingKey(
        "hover.otherFiles",
        "string",
        checks.one_of(*HOVER_OTHER_FILES),
        "On any other file it shows the chain an agent would be told about when it touches that "
        "file",
    ),
)


@attrs.frozen
class Section:
    """One object of the tree (``instructions``) and its keys, in declaration order."""

    name: str
    keys: tuple[SettingKey, ...]

    @property
    def field(self) -> str:
        """The attribute of ``Settings``: ``session_reference``."""
        return snake_case(self.name)

    @property
    def check_order(self) -> tuple[SettingKey, ...]:
        return tuple(k for k in self.keys if not k.checked_last) + tuple(
            k for k in self.keys if k.checked_last
        )


SECTIONS: tuple[Section, ...] = tuple(
    Section(name, tuple(k for k in KEYS if k.section == name))
    for name in dict.fromkeys(k.section for k in KEYS)
)
BY_WIRE: dict[str, SettingKey] = {k.wire: k for k in KEYS}
USER_ONLY: frozenset[str] = frozenset(k.wire for k in KEYS if k.user_only)

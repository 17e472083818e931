"""One record per agent: everything the sidecar knows about one agent CLI, as data.

``explain`` reads its ``rules`` (what the agent loads itself, ``rules.py``); the hooks read its
``hooks`` (the events it runs hooks on and how to read their payloads, where its settings files
are, its trust step, its cap on one hook's text and how that text is framed and escaped);
``hooks install``, ``status``, ``doctor`` and the docs read both. An agent without hooks (an
editor's agent, which ``explain`` models) has ``hooks=None``.

Behaviour that truly differs between agents is not code here: the record names a strategy (a
``Literal``), and the one module that implements that behaviour looks the name up. Adding an
agent is one module holding its ``RECORD``, one line in ``registry.py`` and its conformance
fixtures (docs/agents.md, "Adding an agent"); tests/unit/test_agent_records.py fails when a
record leaves a fact out.
"""

from __future__ import annotations

from typing import Literal

import attrs

from .rules import AgentRules

# The moments a hook may run at. The neutral kind each maps to is ``SEAM_KINDS``.
# start: a session (re)starts; subagent-start: a subagent's own session starts; prompt: the
# user's prompt is about to go to the model; after-tool: a tool finished; pre-tool: a tool is
# about to run; loaded: the agent reports an instruction file it loaded itself.
Seam = Literal["start", "subagent-start", "prompt", "after-tool", "pre-tool", "loaded"]
SEAMS: tuple[Seam, ...] = ("start", "subagent-start", "prompt", "after-tool", "pre-tool", "loaded")
# The neutral kinds of the hook runtime (hooks/event.py adds "other": an event it does not use).
HookKind = Literal["start", "prompt", "after-tool", "pre-tool", "loaded"]
SEAM_KINDS: dict[Seam, HookKind] = {
    "start": "start",
    "subagent-start": "start",  # a subagent's own session starts (its events carry its id)
    "prompt": "prompt",
    "after-tool": "after-tool",
    "pre-tool": "pre-tool",
    "loaded": "loaded",
}

# How the paths a tool touched are read from its input (hooks/tool_paths.py):
# - file: one file, in the first of ``fields`` present (relative to the cwd when relative);
# - search: a directory or a file to search, in ``fields`` (a name filter is no path);
# - glob: a pattern in ``fields[0]`` whose literal directories count, under ``fields[1:]``;
# - listing: a directory in ``fields``;
# - many-files: a list of paths, directories and patterns in ``fields``;
# - shell: a shell command string in ``fields[0]``, run in ``fields[1:]`` when given;
# - argv-or-patch: a command string or argv list in ``fields``, else an apply_patch body in
#   ``patch_fields`` (Codex CLI: every tool call is one of those).
ToolReader = Literal["file", "search", "glob", "listing", "many-files", "shell", "argv-or-patch"]
# A tool record naming every tool the agent has (Codex CLI's calls are all shell or patch).
ANY_TOOL = "*"
# The shell commands an agent itself takes as reads of a file, loading instruction files after
# them as after its file tools: none; Claude Code's (hooks/claude_shell_reads.py).
ShellReads = Literal["none", "claude-code"]


@attrs.frozen
class Tool:
    """A tool whose input names what it touched.

    ``writes``: a pre-tool hook answers for it (it is about to write those files).
    ``loads_after``: the agent loads instruction files itself after this tool (its file tools,
    as its model in ``rules`` says); False for a shell command, a search or a listing, after
    which only the sidecar delivers them. ``shell_reads``: for a shell tool that does not load
    after, the commands the agent still takes as reads of a file (``ShellReads``); the files they
    read count as read by a file tool.
    """

    name: str
    reader: ToolReader
    fields: tuple[str, ...]
    writes: bool = False
    loads_after: bool = True
    patch_fields: tuple[str, ...] = ()
    shell_reads: ShellReads = "none"


# Why a pre-tool event is not installed where its text arrives after the tool's result anyway
# (Claude Code, Codex CLI, GitHub Copilot CLI): a hook there costs time and adds nothing.
PRE_TOOL_TEXT_AFTER_THE_TOOL = (
    "its text reaches the model only after the tool ran, beside the post-tool one"
)


@attrs.frozen
class Event:
    """One of the agent's hook events: its own name and the seam it is.

    ``installed``: whether ``hooks install`` writes an entry for it; when not, ``why`` says why
    (a pre-tool text reaches no model before the tool runs, so a hook there only costs time).
    """

    seam: Seam
    name: str
    installed: bool = True
    why: str = ""


@attrs.frozen
class NotAvailable:
    """A seam the agent has no hook event for, and the reason (the completeness test asks every
    record to say, for each seam, which it is)."""

    seam: Seam
    reason: str


@attrs.frozen
class Payload:
    """Field names of the agent's hook input (a JSON object on stdin).

    ``source``: the fields naming why a session started (startup, resume, clear, compact), first
    present wins. ``tool_use_id``: the fields naming one tool call, first present wins; with
    ``call_key`` ``digest``, an agent that sends none has the call's timestamp, tool and input
    stand for it. ``failed``: a key of the tool output that is set when the call failed (a
    failed call touched nothing); None: the agent does not say. ``prompt``: ``hook-context-
    stripped`` when the agent puts earlier hooks' ``<hook_context>`` text before the user's.
    ``loaded_path``: the field of a ``loaded`` event naming the file the agent loaded.
    ``parent_session``: the field a subagent's events name their main session in, when their
    ``session_id`` is the subagent's own (Copilot CLI's ``parent_agent_id``). ``unnamed_event``:
    the event a payload without ``event_name`` is (Copilot CLI hands a Claude-shaped
    ``SubagentStart`` hook its own payload, which names no event).
    ``prompt_key``: a field naming the user's prompt that the agent sends with every firing of
    its prompt hook for that prompt (Qwen Code's ``prompt_id``: it fires ``UserPromptSubmit``
    again before each follow-up model call of a prompt); the prompt event is keyed by it, so
    only its first firing is answered (what is due then waits for the next tool event).
    """

    event_name: str = "hook_event_name"
    session_id: str = "session_id"
    cwd: str = "cwd"
    source: tuple[str, ...] = ("source",)
    prompt_field: str = "prompt"
    prompt: Literal["as-is", "hook-context-stripped"] = "as-is"
    tool_name: str = "tool_name"
    tool_input: str = "tool_input"
    tool_output: str = "tool_response"
    failed: str | None = None
    tool_use_id: tuple[str, ...] = ("tool_use_id",)
    call_key: Literal["none", "digest"] = "none"
    timestamp: str = "timestamp"
    parent_session: str | None = None
    unnamed_event: str | None = None
    subagent_id: str | None = None
    subagent_type: str | None = None
    loaded_path: str | None = None
    prompt_key: str | None = None
    # The field of ``Hooks.compact_event`` naming what began the compaction (auto, manual).
    trigger: str = "trigger"


Scope = Literal["project", "local", "user"]


@attrs.frozen
class SettingsPlace:
    """A settings file the agent reads hooks from.

    ``path`` is relative to the project root (``project``, ``local``) or to the home directory
    (``user``). ``env`` names a variable that moves it: with ``env_replaces`` ``home`` the
    variable stands for the home directory, with ``directory`` for the file's directory.
    ``local``: the project file of this machine only, which git leaves out.
    """

    scope: Scope
    path: str
    env: str | None = None
    env_replaces: Literal["home", "directory"] = "home"


# How a project's hooks get to run (hooks/trust.py): no step; Codex CLI's trusted project;
# Gemini CLI's trusted folder; GitHub Copilot CLI's trusted folder.
TrustStep = Literal[
    "none", "codex-trusted-project", "gemini-trusted-folder", "copilot-trusted-folder"
]
# How ``hooks install`` matches the after-tool tools: every tool (no matcher); the tool names as
# an exact ``A|B`` list; the tool names as an anchored regular expression ``^(A|B)$``.
Matcher = Literal["every-tool", "name-list", "anchored-regex"]
# How the text a hook prints is escaped, and at which seams: none; a backslash before each
# ``@`` the agent would read as a file reference (Gemini CLI).
Escaping = Literal["none", "gemini-at-references"]
# The JSON a hook answers with: ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``,
# or a top-level ``{"additionalContext"}``, the only one GitHub Copilot CLI shows the model.
OutputShape = Literal["hook-specific-output", "top-level"]
# What an agent's cap counts: JavaScript string length (UTF-16 code units: a character outside
# the Basic Multilingual Plane counts two) or UTF-8 bytes (an ``é`` counts two).
CapUnit = Literal["utf-16-units", "utf-8-bytes"]


@attrs.frozen
class Output:
    """What one hook prints.

    ``cap``: how much of one hook's text the agent keeps inline, counted in ``cap_unit`` (None:
    no cap, and why in ``cap_note``). ``frames_itself``: the agent frames a hook's text itself and rewrites our
    ``<system-reminder>`` tags, so the hook prints its blocks without them. ``escaping`` applies
    to the text printed at the seams ``escaped_at``. ``shape``: the JSON the hook answers with
    (``OutputShape``).
    """

    cap: int | None
    frames_itself: bool
    cap_unit: CapUnit | None = attrs.field(default=None)
    cap_note: str = ""
    escaping: Escaping = "none"
    escaped_at: tuple[Seam, ...] = ()
    shape: OutputShape = "hook-specific-output"

    @cap_unit.validator
    def _counted(self, _: object, unit: CapUnit | None) -> None:
        if (self.cap is None) != (unit is None):
            raise ValueError("a cap needs the unit it counts (cap_unit), and only a cap has one")


# How the agent's compaction of its history reaches the hooks:
# - start: a SessionStart with source compact follows it, and the compacted context keeps none
#   of the hooks' texts (Claude Code);
# - event-only: only ``compact_event`` fires, as it begins, and what comes after that point stays
#   (GitHub Copilot CLI): the reset waits in the spool for the session's next event;
# - start-keeps-call: a SessionStart with source compact follows it, and the compacted history
#   keeps whole the message its compacting model call was sending (Qwen Code), which took in what
#   the hook delivered since the model call before (hooks/model_calls.py): that is not sent
#   again. ``compact_event`` names the trigger; compacted by hand, nothing was in flight.
Compaction = Literal["start", "event-only", "start-keeps-call"]


@attrs.frozen
class Hooks:
    """An agent's command hooks: events, payloads, tools, settings files, trust and output."""

    events: tuple[Event, ...]
    not_available: tuple[NotAvailable, ...]
    payload: Payload
    tools: tuple[Tool, ...]
    settings: tuple[SettingsPlace, ...]
    matcher: Matcher
    trust: TrustStep
    output: Output
    timeout_unit: Literal["seconds", "milliseconds"]
    # The session's prompt-time context is gone after a resume (Gemini CLI rebuilds the
    # conversation without the hooks' texts), so it is given again.
    resume_drops_prompt_context: bool = False
    # The session-start text is gone after a resume (Qwen Code rebuilds its system message, which
    # held it, and keeps the rest of the history), so it is given again.
    resume_drops_start_context: bool = False
    # The event the agent fires as it begins to compact its history, whose text reaches no model
    # (PreCompact): installed too, answered with nothing; what the hook does there is the
    # record's ``compaction`` (hooks/main.py).
    compact_event: str | None = None
    compaction: Compaction = "start"

    def kinds(self) -> dict[str, HookKind]:
        """The agent's event names and the neutral kind of each."""
        kinds = {e.name: SEAM_KINDS[e.seam] for e in self.events}
        if self.compact_event is not None:
            kinds[self.compact_event] = "start"
        return kinds

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name in (name, ANY_TOOL)), None)

    def installed_events(self) -> tuple[Event, ...]:
        compacting = () if self.compact_event is None else (Event("start", self.compact_event),)
        return (*(e for e in self.events if e.installed), *compacting)

    def place(self, scope: str) -> SettingsPlace | None:
        return next((p for p in self.settings if p.scope == scope), None)

    def scopes(self) -> tuple[Scope, ...]:
        return tuple(p.scope for p in self.settings)


@attrs.frozen
class AgentRecord:
    """One agent: its one id (explain, ``hook --agent``, install, session keys, logs, docs), its
    display name, what it loads (``rules``), and its hooks (None: it runs none of ours)."""

    id: str
    name: str
    rules: AgentRules
    hooks: Hooks | None
    # The agent's hooks' reason to be absent, when ``hooks`` is None.
    no_hooks: str = ""
    # Another agent's hooks this one runs from that agent's settings files (Copilot in VS Code
    # runs Claude Code's): how its payloads read and what it answers. Nothing is installed for
    # it; a hook installed for the other agent tells it apart by its payload (hooks/host.py).
    guest_hooks: Hooks | None = None

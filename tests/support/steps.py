"""What the fake model does on each main request: agent-neutral steps.

Each step is translated into the asking agent's own tool (tests/support/wire.py), so one
script drives all three CLIs:

============  ===========================  ===================================  =======================
step          Claude Code                  Codex CLI                            Gemini CLI
============  ===========================  ===================================  =======================
ReadFile      ``Read{file_path}``          ``exec_command{cmd: "cat PATH"}``    ``read_file{file_path}``
WriteFile     ``Write{file_path,content}`` ``apply_patch`` (``*** Add File``)   ``write_file``
EditFile      ``Edit{file_path,...}``      ``apply_patch`` (``*** Update``)     ``replace``
Shell         ``Bash{command}``            ``exec_command{cmd}``                ``run_shell_command``
============  ===========================  ===================================  =======================

Claude Code's ``Read``/``Write``/``Edit`` need an absolute path; the path is sent as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.recorded import RecordedRequest


@dataclass(frozen=True)
class Text:
    """The model answers with this text and ends its turn."""

    text: str


@dataclass(frozen=True)
class ReadFile:
    """The model reads one file with the agent's own read tool."""

    path: str


@dataclass(frozen=True)
class WriteFile:
    """The model creates or overwrites a file."""

    path: str
    content: str


@dataclass(frozen=True)
class EditFile:
    """The model replaces ``old`` by ``new`` (once) in an existing file."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Shell:
    """The model runs a shell command."""

    command: str


@dataclass(frozen=True)
class ToolCall:
    """A raw tool call in the agent's own terms, e.g. ``ToolCall("MultiEdit", {...})`` for
    Claude Code or ``ToolCall("read_many_files", {"include": ["a.py"]})`` for Gemini CLI."""

    name: str
    arguments: dict[str, Any]


Call = ReadFile | WriteFile | EditFile | Shell | ToolCall


@dataclass(frozen=True)
class ToolCalls:
    """Several tool calls in one model turn."""

    calls: tuple[Call, ...]


Step = Text | Call | ToolCalls
# A policy picks the step from the request itself (for scripts that depend on what was sent).
Policy = Callable[["RecordedRequest"], Step]

DONE_TEXT = "Done."


def calls_of(step: Step) -> tuple[Call, ...]:
    if isinstance(step, Text):
        return ()
    if isinstance(step, ToolCalls):
        return step.calls
    return (step,)

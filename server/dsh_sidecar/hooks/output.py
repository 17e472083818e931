"""What one hook prints: the agent's cap, the frame, its escaping, the JSON envelope; each read
from the agent's record (``agents/record.py``, ``Output``).

Claude Code and Codex keep at most 10,000 of one hook's text inline (above that the model gets a
preview), Claude Code counting UTF-16 code units and Codex UTF-8 bytes, so every size below is
counted as the agent counts it (``text_size``); Gemini CLI has no cap, but it reads ``@`` file references in the
SessionStart text it puts before a headless prompt, so there each ``@`` it would expand gets a
backslash (``gemini.escape_at_references``); its other events' texts reach the model as written.

The frame. The sidecar frames each block of instructions in ``<system-reminder>`` tags, and
Codex sends a hook's text as written. Claude Code and Gemini CLI frame a hook's text themselves
and rewrite tags inside it (docs/reference/agent-clis.md, What each CLI does to a hook's text):
Claude Code gives it a system-role message of its own and turns the ``<`` of every
``system-reminder`` tag into ``&lt;``; Gemini CLI puts it in ``<hook_context>`` and turns every
``<`` and ``>`` into entities. For them the hook prints its blocks without our tags, so nothing
it writes is rewritten, and the agent's own frame holds them: repository text cannot end it
(Claude Code's message ends where the hook's text does, Gemini leaves no ``<`` in it), and every
frame tag a repository wrote is still escaped by the renderer (``<\\/system-reminder>``), which
neither CLI rewrites further than Gemini's entities.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import attrs

from dsh_sidecar.agents.record import SEAM_KINDS, CapUnit, Escaping, Output, OutputShape
from dsh_sidecar.agents.registry import hooks_of
from dsh_sidecar.model import Message
from dsh_sidecar.sources.agent_instructions.render import CLOSE_TAG, OPEN_TAG
from dsh_sidecar.sources.agent_instructions.state import is_baseline, is_instructions_message

from . import gemini
from .event import Agent, Kind

# The cap Claude Code and Codex CLI keep inline (their records say so; tests compare).
INLINE_CAP = 10_000
# Room kept for the one-line notice naming what waits for the next event.
NOTICE_ROOM = 300
SEPARATOR = "\n\n"

# The named escapings of agents/record.py, ``Escaping``.
ESCAPINGS: dict[Escaping, Callable[[str], str]] = {
    "none": lambda text: text,
    "gemini-at-references": gemini.escape_at_references,
}


def output_of(agent: Agent) -> Output:
    return hooks_of(agent).output


def cap_of(agent: Agent) -> int | None:
    """How much of one hook's text ``agent`` keeps inline, in ``text_size``; None: no cap."""
    return output_of(agent).cap


# How each unit an agent counts its cap in measures a text.
_MEASURES: dict[CapUnit, Callable[[str], int]] = {
    "utf-16-units": lambda text: len(text.encode("utf-16-le", "surrogatepass")) // 2,
    "utf-8-bytes": lambda text: len(text.encode("utf-8", "surrogatepass")),
}


def text_size(agent: Agent, text: str) -> int:
    """``text``'s size as ``agent`` counts it against its cap (its record's ``cap_unit``): a
    Python length counts an emoji once where Claude Code counts two, and an ``é`` once where
    Codex counts two, so a text under the cap by ``len`` could still be cut. Its length for
    an agent without a cap (nothing is compared with it)."""
    unit = output_of(agent).cap_unit
    return len(text) if unit is None else _MEASURES[unit](text)


def _cut_to(agent: Agent, text: str, room: int, tail: str) -> str:
    """``text`` cut so that it and ``tail`` fit in ``room`` as ``agent`` counts."""
    cut = min(len(text), room)
    while cut and text_size(agent, text[:cut] + tail) > room:
        cut -= max(1, (text_size(agent, text[:cut] + tail) - room) // 4)
    return text[:cut] + tail


def capped_instruction_bytes(cap: int) -> int:
    """The instruction renderer's byte budget under ``cap``: a text's UTF-8 bytes are never
    fewer than its UTF-16 units, so a rendered message of this many bytes fits in the cap in
    either unit, with room for the notice and separators."""
    return cap - NOTICE_ROOM - 200


def escape_for(agent: Agent, kind: Kind, text: str) -> str:
    """``text`` as ``agent`` must be handed it at a ``kind`` event: its record's escaping, at
    the seams it names. Only Gemini CLI's SessionStart text goes through its ``@`` parser
    (headless, in front of the prompt); its BeforeAgent and AfterTool texts are added after that
    parser ran, so a backslash there would only change what the model reads. See
    docs/reference/agent-clis.md, Gemini CLI's @ file references."""
    output = output_of(agent)
    if kind not in {SEAM_KINDS[seam] for seam in output.escaped_at}:
        return text
    return ESCAPINGS[output.escaping](text)


def framed_for(agent: Agent, text: str) -> str:
    """``text`` in the frame ``agent`` leaves alone: for Claude Code and Gemini CLI, every block
    without its ``<system-reminder>`` lines. Those exact tags are the renderer's own: inside a
    block every frame tag, however written, has been escaped (docs/protocol.md, "What is
    escaped"), so none of them is repository text."""
    if not output_of(agent).frames_itself:
        return text
    return text.replace(OPEN_TAG + "\n", "").replace("\n" + CLOSE_TAG, "")


def _priority(message: Message) -> int:
    """Lower first: nested instructions, then the baseline, then the other sources."""
    if is_instructions_message(message):
        return 1 if is_baseline(message) else 0
    return 2


def _label(message: Message) -> str:
    source = message.source
    if is_instructions_message(message):
        paths = [c.get("path") for c in source.get("changes", []) if isinstance(c, dict)]
        return "instructions " + ", ".join(str(p) for p in paths if p)
    return str(source.get("plugin") or source.get("kind") or "context")


@attrs.frozen
class Shaped:
    text: str
    printed: tuple[Message, ...]  # in the order given
    held: tuple[Message, ...]  # did not fit: they stay pending


def shape(
    agent: Agent, kind: Kind, forced: Sequence[Message], messages: Sequence[Message]
) -> Shaped:
    """The text for ``forced`` (always sent: a baseline rendered within the cap) and then
    ``messages`` under the agent's cap: the most specific first, whole messages only; what does
    not fit is held for the next event and named in a one-line notice. The whole text is
    escaped for a ``kind`` event at the end, notice included, since whether Gemini reads an
    ``@`` as a reference depends on the characters around it, across the separators too (only
    Gemini escapes, and it has no cap, so the sizes below are those of the printed text)."""
    texts = {m.id: m.text for m in (*forced, *messages)}
    cap = cap_of(agent)
    chosen: set[str] = set()
    first = [texts[m.id] for m in forced if texts[m.id]]
    if cap is None:
        chosen = {m.id for m in messages if texts[m.id]}
    else:
        used = sum(text_size(agent, t) + len(SEPARATOR) for t in first)
        for m in sorted(messages, key=_priority):  # stable: batch order within a priority
            size = text_size(agent, texts[m.id]) + len(SEPARATOR)
            if texts[m.id] and used + size <= cap - NOTICE_ROOM:
                chosen.add(m.id)
                used += size
    printed = tuple(m for m in messages if m.id in chosen)
    held = tuple(m for m in messages if m.id not in chosen and texts[m.id])
    parts = [*first, *(texts[m.id] for m in printed)]
    if held:
        names = "; ".join(_label(m) for m in held)
        notice = (
            f"[dsh-sidecar: {len(held)} more context message(s) wait for the next event: {names}]"
        )
        if cap is not None and text_size(agent, notice) > NOTICE_ROOM:
            notice = _cut_to(agent, notice, NOTICE_ROOM, "…]")
        parts.append(notice)
    return Shaped(escape_for(agent, kind, framed_for(agent, SEPARATOR.join(parts))), printed, held)


def envelope(event_name: str, text: str, shape: OutputShape = "hook-specific-output") -> bytes:
    """The JSON the hook prints, in the shape the agent's record names (``Output.shape``)."""
    body: dict[str, object] = {"additionalContext": text}
    if shape == "hook-specific-output":
        body = {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
    return (json.dumps(body, ensure_ascii=False) + "\n").encode("utf-8")

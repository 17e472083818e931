"""Gemini CLI's ``@`` escaping, the strategy its record names (``agents/gemini_cli.py``,
``escaping="gemini-at-references"``) and ``output.py`` applies."""

from __future__ import annotations

import re

# Gemini CLI 0.61.0 reads `@` file references in the text of its first prompt, and a
# SessionStart hook's text is put in front of that prompt. The rule, from its shipped code:
# docs/reference/agent-clis.md, Gemini CLI's @ file references.
# An `@` opens a reference unless a backslash stands right before it, as long as the next
# character can begin a path. Every character can, except whitespace (space, tab, newline,
# carriage return), the punctuation `, ; ! ? ( ) [ ] { }`, and a dot that ends the text or is
# followed by whitespace. The end of our text counts as "more path": Gemini closes it with
# `</hook_context>`, so a final `@` or `@.` does open a reference there.
_OPENS_REFERENCE = re.compile(r"(?<!\\)@(?=[^ \t\n\r,;!?()\[\]{}.]|\.(?![ \t\n\r])|\Z)")


def escape_at_references(text: str) -> str:
    """``text`` with a backslash put before each ``@`` that Gemini CLI would take for a file
    reference, and nowhere else: Gemini keeps the backslash (the model reads it), so every
    other character reaches the model as written. Deciding each ``@`` by the character before
    it and the two after it is exact, for the whole text at once: the only insertions are
    backslashes right before an ``@``, and a backslash is a path character just as an ``@`` is,
    so no other ``@`` changes its answer."""
    return _OPENS_REFERENCE.sub(r"\\@", text)

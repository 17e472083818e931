"""The Gemini ``@`` escape (``hooks/gemini.py``, ``escape_at_references``) against a model of
Gemini CLI 0.61.0's own ``@`` parser, written from its shipped code:
docs/reference/agent-clis.md, Gemini CLI's @ file references.

The model is an independent re-implementation of that parser (the whole tokenizer: where a
reference starts, how far it runs, which references swallow later ``@`` signs), not of the
escape's shortcut, so the properties check the shortcut against the rule itself: after the
escape Gemini finds no reference in the text it parses, the escape adds nothing but a backslash
before an ``@``, and each backslash it adds is needed.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.hooks.gemini import escape_at_references
from dsh_sidecar.hooks.output import escape_for

# One reference, as Gemini's tokenizer scans for it (left to right, each match resuming after
# the previous one): an `@` with no backslash right before it, then one or more path units. A
# unit is a double-quoted run; a backslash with the next character (JavaScript's `.`: anything
# but a line terminator); any character but whitespace (space, tab, LF, CR), `, ; ! ? ( ) [ ]
# { }` and the dot; or a dot, as long as neither the end of the whole string nor whitespace
# follows it. JavaScript's `$` without the m flag is the end of input only: Python's `\Z`.
_REFERENCE = re.compile(
    r"""(?<!\\)@(?:"[^"]*"|\\[^\n\r\u2028\u2029]|[^ \t\n\r,;!?()\[\]{}.]|\.(?!\Z|[ \t\n\r]))+"""
)


def references(query: str) -> list[tuple[int, str]]:
    """Where Gemini's parser finds a reference in ``query``, and its text."""
    return [(m.start(), m.group()) for m in _REFERENCE.finditer(query)]


def headless_query(hook_text: str, prompt: str = "Read the file and stop.") -> str:
    """What Gemini CLI 0.61.0 parses for ``@`` references in a headless run whose SessionStart
    hook answered ``hook_text``: the hook's text with `<` and `>` turned into entities, framed
    in ``<hook_context>`` tags, a blank line, then the prompt."""
    sanitized = hook_text.replace("<", "&lt;").replace(">", "&gt;")
    return f"<hook_context>{sanitized}</hook_context>\n\n{prompt}"


def inserted(original: str, escaped: str) -> list[int]:
    """The indices in ``original`` of the ``@`` signs ``escaped`` put a backslash before,
    failing unless ``escaped`` is ``original`` with nothing else added, removed or changed."""
    at: list[int] = []
    i = j = 0
    while i < len(original):
        if escaped[j] == original[i]:
            i, j = i + 1, j + 1
        else:
            assert (original[i], escaped[j : j + 2]) == ("@", "\\@"), (original, escaped, i)
            at.append(i)
            i, j = i + 1, j + 2
    assert j == len(escaped), (original, escaped)
    return at


# Text built from the characters the rule cares about, plus ordinary ones.
_INTERESTING = st.sampled_from(list('@@@\\. \t\n\r",;!?()[]{}<>`/abé\u2028\u00a0😀&#'))
_TEXTS = st.lists(_INTERESTING | st.characters(), max_size=40).map("".join)


# --- the model reproduces what the shipped parser does ----------------------------------------


def test_the_model_finds_what_gemini_finds() -> None:
    assert references("see @a.txt, then") == [(4, "@a.txt")]
    assert references("ops@.env") == [(3, "@.env")]
    assert references("(@secrets.txt)") == [(1, "@secrets.txt")]
    # The closing backtick is a path character: Gemini looks for `types/node`` ` (and globs).
    assert references("`@types/node`") == [(1, "@types/node`")]
    assert references("mail me@example.com.") == [(7, "@example.com")]
    assert references("a@b@c") == [(1, "@b@c")]  # the second `@` is part of the first path
    assert references('@"my file" and @my\\ file') == [(0, '@"my file"'), (15, "@my\\ file")]
    assert references("x\\@y @ @, @. @.\n") == []
    assert references("@.") == [] and references("@..") == [(0, "@.")]


# --- the escape ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("ops@.env", "ops\\@.env"),
        ("(@secrets.txt)", "(\\@secrets.txt)"),
        ("`@types/node`", "`\\@types/node`"),
        ("a@b/c", "a\\@b/c"),
        ("mail me@example.com.", "mail me\\@example.com."),
        ("@AGENTS.md", "\\@AGENTS.md"),
        ("a@b@c", "a\\@b\\@c"),
        ("@@", "\\@\\@"),
        ('say @"x y"', 'say \\@"x y"'),
        ("@<b>", "\\@<b>"),
        # Not references: nothing changes, so the model reads exactly these.
        ("me@ you", "me@ you"),
        ("(@) [@] {@} @, @; @! @? @\t@\n", "(@) [@] {@} @, @; @! @? @\t@\n"),
        ("stop@. next@.\n", "stop@. next@.\n"),
        ("already \\@escaped", "already \\@escaped"),
        # At the very end Gemini's closing tag follows: `@</hook_context>` would be a reference.
        ("ends with @", "ends with \\@"),
        ("ends with @.", "ends with \\@."),
    ],
)
def test_the_escape(text: str, escaped: str) -> None:
    assert escape_at_references(text) == escaped


def test_only_gemini_session_start_text_is_escaped() -> None:
    text = "ops@.env and (@secrets.txt)"
    assert escape_for("gemini", "start", text) == "ops\\@.env and (\\@secrets.txt)"
    for kind in ("prompt", "after-tool", "pre-tool", "loaded", "other"):
        assert escape_for("gemini", kind, text) == text
    for agent in ("claude", "codex"):
        assert escape_for(agent, "start", text) == text


def test_a_long_address_is_escaped_whole() -> None:
    # A reference followed by kilobytes without a stop character is one enormous path to Gemini.
    text = "ops@" + "x" * 50_000
    assert escape_at_references(text) == "ops\\@" + "x" * 50_000
    assert references(headless_query(escape_at_references(text))) == []


@hsettings(max_examples=examples(2000), deadline=None)
@given(_TEXTS)
@example("ops@.env (@secrets.txt) `@types/node` a@b/c me@example.com")
@example("@\\@@.\\")
def test_after_the_escape_gemini_finds_no_reference(text: str) -> None:
    escaped = escape_at_references(text)
    assert references(headless_query(escaped)) == []
    # Also with another hook's text after ours (Gemini joins them with a newline).
    assert references(headless_query(escaped + "\nother hook")) == []


@hsettings(max_examples=examples(2000), deadline=None)
@given(_TEXTS)
@example("a@b@c")
@example("x@.@")
def test_the_escape_adds_only_the_backslashes_gemini_needs(text: str) -> None:
    escaped = escape_at_references(text)
    at = inserted(text, escaped)
    # Removing the added backslashes gives the text back.
    restored = list(escaped)
    for k in sorted((i + n for n, i in enumerate(at)), reverse=True):
        del restored[k]
    assert "".join(restored) == text
    # Each one is needed: without it Gemini would read a reference starting at that `@`.
    for n, i in enumerate(at):
        position = i + n  # of the backslash in `escaped`
        without = escaped[:position] + escaped[position + 1 :]
        query = headless_query(without)
        offset = len("<hook_context>") + len(
            without[:position].replace("<", "&lt;").replace(">", "&gt;")
        )
        assert offset in [start for start, _ in references(query)], (text, position)

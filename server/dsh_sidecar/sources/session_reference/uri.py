"""Canonical session-reference URIs and markdown mentions.

Upstream behaviour: docs/reference/session-reference.md, Canonical URI and Mentions.

``dsh-session:<base64url(UTF-8(JSON.stringify(sessionId)))>`` with no padding. Decoding accepts
only the canonical spelling: whatever decodes must re-encode to the identical URI.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

import attrs

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.jsutil import JS_WHITESPACE, js_json_string

SCHEME = "dsh-session:"
_PAYLOAD = re.compile(r"[A-Za-z0-9_-]+")


@attrs.frozen
class SessionReferenceInput:
    """One reference: a session id and an optional label (None = use the id)."""

    session_id: str
    label: str | None = None


@attrs.frozen
class ParsedText:
    text: str
    references: tuple[SessionReferenceInput, ...]


def invalid_uri(uri: str, cause: BaseException | None = None) -> DshError:
    error = DshError(
        errors.SESSION_REFERENCE_INVALID_REFERENCE,
        f"invalid session reference URI {js_json_string(uri)}",
        {"uri": uri},
    )
    error.__cause__ = cause
    return error


def encode_session_reference_uri(session_id: str) -> str:
    payload = js_json_string(session_id).encode("utf-8")  # lone surrogates are \\u-escaped
    return SCHEME + base64.urlsafe_b64encode(payload).rstrip(b"=").decode("ascii")


def decode_session_reference_uri(uri: str) -> str:
    """The session id of a canonical URI; anything else raises ``INVALID_REFERENCE``."""
    if not uri.startswith(SCHEME):
        raise invalid_uri(uri)
    payload = uri[len(SCHEME) :]
    if not _PAYLOAD.fullmatch(payload):
        raise invalid_uri(uri)
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError) as exc:  # UnicodeDecodeError, JSONDecodeError
        raise invalid_uri(uri, exc) from exc
    if not isinstance(value, str) or encode_session_reference_uri(value) != uri:
        raise invalid_uri(uri)
    return value


def _escape_label(label: str) -> str:
    return re.sub(r"[\\\]]", lambda m: "\\" + m[0], label)


def format_session_reference_mention(session_id: str, label: str | None = None) -> str:
    """``@[<label with \\ and ] escaped>](<uri>)``; only a missing label falls back to the id."""
    shown = session_id if label is None else label
    return f"@[{_escape_label(shown)}]({encode_session_reference_uri(session_id)})"


format_mention = format_session_reference_mention


# The upstream regex (JS flags ``gu``), with JS ``.`` and ``\s`` spelled out as explicit classes.
# Kept as the definition ``mentions`` follows (tests compare the two); never run on a text:
#   @\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^\s)]*)\)|(dsh-session:[A-Za-z0-9_-]+)
# JS ``.`` excludes the four line terminators; JS ``\s`` is WhiteSpace + LineTerminator.
_JS_DOT = "[^\n\r\u2028\u2029]"
_JS_NOT_SPACE_OR_PAREN = "[^" + re.escape(JS_WHITESPACE) + ")]"
MENTION_PATTERN = re.compile(
    r"@\[((?:\\" + _JS_DOT + r"|[^\\\]])*)\]\((dsh-session:" + _JS_NOT_SPACE_OR_PAREN + r"*)\)"
    r"|(dsh-session:[A-Za-z0-9_-]+)"
)
_LABEL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)  # linear: one character after each backslash
_JS_LINE_TERMINATORS = frozenset("\n\r\u2028\u2029")
_URI_STOP = frozenset(JS_WHITESPACE) | {")"}
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

# (start, end, label as written, URI of a labelled mention, bare URI): the groups of a match.
Mention = tuple[int, int, str | None, str | None, str | None]


def mentions(text: str) -> list[Mention]:
    """What ``MENTION_PATTERN.finditer(text)`` finds, in time linear in ``text``.

    The regex backtracks: every ``@[`` with no ``]`` after it scans to the end of the text, so
    a text of thousands of ``@[`` costs seconds (16 KB: about 6 s). Here a label's end is found
    once per position: the label grammar is deterministic (an escape pair, or one character
    that is neither a backslash nor ``]``), so where a label scan stops depends only on where
    it starts, and each position's stop is remembered. The rest of a mention has a single way
    to match, so the first alternative that fits at a position is the regex's match there.
    """
    out: list[Mention] = []
    stops: dict[int, int] = {}
    n = len(text)
    i = 0
    while i < n:
        found = _labelled(text, i, stops) if text.startswith("@[", i) else None
        if found is None and text.startswith(SCHEME, i):
            end = i + len(SCHEME)
            while end < n and text[end] in _BARE:
                end += 1
            if end > i + len(SCHEME):
                found = (i, end, None, None, text[i:end])
        if found is None:
            i += 1
            continue
        out.append(found)
        i = found[1]
    return out


def _labelled(text: str, start: int, stops: dict[int, int]) -> Mention | None:
    """The ``@[label](dsh-session:…)`` mention at ``start``, or None."""
    stop = _label_stop(text, start + 2, stops)
    n = len(text)
    if stop >= n or text[stop] != "]" or not text.startswith("(" + SCHEME, stop + 1):
        return None
    end = stop + 2 + len(SCHEME)
    while end < n and text[end] not in _URI_STOP:
        end += 1
    if end >= n or text[end] != ")":
        return None
    return (start, end + 1, text[start + 2 : stop], text[stop + 2 : end], None)


def _label_stop(text: str, position: int, stops: dict[int, int]) -> int:
    """Where a label starting at ``position`` ends (a ``]``, a lone backslash, or the end)."""
    visited: list[int] = []
    n = len(text)
    while position not in stops:
        visited.append(position)
        if position >= n:
            break
        char = text[position]
        if char == "\\":
            if position + 1 < n and text[position + 1] not in _JS_LINE_TERMINATORS:
                position += 2
                continue
            break
        if char == "]":
            break
        position += 1
    stop = stops.get(position, position)
    for seen in visited:
        stops[seen] = stop
    return stop


def parse_session_reference_text(text: str) -> ParsedText:
    """Rewrite each mention to ``@label`` and return the references in order (duplicates kept).

    Any malformed URI in a match raises ``INVALID_REFERENCE``; the whole parse fails.
    """
    out: list[str] = []
    references: list[SessionReferenceInput] = []
    position = 0
    for start, end, written, uri, bare in mentions(text):
        if uri is not None:
            session_id = decode_session_reference_uri(uri)
            label = _LABEL_ESCAPE.sub(lambda m: m[1], written or "")
        else:
            assert bare is not None
            session_id = decode_session_reference_uri(bare)
            label = session_id
        out.append(text[position:start])
        out.append("@" + label)
        references.append(SessionReferenceInput(session_id, label))
        position = end
    out.append(text[position:])
    return ParsedText("".join(out), tuple(references))

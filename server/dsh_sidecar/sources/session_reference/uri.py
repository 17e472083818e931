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


# The upstream regex (JS flags ``gu``), with JS ``.`` and ``\s`` spelled out as explicit classes:
#   @\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^\s)]*)\)|(dsh-session:[A-Za-z0-9_-]+)
# JS ``.`` excludes the four line terminators; JS ``\s`` is WhiteSpace + LineTerminator.
_JS_DOT = "[^\n\r\u2028\u2029]"
_JS_NOT_SPACE_OR_PAREN = "[^" + re.escape(JS_WHITESPACE) + ")]"
MENTION_PATTERN = re.compile(
    r"@\[((?:\\" + _JS_DOT + r"|[^\\\]])*)\]\((dsh-session:" + _JS_NOT_SPACE_OR_PAREN + r"*)\)"
    r"|(dsh-session:[A-Za-z0-9_-]+)"
)
_LABEL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def parse_session_reference_text(text: str) -> ParsedText:
    """Rewrite each mention to ``@label`` and return the references in order (duplicates kept).

    Any malformed URI in a match raises ``INVALID_REFERENCE``; the whole parse fails.
    """
    out: list[str] = []
    references: list[SessionReferenceInput] = []
    position = 0
    for match in MENTION_PATTERN.finditer(text):
        if match[2] is not None:
            session_id = decode_session_reference_uri(match[2])
            label = _LABEL_ESCAPE.sub(lambda m: m[1], match[1])
        else:
            session_id = decode_session_reference_uri(match[3])
            label = session_id
        out.append(text[position : match.start()])
        out.append("@" + label)
        references.append(SessionReferenceInput(session_id, label))
        position = match.end()
    out.append(text[position:])
    return ParsedText("".join(out), tuple(references))

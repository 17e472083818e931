"""Session-reference URIs, mentions and mention parsing (docs/reference/session-reference.md,
Canonical URI; Mentions)."""

from __future__ import annotations

import base64

import pytest

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.sources.session_reference.uri import (
    ParsedText,
    SessionReferenceInput,
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

URI_GOLDENS = [
    ("target", "dsh-session:InRhcmdldCI"),
    ("source", "dsh-session:InNvdXJjZSI"),
    ("one", "dsh-session:Im9uZSI"),
    ("", "dsh-session:IiI"),
    ("a", "dsh-session:ImEi"),
    ("x", "dsh-session:Ingi"),
    ("ab", "dsh-session:ImFiIg"),
    ("é", "dsh-session:IsOpIg"),
    ("a<b", "dsh-session:ImE8YiI"),
    ("\ud800", "dsh-session:Ilx1ZDgwMCI"),
    (
        'unicode/引号"/slash\\/line\n',
        "dsh-session:InVuaWNvZGUv5byV5Y-3XCIvc2xhc2hcXC9saW5lXG4i",
    ),
]


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize(("session_id", "uri"), URI_GOLDENS)
def test_uri_goldens(session_id: str, uri: str) -> None:
    assert encode_session_reference_uri(session_id) == uri
    assert decode_session_reference_uri(uri) == session_id


def test_round_trip_of_awkward_ids() -> None:
    for session_id in ["\u2028\u2029", "\x00\x1f\x7f", "😀", "\udc00x\ud83d", "a" * 500]:
        assert decode_session_reference_uri(encode_session_reference_uri(session_id)) == session_id


@pytest.mark.parametrize(
    "uri",
    [
        "dsh-session:IiJ",  # non-canonical trailing bits
        "dsh-session:IiI=",  # padding
        "dsh-session:",  # empty payload
        "https://example.test",  # wrong scheme
        "DSH-SESSION:ImEi",  # scheme is case-sensitive
        "dsh-session:" + b64url(b'{"id":"x"}'),  # not a string
        "dsh-session:" + b64url(b"1"),  # not a string
        "dsh-session:" + b64url(b' "a"'),  # whitespace, non-canonical
        "dsh-session:" + b64url(b'"\\u0061"'),  # escaped spelling, non-canonical
        "dsh-session:" + base64.b64encode(b'"\xff\xff\xff"').decode().rstrip("="),  # '/' alphabet
        "dsh-session:" + b64url(b'"\xff"'),  # invalid UTF-8
        "dsh-session:" + b64url(b"null"),
        "dsh-session:ImEi ",  # whitespace
        "dsh-session:I",  # impossible length
    ],
)
def test_uri_rejections(uri: str) -> None:
    with pytest.raises(DshError) as caught:
        decode_session_reference_uri(uri)
    assert caught.value.code == errors.SESSION_REFERENCE_INVALID_REFERENCE
    assert caught.value.message == f'invalid session reference URI "{uri}"'


def test_rejection_message_quotes_with_json_stringify() -> None:
    with pytest.raises(DshError) as caught:
        decode_session_reference_uri('x"\n')
    assert caught.value.message == 'invalid session reference URI "x\\"\\n"'


def test_standard_alphabet_sample_really_contains_a_slash() -> None:
    assert "/" in base64.b64encode(b'"\xff\xff\xff"').decode()


@pytest.mark.parametrize(
    ("session_id", "label", "mention"),
    [
        ("x", "a]b\\c", "@[a\\]b\\\\c](dsh-session:Ingi)"),
        ("x", None, "@[x](dsh-session:Ingi)"),
        ("x", "", "@[](dsh-session:Ingi)"),
        ("x", "[a](b)\nc", "@[[a\\](b)\nc](dsh-session:Ingi)"),  # only \\ and ] escaped
        ("source]", None, "@[source\\]](" + encode_session_reference_uri("source]") + ")"),
    ],
)
def test_mention_format(session_id: str, label: str | None, mention: str) -> None:
    assert format_session_reference_mention(session_id, label) == mention


def ref(session_id: str, label: str) -> SessionReferenceInput:
    return SessionReferenceInput(session_id, label)


PARSE_TABLE = [
    ("what is a dsh-session: URI?", "what is a dsh-session: URI?", []),
    ("see dsh-session:%%%", "see dsh-session:%%%", []),
    ("dsh-session:ImEi=", "@a=", [ref("a", "a")]),
    (
        "see dsh-session:ImEi. and `dsh-session:ImEi`",
        "see @a. and `@a`",
        [ref("a", "a"), ref("a", "a")],
    ),
    ("@[L](dsh-session:ImEi)", "@L", [ref("a", "L")]),
    ("@@[L](dsh-session:ImEi)", "@@L", [ref("a", "L")]),
    ("@[](dsh-session:ImEi)", "@", [ref("a", "")]),
    ("@[a\\]b](dsh-session:ImEi)", "@a]b", [ref("a", "a]b")]),
    ("@[L\nM](dsh-session:ImEi)", "@L\nM", [ref("a", "L\nM")]),
    ("@[L](dsh-session:ImEi )", "@[L](@a )", [ref("a", "a")]),
    ("@[L] (dsh-session:ImEi)", "@[L] (@a)", [ref("a", "a")]),
    ("[L](dsh-session:ImEi)", "[L](@a)", [ref("a", "a")]),
    ("@[L](https://x)", "@[L](https://x)", []),
    ("@[L](DSH-SESSION:ImEi)", "@[L](DSH-SESSION:ImEi)", []),
    # JS semantics spelled out: '.' excludes U+2028, so '\' cannot escape it
    ("@[a\\\u2028b](dsh-session:ImEi)", "@[a\\\u2028b](@a)", [ref("a", "a")]),
    # JS \s includes U+FEFF: the markdown URI stops before it, the bare URI matches
    ("@[L](dsh-session:ImEi\ufeff)", "@[L](@a\ufeff)", [ref("a", "a")]),
    # astral characters are one code point, escaped or not
    ("@[😀\\😀](dsh-session:ImEi)", "@😀😀", [ref("a", "😀😀")]),
    (
        "@[x\\\\](dsh-session:ImEi) and @[y](dsh-session:Ingi)",
        "@x\\ and @y",
        [ref("a", "x\\"), ref("x", "y")],
    ),
    ("@[[nested]](dsh-session:ImEi)", "@[[nested]](@a)", [ref("a", "a")]),
]


@pytest.mark.parametrize(("text", "rewritten", "refs"), PARSE_TABLE)
def test_mention_parse_table(text: str, rewritten: str, refs: list[SessionReferenceInput]) -> None:
    assert parse_session_reference_text(text) == ParsedText(rewritten, tuple(refs))


@pytest.mark.parametrize(
    ("text", "bad_uri"),
    [
        ("see dsh-session:IiJ", "dsh-session:IiJ"),
        ("@[bad](dsh-session:%%%)", "dsh-session:%%%"),
        ("@[bad](dsh-session:not-canonical)", "dsh-session:not-canonical"),
        ("@[L](dsh-session:)", "dsh-session:"),
        ("@[L](dsh-session:ImEi=)", "dsh-session:ImEi="),
        ("xdsh-session:ImEiy", "dsh-session:ImEiy"),
        ("dsh-session:ImEiabc", "dsh-session:ImEiabc"),
        # JS \s excludes U+001C: it stays inside the markdown URI, which then fails to decode
        ("@[L](dsh-session:ImEi\x1c)", "dsh-session:ImEi\x1c"),
        ("fine @[a](dsh-session:ImEi) then dsh-session:IiJ", "dsh-session:IiJ"),
    ],
)
def test_mention_parse_throws(text: str, bad_uri: str) -> None:
    with pytest.raises(DshError) as caught:
        parse_session_reference_text(text)
    assert caught.value.code == errors.SESSION_REFERENCE_INVALID_REFERENCE
    assert caught.value.message.startswith("invalid session reference URI ")
    assert caught.value.data == {"uri": bad_uri}


def test_formatted_mentions_parse_back() -> None:
    for session_id, label in [("x", "a]b\\c"), ("引号", None), ("", ""), ("s", "two\nlines")]:
        mention = format_session_reference_mention(session_id, label)
        parsed = parse_session_reference_text(f"see {mention}!")
        shown = session_id if label is None else label
        assert parsed == ParsedText(f"see @{shown}!", (ref(session_id, shown),))

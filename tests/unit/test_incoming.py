"""Checking one body against JSON-RPC 2.0 before pygls sees it (lsp/rpc/incoming.py).

The live server gets the same cases over stdio in tests/reliability/test_wire.py; this file pins
the exact classification and field paths.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_sidecar.lsp.rpc import incoming
from dsh_sidecar.lsp.rpc.incoming import (
    CODE_INVALID_PARAMS,
    CODE_INVALID_REQUEST,
    CODE_PARSE_ERROR,
    CODE_TOO_DEEP,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_NESTING_DEPTH,
    MAX_SAFE_INTEGER,
    PARSE_ERROR,
    Notification,
    Refusal,
    Request,
    Response,
    decode,
)


def body(message: Any) -> bytes:
    return json.dumps(message).encode()


def request(params: Any, msg_id: Any = 7) -> bytes:
    return body({"jsonrpc": "2.0", "id": msg_id, "method": "dsh/session/append", "params": params})


def refusal(raw: bytes) -> Refusal:
    found = decode(raw)
    assert isinstance(found, Refusal), found
    return found


def test_well_formed_messages_are_classified() -> None:
    assert decode(request({})) == Request(7, "dsh/session/append", json.loads(request({})))
    note = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
    assert decode(body(note)) == Notification("initialized", note)
    answer = {"jsonrpc": "2.0", "id": "a1", "result": [None]}
    assert decode(body(answer)) == Response("a1", answer)
    failed = {"jsonrpc": "2.0", "id": "a2", "error": {"code": 1, "message": "no"}}
    assert decode(body(failed)) == Response("a2", failed)


def test_nested_messages_stay_plain_data() -> None:
    inner = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"jsonrpc": "2.0"}}
    found = decode(request({"events": [{"data": {"input": inner}}]}))
    assert isinstance(found, Request)
    assert found.message["params"]["events"][0]["data"]["input"] == inner
    assert type(found.message["params"]["events"][0]["data"]["input"]) is dict


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": "\xff"}}',
            "not UTF-8 (invalid start byte at byte 60)",
        ),
        (b'{"jsonrpc": "2.0", "id": 1', "Expecting ',' delimiter"),
        (b"", "Expecting value"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": NaN}}', "NaN is not JSON"),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": [-Infinity]}',
            "-Infinity is not JSON",
        ),
        (b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 1, "method": "x"}', "Unexpected UTF-8 BOM"),
    ],
)
def test_not_json_is_a_parse_error_with_id_null(raw: bytes, fragment: str) -> None:
    found = refusal(raw)
    assert (found.code, found.data_code, found.reply_id, found.answer) == (
        PARSE_ERROR,
        CODE_PARSE_ERROR,
        None,
        True,
    )
    assert fragment in found.message


@pytest.mark.parametrize(
    ("message", "reply_id", "fragment"),
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "x"}], None, "batches are not supported"),
        ([], None, "batches are not supported"),
        ("hello", None, "a message must be a JSON object"),
        ({"jsonrpc": "1.0", "id": 3, "method": "x"}, 3, '"jsonrpc" must be "2.0"'),
        ({"id": 3, "method": "x"}, 3, '"jsonrpc" must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 4, "method": 5}, 4, '"method" must be a string'),
        ({"jsonrpc": "2.0", "id": 4, "method": None}, 4, '"method" must be a string'),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "x"}, None, '"id" must be an integer or a string'),
        (
            {"jsonrpc": "2.0", "id": True, "method": "x"},
            None,
            '"id" must be an integer or a string',
        ),
        (
            {"jsonrpc": "2.0", "id": None, "method": "x"},
            None,
            '"id" must be an integer or a string',
        ),
        (
            {"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"},
            None,
            '"id" must be an integer or a string',
        ),
        (
            {"jsonrpc": "2.0", "id": 5, "method": "x", "params": "s"},
            5,
            '"params" must be an object or an array',
        ),
        (
            {"jsonrpc": "2.0", "id": 5, "method": "x", "params": 3},
            5,
            '"params" must be an object or an array',
        ),
        ({"jsonrpc": "2.0"}, None, 'a message needs "method"'),
    ],
)
def test_not_a_request_is_invalid_request(message: Any, reply_id: Any, fragment: str) -> None:
    found = refusal(body(message))
    assert (found.code, found.data_code, found.reply_id) == (
        INVALID_REQUEST,
        CODE_INVALID_REQUEST,
        reply_id,
    )
    assert fragment in found.message


def test_an_id_beyond_the_safe_range_cannot_be_echoed() -> None:
    found = refusal(b'{"jsonrpc": "2.0", "id": 9007199254740993, "method": "x"}')
    assert (found.code, found.reply_id) == (INVALID_REQUEST, None)


def test_a_bad_notification_or_response_is_never_answered() -> None:
    assert not refusal(body({"jsonrpc": "1.0", "method": "x"})).answer
    bad = refusal(body({"jsonrpc": "2.0", "id": "r1", "result": 1, "error": {}}))
    assert (bad.answer, bad.response_to) == (False, "r1")


@pytest.mark.parametrize(
    ("params", "path", "what"),
    [
        (
            {"events": [{"data": {"message": {"content": [{"text": "a\ud800b"}]}}}]},
            "params.events[0].data.message.content[0].text",
            "lone surrogate \\ud800 at character 1",
        ),
        ({"x": ["ok", "\udfff"]}, "params.x[1]", "lone surrogate \\udfff at character 0"),
        ({"k\udc80": 1}, 'params["k\\udc80"]', "the key holds a lone surrogate"),
        (
            {"events": [{"data": {"turn": MAX_SAFE_INTEGER + 1}}]},
            "params.events[0].data.turn",
            "the number 9007199254740992 is beyond 2^53-1 in magnitude",
        ),
        (
            {"n": -(MAX_SAFE_INTEGER + 1)},
            "params.n",
            "the number -9007199254740992 is beyond 2^53-1",
        ),
        (
            {"we ird": [10**400]},
            'params["we ird"][0]',
            "the number 1000000000000000000000000000000000000...",
        ),
    ],
)
def test_unrepresentable_values_in_params_name_their_field(
    params: Any, path: str, what: str
) -> None:
    found = refusal(request(params))
    assert (found.code, found.data_code, found.reply_id) == (INVALID_PARAMS, CODE_INVALID_PARAMS, 7)
    assert found.message.startswith(f"Invalid params: {path}: ")
    assert what in found.message


def test_the_edges_of_the_safe_range_and_real_surrogate_pairs_are_fine() -> None:
    params = {
        "a": MAX_SAFE_INTEGER,
        "b": -MAX_SAFE_INTEGER,
        "c": 1e300,
        "d": "\U0001f600",
        "e": 1.5,
    }
    found = decode(request(params))
    assert isinstance(found, Request) and found.message["params"] == params
    # "\ud83d\ude00" written as two escapes is one character, not two surrogates.
    escaped = decode(b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": ["\\ud83d\\ude00"]}')
    assert isinstance(escaped, Request) and escaped.message["params"] == ["\U0001f600"]


def test_a_float_too_large_for_a_double_is_refused() -> None:
    found = refusal(b'{"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"f": 1e400}}')
    assert found.code == INVALID_PARAMS and "params.f: the number 1e400" in found.message


def test_surrogates_outside_params_make_the_request_invalid() -> None:
    found = refusal(body({"jsonrpc": "2.0", "id": 3, "method": "x\ud800"}))
    assert (found.code, found.reply_id) == (INVALID_REQUEST, 3)
    assert "method: lone surrogate" in found.message
    in_id = refusal(body({"jsonrpc": "2.0", "id": "\ud800", "method": "x"}))
    assert (in_id.code, in_id.reply_id) == (INVALID_REQUEST, None)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_up_to_the_limit_is_accepted() -> None:
    # message (1) -> params (2) -> "a" list (3) ...: the deepest list is level MAX_NESTING_DEPTH.
    found = decode(request({"a": nested(MAX_NESTING_DEPTH - 2)}))
    assert isinstance(found, Request)


def test_nesting_over_the_limit_is_refused_with_the_id() -> None:
    found = refusal(request({"a": nested(MAX_NESTING_DEPTH - 1)}))
    assert (found.code, found.data_code, found.reply_id) == (INVALID_REQUEST, CODE_TOO_DEEP, 7)
    assert found.message.startswith("Invalid request: params.a" + "[0]" * (MAX_NESTING_DEPTH - 3))
    assert found.message.endswith(f": nested deeper than {MAX_NESTING_DEPTH} levels")


def test_nesting_beyond_what_json_can_parse_is_refused_not_raised() -> None:
    raw = (
        b'{"jsonrpc": "2.0", "id": 8, "method": "x", "params": '
        + b"[" * 200_000
        + b"]" * 200_000
        + b"}"
    )
    found = refusal(raw)
    assert (found.code, found.data_code, found.reply_id) == (INVALID_REQUEST, CODE_TOO_DEEP, None)


_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters() | st.characters(categories=["Cs"]), max_size=8)
)
_JSON = st.recursive(
    _JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(alphabet=st.characters() | st.characters(categories=["Cs"]), max_size=4),
            inner,
            max_size=3,
        )
    ),
    max_leaves=12,
)


@given(params=_JSON, raw=st.sampled_from(["", "1e400", "123456789012345678", "-1.5e-3"]))
def test_the_quick_look_for_problems_misses_none(params: Any, raw: str) -> None:
    # decode skips the walk for problems when nothing shows one could be there (no \u
    # escape, no unsafe number made by the parse, few brackets); it must answer as the walk does.
    document = {"jsonrpc": "2.0", "id": 1, "method": "dsh/scopes", "params": params}
    text = json.dumps(document)  # lone surrogates become \ud800 escapes, as a client sends them
    if raw:
        text = text[:-1] + ', "n": ' + raw + "}"
    found = decode(text.encode("utf-8"))
    parsed = json.loads(
        text,
        parse_int=incoming._parse_int,
        parse_float=incoming._parse_float,
        parse_constant=incoming._refuse_constant,
    )
    assert repr(found) == repr(incoming.classify(parsed, True))

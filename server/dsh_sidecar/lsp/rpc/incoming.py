"""One incoming body: decoded, checked against JSON-RPC 2.0, and classified, before pygls sees it.

Only the top-level object is a message. Everything below it is data and stays plain JSON, so an
MCP message nested in a tool call's arguments (it has a ``"jsonrpc"`` key too) round-trips
through the session log byte for byte.

What is refused, and with what (docs/protocol.md, "Limits on messages"):

- a body that is not UTF-8 JSON (``NaN`` and ``Infinity`` are not JSON): ParseError, id null;
- a message nested deeper than ``MAX_NESTING_DEPTH`` levels: InvalidRequest, the id if readable;
- anything but one request, notification or response object (a batch, a wrong ``jsonrpc``, a
  method that is not a string, an id that is not an integer or a string, params that are not
  an object or array): InvalidRequest, the id if readable;
- a lone surrogate or an integer beyond ±(2^53−1) (or a number too large for a double) anywhere
  in ``params``: InvalidParams naming the field path; elsewhere in the message: InvalidRequest.

Notifications and responses get no answer (JSON-RPC forbids one); the caller logs them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from dsh_sidecar import errors
from dsh_sidecar.config.secrets import HIDDEN, is_secret_name

MAX_SAFE_INTEGER = 2**53 - 1
MAX_NESTING_DEPTH = 256  # the message object itself is level 1

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# data.code of each refusal (docs/protocol.md, Errors).
CODE_PARSE_ERROR = errors.PARSE_ERROR
CODE_INVALID_REQUEST = errors.INVALID_REQUEST
CODE_TOO_DEEP = errors.NESTED_TOO_DEEPLY
CODE_INVALID_PARAMS = errors.INVALID_PARAMS

MessageId = int | str

_SURROGATE = re.compile("[\ud800-\udfff]")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


@dataclass(frozen=True)
class Request:
    id: MessageId
    method: str
    message: dict[str, Any]


@dataclass(frozen=True)
class Notification:
    method: str
    message: dict[str, Any]


@dataclass(frozen=True)
class Response:
    id: MessageId | None
    message: dict[str, Any]


@dataclass(frozen=True)
class Refusal:
    """A message that is not handled. ``answer`` is False for notifications and responses."""

    code: int
    message: str
    data_code: str
    reply_id: MessageId | None = None
    answer: bool = True
    # For a refused response: the id of our request it answers, so its waiter can be failed.
    response_to: MessageId | None = None

    def error_response(self) -> dict[str, Any]:
        return error_response(self.reply_id, self.code, self.message, self.data_code)


Incoming = Request | Notification | Response | Refusal


def error_response(
    msg_id: MessageId | None, code: int, message: str, data_code: str
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": code, "message": message, "data": {"code": data_code}},
    }


class _OutOfRange:
    """A number JSON allows but a JavaScript client would corrupt; kept as its text."""

    __slots__ = ("text",)
    # How many were ever made: a decode that made none has no unsafe number to look for (a
    # count moved by another thread's decode only costs that walk).
    made = 0

    def __init__(self, text: str) -> None:
        self.text = text
        _OutOfRange.made += 1


def _parse_int(text: str) -> int | _OutOfRange:
    # The length test comes first: int() of a 100,000-digit string is slow (and Python refuses
    # more than 4,300 digits with a ValueError that is not a JSON error).
    if len(text) > 17:
        return _OutOfRange(text)
    value = int(text)
    return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else _OutOfRange(text)


def _parse_float(text: str) -> float | _OutOfRange:
    value = float(text)
    return _OutOfRange(text) if math.isinf(value) else value


def _refuse_constant(text: str) -> None:
    raise ValueError(f"{text} is not JSON")


# One decoder for every body: ``json.loads`` with these hooks builds a new decoder and scanner
# per call, which cost several times the parse of a small message.
_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant
)


def decode(body: bytes) -> Incoming:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(
            PARSE_ERROR,
            f"Parse error: the body is not UTF-8 ({exc.reason} at byte {exc.start})",
            CODE_PARSE_ERROR,
        )
    try:
        if text.startswith("\ufeff"):  # refused as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        made = _OutOfRange.made
        document = _DECODER.decode(text)
    except RecursionError:
        return Refusal(
            INVALID_REQUEST,
            f"Invalid request: nested deeper than {MAX_NESTING_DEPTH} levels",
            CODE_TOO_DEEP,
        )
    except ValueError as exc:  # JSONDecodeError, and the refused constants
        return Refusal(PARSE_ERROR, f"Parse error: {exc}", CODE_PARSE_ERROR)
    return classify(document, _may_have_problem(text, _OutOfRange.made != made))


def _may_have_problem(text: str, unsafe_number: bool) -> bool:
    """Whether ``_first_problem`` could find anything in the document ``text`` parsed to: a lone
    surrogate only comes from a ``\\u`` escape (the body is UTF-8), an unsafe number only from
    the parse (``unsafe_number``: it made an ``_OutOfRange``; a scan of the text for where one
    could be cost more than the parse), and nesting past the limit needs as many brackets."""
    return unsafe_number or "\\u" in text or text.count("{") + text.count("[") >= MAX_NESTING_DEPTH


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def classify(document: Any, may_have_problem: bool = True) -> Incoming:
    if not isinstance(document, dict):
        what = (
            "batches are not supported"
            if isinstance(document, list)
            else "a message must be a JSON object"
        )
        return Refusal(INVALID_REQUEST, f"Invalid request: {what}", CODE_INVALID_REQUEST)
    raw_id = document.get("id")
    readable_id = raw_id if _valid_id(raw_id) and not _has_problem(raw_id) else None
    is_call = "method" in document
    answer = not is_call or "id" in document

    def refuse(code: int, data_code: str, reason: str) -> Refusal:
        if not is_call:
            # A response is never answered; the request it answers (if any) is failed instead.
            return Refusal(
                code,
                f"Invalid response: {reason}",
                data_code,
                answer=False,
                response_to=readable_id,
            )
        kind = "params" if code == INVALID_PARAMS else "request"
        return Refusal(code, f"Invalid {kind}: {reason}", data_code, readable_id, answer)

    def invalid(reason: str) -> Refusal:
        return refuse(INVALID_REQUEST, CODE_INVALID_REQUEST, reason)

    if document.get("jsonrpc") != "2.0":
        return invalid('"jsonrpc" must be "2.0"')
    if is_call:
        method = document["method"]
        if not isinstance(method, str):
            return invalid('"method" must be a string')
        if "id" in document and readable_id is None:
            return invalid('"id" must be an integer or a string')
        params = document.get("params")
        if params is not None and not isinstance(params, dict | list):
            return invalid('"params" must be an object or an array')
    else:
        if "id" not in document:
            return invalid(
                'a message needs "method" (a request or notification) or "id" (a response)'
            )
        if ("result" in document) == ("error" in document):
            return invalid('a response has exactly one of "result" and "error"')
    problem = _first_problem(document) if may_have_problem else None
    if problem is not None:
        path, reason, too_deep = problem
        if too_deep:
            return refuse(
                INVALID_REQUEST,
                CODE_TOO_DEEP,
                f"{path}: nested deeper than {MAX_NESTING_DEPTH} levels",
            )
        if is_call and re.match(r"params\b", path):
            return refuse(INVALID_PARAMS, CODE_INVALID_PARAMS, f"{path}: {reason}")
        return invalid(f"{path}: {reason}")
    if not is_call:
        return Response(readable_id, document)
    if "id" in document:
        assert readable_id is not None
        return Request(readable_id, document["method"], document)
    return Notification(document["method"], document)


def _has_problem(value: Any) -> bool:
    return isinstance(value, _OutOfRange) or (
        isinstance(value, str) and _SURROGATE.search(value) is not None
    )


# A path is built only for the problem found: (parent, key) links, walked back when needed.
_Link = tuple[Any, "str | int"] | None


def _first_problem(document: dict[str, Any]) -> tuple[str, str, bool] | None:
    """(field path, what is wrong, whether it is the nesting limit) of the first bad value."""
    stack: list[tuple[Any, _Link, int]] = [(document, None, 1)]
    while stack:
        value, link, depth = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_NESTING_DEPTH:
                return _path(link), "", True
            for key in value:
                if _SURROGATE.search(key):
                    return _path((link, key)), "the key holds a lone surrogate (not Unicode)", False
            stack.extend((v, (link, k), depth + 1) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            if depth > MAX_NESTING_DEPTH:
                return _path(link), "", True
            stack.extend((v, (link, i), depth + 1) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            found = _SURROGATE.search(value)
            if found is not None:
                return (
                    _path(link),
                    f"lone surrogate \\u{ord(found.group()):04x} at character {found.start()} is not Unicode",
                    False,
                )
        elif isinstance(value, _OutOfRange):
            shown = value.text if len(value.text) <= 40 else value.text[:37] + "..."
            if _under_secret(link):
                shown = HIDDEN  # an all-digit token sent as a number is still a token
            return (
                _path(link),
                f"the number {shown} is beyond 2^53-1 in magnitude, where JSON clients lose precision",
                False,
            )
    return None


def _under_secret(link: _Link) -> bool:
    """Whether the value at ``link`` lies under a key named like a secret (``config.secrets``),
    at any depth: its value is never quoted."""
    while link is not None:
        link, key = link
        if isinstance(key, str) and is_secret_name(key):
            return True
    return False


def _path(link: _Link) -> str:
    keys: list[str | int] = []
    while link is not None:
        link, key = link
        keys.append(key)
    out = ""
    for key in reversed(keys):
        if isinstance(key, int):
            out += f"[{key}]"
        elif _IDENTIFIER.fullmatch(key):
            out += f".{key}" if out else key
        else:
            out += f"[{json.dumps(key)}]"
    return out or "(the message)"

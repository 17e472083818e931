"""JavaScript emulation: ``String.prototype.trim``, ``String(number)``, ``JSON.stringify``.

Expected values are what Node prints for the same input, written out literally.
"""

from __future__ import annotations

import math

import pytest

from dsh_sidecar.jsutil import js_json, js_json_string, js_number, js_trim, utf8_len

# ECMAScript WhiteSpace and LineTerminator code points, listed from the spec, not the module.
JS_STRIPPED = [
    "\u0009",
    "\u000a",
    "\u000b",
    "\u000c",
    "\u000d",
    "\u0020",
    "\u00a0",
    "\u1680",
    "\u2000",
    "\u2001",
    "\u2002",
    "\u2003",
    "\u2004",
    "\u2005",
    "\u2006",
    "\u2007",
    "\u2008",
    "\u2009",
    "\u200a",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\ufeff",
]
# Python's str.strip() removes these; JS trim does not.
PY_ONLY = ["\u001c", "\u001d", "\u001e", "\u001f", "\u0085"]
# Neither strips these (U+180E stopped being whitespace in Unicode 6.3; ZWSP never was).
NEITHER = ["\u180e", "\u200b", "\u0000", "x"]


@pytest.mark.parametrize("ch", JS_STRIPPED, ids=lambda c: f"U+{ord(c):04X}")
def test_js_trim_strips(ch: str) -> None:
    assert js_trim(f"{ch}{ch}a{ch}b{ch}") == f"a{ch}b"


@pytest.mark.parametrize("ch", PY_ONLY + NEITHER, ids=lambda c: f"U+{ord(c):04X}")
def test_js_trim_keeps(ch: str) -> None:
    assert js_trim(f"{ch}a{ch}") == f"{ch}a{ch}"


def test_js_trim_differs_from_python_strip_exactly_where_expected() -> None:
    for ch in PY_ONLY:
        assert ch.strip() == "" and js_trim(ch) == ch
    assert "\ufeff".strip() == "\ufeff" and js_trim("\ufeff") == ""


def test_js_trim_of_only_whitespace_is_empty() -> None:
    assert js_trim("".join(JS_STRIPPED)) == ""


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (65536, "65536"),
        (65536.0, "65536"),
        (1048576, "1048576"),
        (0, "0"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (-1.5, "-1.5"),
        (0.1, "0.1"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e21, "1e+21"),
        (10**21, "1e+21"),
        (1.25e21, "1.25e+21"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),  # rounded to a double first, as JS would
        (1e100, "1e+100"),
        (5e-324, "5e-324"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_js_number_rejects_bool() -> None:
    with pytest.raises(TypeError):
        js_number(True)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", '"plain"'),
        ("a\u0000b", '"a\\u0000b"'),
        ('q"\\', '"q\\"\\\\"'),
        ("\n\t\b\f\r\u001f", '"\\n\\t\\b\\f\\r\\u001f"'),
        ("é\u2028\U0001f600", '"é\u2028\U0001f600"'),
        ("\ud800", '"\\ud800"'),
        ("a\udfffb", '"a\\udfffb"'),
        ("\udc00\ud800", '"\\udc00\\ud800"'),  # reversed pair: both lone
        ("\ud83d\ude00", '"\U0001f600"'),  # a valid pair is one character
    ],
)
def test_js_json_string(value: str, text: str) -> None:
    assert js_json_string(value) == text


def test_js_json_is_compact_and_ordered() -> None:
    doc = {"b": [1, 2.5, None, True, False], "a": {"x": math.nan}, "n": 65536.0}
    assert js_json(doc) == '{"b":[1,2.5,null,true,false],"a":{"x":null},"n":65536}'


def test_utf8_len_counts_lone_surrogates_as_three_bytes() -> None:
    assert utf8_len("aé€\U0001f600") == 1 + 2 + 3 + 4
    assert utf8_len("\ud800") == 3

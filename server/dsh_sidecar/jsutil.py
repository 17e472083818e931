"""Emulation of the JavaScript behaviours upstream relies on.

Upstream is TypeScript; byte-exact output depends on ``String.prototype.trim``, ``Number``
formatting and ``JSON.stringify`` string escaping, which differ from Python's builtins.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim strips. Python's str.strip()
# also strips U+001C..U+001F and U+0085 and does not strip U+FEFF, so it cannot be used.
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)


def utf8_len(text: str) -> int:
    """UTF-8 byte length of decoded text (lone surrogates count as 3 bytes, as in JS)."""
    return len(text.encode("utf-8", "surrogatepass"))


def js_number(value: float | int) -> str:
    """``String(value)`` for a JS number (``65536`` not ``65536.0``; ``1e+21``)."""
    if isinstance(value, bool):
        raise TypeError("not a number")
    if isinstance(value, int):
        value = float(value) if abs(value) >= 2**53 else value
        if isinstance(value, int):
            return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr() yields the shortest round-tripping digits, as ECMAScript Number::toString does.
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # n = position of the decimal point relative to the start of ``digits``
    point = len(int_part) + (int(exp_text) if exp_text else 0)
    point -= len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("([\ud800-\udbff])([\udc00-\udfff])")


def _join_pairs(text: str) -> str:
    return _PAIR.sub(
        lambda m: chr(0x10000 + ((ord(m[1]) - 0xD800) << 10) + (ord(m[2]) - 0xDC00)), text
    )


def js_json_string(text: str) -> str:
    """``JSON.stringify(text)`` for a string, including lone surrogates (escaped ``\\udXXX``)."""
    encoded = json.dumps(_join_pairs(text), ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", encoded)


def js_json(value: Any) -> str:
    """Compact ``JSON.stringify`` of JSON-shaped data, keeping mapping key order."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return js_json_string(value)
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return "null"
        return js_number(value)
    if isinstance(value, Mapping):
        items = (f"{js_json_string(str(k))}:{js_json(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, Sequence):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")

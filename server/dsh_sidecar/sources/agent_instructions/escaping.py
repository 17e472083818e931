"""Keeping repository text inside its ``<system-reminder>`` frame (docs/protocol.md, "What is
escaped").

Upstream escapes only the exact closing tag ``</system-reminder>`` (as ``<\\/system-reminder>``).
A model reads tags tolerantly: ``</SYSTEM-REMINDER >``, ``</ system-reminder>``, a tag split by
a line break or carrying attributes, a second opening tag, or the same letters in fullwidth form
would all end or open a frame for it. So every *frame tag*, in the tolerant sense below, opening
or closing, is escaped the same way: a backslash right after its ``<``. The exact closing tag
therefore still becomes upstream's ``<\\/system-reminder>``, and text without any frame tag is
left byte for byte as upstream leaves it.

A frame tag is: a ``<`` (or its fullwidth or small form), then any whitespace (line breaks
included) and invisible formatting characters, an optional ``/`` (or fullwidth ``／``) followed by
more of the same, then the name ``system-reminder`` in any case, with any invisible formatting
characters between its letters, any dash for its hyphen, and any character that Unicode's NFKC
normalization and case folding turn into its letters (fullwidth, mathematical, circled letters,
the ``st`` ligature...). Whatever
follows the name (``>``, attributes, nothing) does not matter, so a tag cut short by the byte
budget is found as well. An escaped tag is never a frame tag again: nothing of the pattern may
follow ``<`` but whitespace, invisibles, ``/`` and the name, and the backslash is none of these.

A file or directory name is one line in every template (``Instructions from: <path>``); a line
break inside it is written as an escape (``\\n``, ``\\u2028``...) so a name cannot start a line
of its own.
"""

from __future__ import annotations

import functools
import re

FRAME_NAME = "system-reminder"

# Invisible characters a lenient reader may drop: every format character (Unicode category Cf,
# as of Unicode 15), the combining grapheme joiner, Hangul fillers, and variation selectors.
# tests/unit/test_escaping.py checks this against the running Python's Unicode database.
IGNORABLE = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
LESS_THAN = "<\ufe64\uff1c"
SLASH = "/\uff0f"
# Every dash punctuation character (Unicode category Pd) and the minus sign.
DASHES = (
    "\\-\u058a\u05be\u1400\u1806\u2010-\u2015\u2212\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d"
    "\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
)
# Characters that NFKC normalization and case folding turn into each letter of the name, beyond
# its two ASCII cases: fullwidth, modifier, circled, squared, Roman numeral and mathematical
# forms. MULTI_FORMS are the single characters that stand for two of its letters (the ``st``
# ligatures, the squared ``in``). Generated from the Unicode database; tests/unit/test_escaping.py
# regenerates them from the running Python's and fails if one is missing.
MULTI_FORMS = {"st": "\ufb05\ufb06", "in": "\u33cc"}
LETTER_FORMS = {
    "d": "ᴰᵈⅅⅆⅮⅾⒹⓓＤｄ𝐃𝐝𝐷𝑑𝑫𝒅𝒟𝒹𝓓𝓭𝔇𝔡𝔻𝕕𝕯𝖉𝖣𝖽𝗗𝗱𝘋𝘥𝘿𝙙𝙳𝚍🄳",
    "e": "ᴱᵉₑℯℰⅇⒺⓔＥｅ𝐄𝐞𝐸𝑒𝑬𝒆𝓔𝓮𝔈𝔢𝔼𝕖𝕰𝖊𝖤𝖾𝗘𝗲𝘌𝘦𝙀𝙚𝙴𝚎🄴",
    "i": "ᴵᵢⁱℐℑℹⅈⅠⅰⒾⓘＩｉ𝐈𝐢𝐼𝑖𝑰𝒊𝒾𝓘𝓲𝔦𝕀𝕚𝕴𝖎𝖨𝗂𝗜𝗶𝘐𝘪𝙄𝙞𝙸𝚒🄸",
    "m": "ᴹᵐₘℳⅯⅿⓂⓜＭｍ𝐌𝐦𝑀𝑚𝑴𝒎𝓂𝓜𝓶𝔐𝔪𝕄𝕞𝕸𝖒𝖬𝗆𝗠𝗺𝘔𝘮𝙈𝙢𝙼𝚖🄼",
    "n": "ᴺⁿₙℕⓃⓝＮｎ𝐍𝐧𝑁𝑛𝑵𝒏𝒩𝓃𝓝𝓷𝔑𝔫𝕟𝕹𝖓𝖭𝗇𝗡𝗻𝘕𝘯𝙉𝙣𝙽𝚗🄽",
    "r": "ʳᴿᵣℛℜℝⓇⓡＲｒ𝐑𝐫𝑅𝑟𝑹𝒓𝓇𝓡𝓻𝔯𝕣𝕽𝖗𝖱𝗋𝗥𝗿𝘙𝘳𝙍𝙧𝚁𝚛🄬🅁",
    "s": "ˢₛⓈⓢＳｓ𝐒𝐬𝑆𝑠𝑺𝒔𝒮𝓈𝓢𝓼𝔖𝔰𝕊𝕤𝕾𝖘𝖲𝗌𝗦𝘀𝘚𝘴𝙎𝙨𝚂𝚜🅂",
    "t": "ᵀᵗₜⓉⓣＴｔ𝐓𝐭𝑇𝑡𝑻𝒕𝒯𝓉𝓣𝓽𝔗𝔱𝕋𝕥𝕿𝖙𝖳𝗍𝗧𝘁𝘛𝘵𝙏𝙩𝚃𝚝🅃",
    "y": "ʸⓎⓨＹｙ𝐘𝐲𝑌𝑦𝒀𝒚𝒴𝓎𝓨𝔂𝔜𝔶𝕐𝕪𝖄𝖞𝖸𝗒𝗬𝘆𝘠𝘺𝙔𝙮𝚈𝚢🅈",
}


def _letter(char: str) -> str:
    return f"[{DASHES}]" if char == "-" else f"[{re.escape(char)}{LETTER_FORMS[char]}]"


def _name_pattern() -> str:
    between = f"[{IGNORABLE}]*"
    parts = []
    index = 0
    while index < len(FRAME_NAME):
        pair = FRAME_NAME[index : index + 2]
        if pair in MULTI_FORMS:
            letters = between.join(_letter(c) for c in pair)
            parts.append(f"(?:{letters}|[{MULTI_FORMS[pair]}])")
            index += 2
        else:
            parts.append(_letter(FRAME_NAME[index]))
            index += 1
    return between.join(parts)


_GAP = rf"[\s{IGNORABLE}]*"


# Linear on any text (docs/protocol.md, "Repository text in linear time"): a match can only
# start at a "<" form; after it, each part's characters (gap, slash, each letter's forms, the
# invisibles between letters) share none with the part that follows, so at every character
# at most one way forward exists and a failed attempt gives back at most the run it just
# read; and no part matches a "<", so the attempts from two "<" never scan the same text.
# tests/unit/test_linear_parsers.py times it on runs of each kind.
@functools.cache
def frame_tag() -> re.Pattern[str]:
    """The frame-tag pattern, compiled on first use: its case-insensitive Unicode classes take
    milliseconds to compile, which a hook process whose text holds no ``<`` never needs."""
    return re.compile(
        rf"[{LESS_THAN}]{_GAP}(?P<slash>[{SLASH}]{_GAP})?{_name_pattern()}", re.IGNORECASE
    )


def escape_frame_tags(text: str) -> str:
    """``text`` with a backslash after the ``<`` of every frame tag, opening or closing."""
    if "<" not in text and "\ufe64" not in text and "\uff1c" not in text:
        return text  # the common case: no tag can start
    return frame_tag().sub(lambda m: m[0][0] + "\\" + m[0][1:], text)


def frame_tags(text: str) -> list[re.Match[str]]:
    """Every frame tag of ``text``; ``m["slash"]`` is set for a closing one."""
    return list(frame_tag().finditer(text))


# Every character Python's str.splitlines() breaks on, which covers what a model, a terminal
# or an editor may show as a new line.
LINE_BREAKS = {
    "\n": "\\n",
    "\r": "\\r",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\x1c": "\\x1c",
    "\x1d": "\\x1d",
    "\x1e": "\\x1e",
    "\x85": "\\x85",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_LINE_BREAK_TABLE = str.maketrans(LINE_BREAKS)


def one_line(name: str) -> str:
    """A path or name as it appears on a template line: every line break escaped."""
    return name.translate(_LINE_BREAK_TABLE)

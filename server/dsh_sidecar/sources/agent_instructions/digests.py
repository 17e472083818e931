"""Content digests of instruction files.

``digest`` (SHA-1 of the decoded text) is what a change records and what a session compares to
decide ``replace``; ``trimmed_digest`` is the per-directory duplicate key.
"""

from __future__ import annotations

import hashlib

from dsh_sidecar.jsutil import js_trim


def sha1_hex(text: str) -> str:
    """Lowercase hex SHA-1 of ``text`` in UTF-8 (a lone surrogate counts as its 3 bytes)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def trimmed_digest(text: str) -> str:
    """The per-directory duplicate key: SHA-1 of the JS-trimmed content."""
    return sha1_hex(js_trim(text))

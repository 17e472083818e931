"""Whole LSP answers (a hover's text, a ``dsh/scopes`` result) kept while what they rest on holds.

Such an answer is built from the service's own kept answers (a document's chain, a file's
explanation, ``sessions/scopes.py`` and ``lsp/explain.py``) and the live sessions of one
snapshot. Kept with what rebuilding it re-checked of the files (the union of what its parts rest
on), a warm request costs one pass of stats and no formatting. It is kept only once its parts
were kept already: recording a cold build of the parts a second time, for the whole, would make
the first answer on a deep tree markedly slower; the next request keeps it, re-checking the
parts through the same look (each path's stat asked once).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sessions.service import SessionService
from dsh_sidecar.sources.observed import OneLook

T = TypeVar("T")


def kept_answer(
    service: SessionService, key: Hashable, compute: Callable[[LocalFileSystem], T]
) -> T:
    """``compute``'s answer for ``key`` (blocking: a worker's), kept in ``service.answers``."""
    look = OneLook(service.fs)
    found = service.answers.lookup(key, look)
    if found is not None:
        kept: T = found[0]
        return kept
    before = service.parts_built()
    value = compute(look)
    if service.parts_built() == before:  # every part was a kept one: keep the whole too
        value = service.answers.get(key, look, compute)
    return value

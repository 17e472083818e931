"""A value worked out from an object, kept while that object lives, found by its identity.

For objects that hold dicts and so have no hash (``weakref.WeakKeyDictionary`` needs one): a
pending ``Message``, a kept wire result. An entry goes when its object does, in whatever thread
drops the last reference; an object that cannot be weakly referred to is never kept.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any], V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, owner: object) -> V | None:
        kept = self._entries.get(id(owner))
        return kept[1] if kept is not None and kept[0]() is owner else None

    def put(self, owner: object, value: V) -> None:
        key = id(owner)
        entries = self._entries

        def forget(ref: weakref.ref[Any]) -> None:
            # Only this entry: the id may already belong to a newer object with its own.
            if (entry := entries.get(key)) is not None and entry[0] is ref:
                del entries[key]

        with contextlib.suppress(TypeError):  # not weakly referable: worked out each time
            entries[key] = (weakref.ref(owner, forget), value)

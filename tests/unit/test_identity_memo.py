"""IdentityMemo keeps a value for exactly as long as its owner lives, by identity."""

from __future__ import annotations

import gc

from dsh_sidecar.identity_memo import IdentityMemo
from dsh_sidecar.model import Message


class Owner:
    """Holds a dict and defines equality, so it has no hash, as a Message has none."""

    def __init__(self) -> None:
        self.parts: dict[str, int] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Owner)


def test_a_value_is_found_for_its_owner_only() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    first, second = Owner(), Owner()
    memo.put(first, "first")
    assert memo.get(first) == "first"
    assert memo.get(second) is None  # equal, but another object


def test_the_entry_goes_with_its_owner_and_spares_a_newer_one_of_the_same_id() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    owner = Owner()
    memo.put(owner, "old")
    memo.put(owner, "new")  # replaced: the first entry's callback must not remove the second
    assert memo.get(owner) == "new" and len(memo) == 1
    del owner
    gc.collect()
    assert len(memo) == 0


def test_an_owner_that_cannot_be_weakly_referred_to_is_not_kept() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    owner = {"a": 1}  # a plain dict takes no weak reference
    memo.put(owner, "x")
    assert memo.get(owner) is None and len(memo) == 0


def test_a_message_can_own_an_entry() -> None:
    """A Message (frozen, holding dicts) takes a weak reference, so its JSON can be kept."""
    memo: IdentityMemo[int] = IdentityMemo()
    message = Message.user(["x"], {"kind": "test"})
    memo.put(message, 1)
    assert memo.get(message) == 1

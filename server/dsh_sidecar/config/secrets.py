"""Values that are never quoted back: those of keys named like a secret.

A client may put its TCP token (or any other credential) in the wrong place, under ``dsh`` or in
an odd spelling; the refusal must not carry it back in a ``dsh/settings/didCheck``, a warning or
the log. So whatever quotes a value a client sent (the checks' messages, the refusals' values,
the log's arguments) passes it through ``hidden`` first, and a key whose name looks secret
(``is_secret_name``; the rule is in docs/configuration.md, "Values never quoted") gets
``HIDDEN`` in place of its value (unless that is null), at any depth. No settings key is named
so (a test holds the key table to it), so a valid setting always shows.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

HIDDEN = "(value hidden)"

# After NFKC, case folding and dropping everything but letters and digits, a name holding one of
# these is a secret's: ``authToken``, ``auth_token``, ``AUTH-TOKEN``, ``ＡＰＩ_ＫＥＹ``,
# ``client.secret``, ``password``, ``passphrase``, ``credentials``, ``sessionCookie``. It hides
# some harmless names too (``author``, ``monkey``); a wrong key's value is all they lose.
SECRET_WORDS = ("auth", "cookie", "credential", "key", "pass", "secret", "token")


def is_secret_name(name: str) -> bool:
    folded = "".join(c for c in unicodedata.normalize("NFKC", name).casefold() if c.isalnum())
    return any(word in folded for word in SECRET_WORDS)


def is_secret_key(dotted: str) -> bool:
    """Whether any part of a dotted settings key (``instructions.apiKey``) is a secret's name."""
    return any(is_secret_name(part) for part in dotted.split("."))


def hidden(value: Any) -> Any:
    """``value`` with the value of every key named like a secret replaced by ``HIDDEN``, however
    deep (objects, arrays, attrs instances such as a logged ``InitializeParams``); ``value``
    itself when it holds none. The containers on the way are copied (arrays as lists), never
    changed; nesting is walked without recursion, so a settings file nested a thousand levels
    deep is no problem, and a container met twice (a cycle, in a logged object) is shown as
    ``HIDDEN`` the second time rather than walked for ever."""
    if not _container(value) or not _holds_secret(value):
        return value
    holder: list[Any] = [None]
    pending: list[tuple[Any, Any, Any]] = [(value, holder, 0)]  # (source, parent, slot)
    seen: set[int] = set()
    while pending:
        source, parent, slot = pending.pop()
        if id(source) in seen:
            parent[slot] = HIDDEN
            continue
        seen.add(id(source))
        if attrs.has(type(source)):
            parent[slot] = _hidden_attrs(source)
            continue
        copy: Any
        items: Iterable[tuple[Any, Any]]
        if isinstance(source, Mapping):
            copy, items = {}, source.items()
        else:
            copy, items = [None] * len(source), enumerate(source)
        parent[slot] = copy
        for key, item in items:
            if item is not None and isinstance(key, str) and is_secret_name(key):
                copy[key] = HIDDEN
            elif _container(item):
                pending.append((item, copy, key))
            else:
                copy[key] = item
    return holder[0]


def shown(value: Any) -> str:
    """``repr`` of ``value`` as a refusal quotes it: with secrets hidden."""
    return repr(hidden(value))


def _holds_secret(value: Any) -> bool:
    pending = [value]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if attrs.has(type(current)):
            for field in attrs.fields(type(current)):
                item = getattr(current, field.name)
                if item is not None and is_secret_name(field.name):
                    return True
                pending.append(item)
        elif isinstance(current, Mapping):
            for key, item in current.items():
                if item is not None and isinstance(key, str) and is_secret_name(key):
                    return True
                if _container(item):
                    pending.append(item)
        elif isinstance(current, list | tuple):
            pending.extend(item for item in current if _container(item))
    return False


def _container(value: Any) -> bool:
    return isinstance(value, Mapping | list | tuple) or attrs.has(type(value))


def _hidden_attrs(instance: Any) -> Any:
    """An attrs instance with its secret-named fields hidden and the rest passed through
    ``hidden``; the instance itself when nothing changes. One that cannot be rebuilt is not
    shown at all."""
    changes: dict[str, Any] = {}
    for field in attrs.fields(type(instance)):
        current = getattr(instance, field.name)
        secret = current is not None and is_secret_name(field.name)
        new = HIDDEN if secret else hidden(current)
        if new is not current:
            changes[field.alias or field.name] = new
    if not changes:
        return instance
    try:
        return attrs.evolve(instance, **changes)
    except Exception:  # a validator or converter refused the copy
        return HIDDEN

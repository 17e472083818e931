"""Our hook entries added to, or taken out of, a settings file's text (``json_text``).

The decisions are install.py's (``with_our_hooks``, ``without_our_hooks``, on parsed values);
this module makes the same change in the text: our groups appended at the end of their event's
list (and an event, or ``hooks``, appended at the end of its object when missing), our handlers
taken out where they are. install.py checks that the edited text parses to exactly the value it
decided on before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .json_text import Container, Style, container, detect_style, rewrite, skip_space

IsOurs = Callable[[object], bool]


def _top(text: str) -> tuple[Container, Style]:
    top = container(text, skip_space(text, 0))
    return top, detect_style(text, top)


def _replaced(text: str, box: Container, new: str) -> str:
    return text[: box.open] + new + text[box.close + 1 :]


def _strip_group(
    text: str, group_box: Container, group: Any, ours: IsOurs, style: Style
) -> str | None:
    """A group's new text without our handlers; None: nothing but ours, drop the group."""
    slot = group_box.find("hooks")
    assert slot is not None
    handlers = container(text, group_box.items[slot].value_start)
    mine = {i for i, handler in enumerate(group["hooks"]) if ours(handler)}
    if len(mine) == len(group["hooks"]):
        return None
    item = group_box.items[slot]
    member = text[item.start : item.value_start] + rewrite(text, handlers, style, remove=mine)
    return rewrite(text, group_box, style, replace={slot: member})


def _has_ours(group: Any, ours: IsOurs) -> bool:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and any(ours(h) for h in handlers)


def _without_ours(
    text: str,
    groups_box: Container,
    groups: list[Any],
    ours: IsOurs,
    style: Style,
    keep: int | None,
) -> tuple[set[int], dict[int, str]]:
    """Which groups of an event's list go, and the new text of the ones that lose a handler."""
    remove: set[int] = set()
    replace: dict[int, str] = {}
    for i, group in enumerate(groups):
        if i == keep or not _has_ours(group, ours):
            continue
        stripped = _strip_group(
            text, container(text, groups_box.items[i].value_start), group, ours, style
        )
        if stripped is None:
            remove.add(i)
        else:
            replace[i] = stripped
    return remove, replace


def _member(text: str, box: Container, index: int, value_text: str) -> str:
    item = box.items[index]
    return text[item.start : item.value_start] + value_text


def add_ours(
    text: str, document: dict[str, Any], wanted: Sequence[tuple[str, dict[str, Any]]], ours: IsOurs
) -> str:
    """``text`` with exactly ``wanted``'s group for each event (see ``with_our_hooks``)."""
    top, style = _top(text)
    slot = top.find("hooks")
    if slot is None:
        table = {event: [group] for event, group in wanted}
        return _replaced(text, top, rewrite(text, top, style, append=[("hooks", table)]))
    hooks_box = container(text, top.items[slot].value_start)
    replace: dict[int, str] = {}
    append: list[tuple[str | None, Any]] = []
    for event, group in wanted:
        index = hooks_box.find(event)
        if index is None:
            append.append((event, [group]))
            continue
        groups = document["hooks"][event]
        groups_box = container(text, hooks_box.items[index].value_start)
        keep = groups.index(group) if group in groups else None
        remove, changed = _without_ours(text, groups_box, groups, ours, style, keep)
        extra = [] if keep is not None else [(None, group)]
        if remove or changed or extra:
            new = rewrite(text, groups_box, style, remove=remove, replace=changed, append=extra)
            replace[index] = _member(text, hooks_box, index, new)
    new_hooks = rewrite(text, hooks_box, style, replace=replace, append=append)
    new_top = rewrite(text, top, style, replace={slot: _member(text, top, slot, new_hooks)})
    return _replaced(text, top, new_top)


def remove_ours(text: str, document: dict[str, Any], ours: IsOurs) -> str:
    """``text`` without any handler of ours (see ``without_our_hooks``)."""
    top, style = _top(text)
    slot = top.find("hooks")
    if slot is None:
        return text
    hooks_box = container(text, top.items[slot].value_start)
    drop: set[int] = set()
    replace: dict[int, str] = {}
    for index, item in enumerate(hooks_box.items):
        assert item.key is not None
        groups = document["hooks"][item.key]
        groups_box = container(text, item.value_start)
        remove, changed = _without_ours(text, groups_box, groups, ours, style, None)
        if groups and len(remove) == len(groups):
            drop.add(index)  # we emptied it
        elif remove or changed:
            new = rewrite(text, groups_box, style, remove=remove, replace=changed)
            replace[index] = _member(text, hooks_box, index, new)
    if not drop and not replace:
        return text
    if len(drop) == len(hooks_box.items):
        return _replaced(text, top, rewrite(text, top, style, remove={slot}))
    new_hooks = rewrite(text, hooks_box, style, remove=drop, replace=replace)
    new_top = rewrite(text, top, style, replace={slot: _member(text, top, slot, new_hooks)})
    return _replaced(text, top, new_top)

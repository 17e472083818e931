"""``dsh/context/discard``: the user drops pending context before the next step.

A dropped transition stays dropped for the session until the file's content changes (a ``set`` or
``replace`` of other content is offered again) or the model is later shown that file anyway. The
log holds the decision (an ``agent/inbox/discarded`` event beside the inbox splice, in one
transaction), so it survives a restart; ``dismissed_of`` reads it back when a session is opened.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import attrs

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.model import INBOX_DISCARDED, Message
from dsh_sidecar.sources.agent_instructions.compose import (
    compose,
    sync_inbox,
)
from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
from dsh_sidecar.sources.agent_instructions.paths import scope_abs_path
from dsh_sidecar.sources.agent_instructions.rules import is_rule_scope
from dsh_sidecar.sources.agent_instructions.state import (
    SOURCE_KIND,
    Change,
    changes_of,
    is_baseline,
    parse_change,
)

from .inbox import splice_draft
from .instruction_log import visible_instructions
from .job import SessionJob
from .snapshot import frozen_changes
from .store import EventDraft, Store


@attrs.frozen(kw_only=True)
class DiscardJob(SessionJob):
    message_id: str
    scopes: tuple[str, ...] | None


@attrs.frozen
class DiscardResult:
    inbox: tuple[Message, ...]
    dismissed: Mapping[str, Change]


def discard(store: Store, job: DiscardJob) -> DiscardResult:
    sid = job.session_id
    inbox = store.inbox(sid)
    target = next((m for m in inbox if m.id == job.message_id), None)
    if target is None:
        raise DshError(
            errors.UNKNOWN_MESSAGE,
            f"message {job.message_id!r} is not pending for session {sid!r}",
            {"messageId": job.message_id},
        )
    if is_baseline(target):
        raise DshError(
            errors.INVALID_PARAMS,
            "the workspace instruction baseline cannot be dropped; turn the source off "
            "(instructions.enabled) or exclude files (instructions.exclude) instead",
        )
    changes = changes_of(target)
    dropped = _dropped(changes, job.scopes, job.message_id)
    dismissed = {**job.dismissed, **{c.scope: c for c in dropped}}
    rest = [m for m in inbox if m.id != target.id]
    kept = [c for c in changes if c not in dropped]
    if kept:
        # What is left of the message, rendered anew: reconcile those files again, minus what the
        # user dropped (the budget and the templates apply as to any projection).
        desired, visible = _recompose(store, job, kept, dismissed)
        rest = sync_inbox(rest, desired, visible=visible)
    drafts = [
        EventDraft(
            INBOX_DISCARDED,
            {"messageId": target.id, "changes": [c.to_json() for c in dropped]},
        )
    ]
    splice = splice_draft(inbox, rest)
    if splice is not None:
        drafts.append(splice)
    store.append(sid, drafts, inbox=rest)
    return DiscardResult(tuple(rest), frozen_changes(dismissed))


def _dropped(
    changes: Sequence[Change], scopes: tuple[str, ...] | None, message_id: str
) -> list[Change]:
    if scopes is None:
        return list(changes)
    known = {c.scope for c in changes}
    missing = [s for s in scopes if s not in known]
    if missing:
        raise DshError(
            errors.INVALID_PARAMS,
            f"scope {missing[0]!r} is not a change of pending message {message_id!r}",
            {"scope": missing[0]},
        )
    return [c for c in changes if c.scope in scopes]


def _recompose(
    store: Store, job: DiscardJob, kept: Sequence[Change], dismissed: Mapping[str, Change]
) -> tuple[Message | None, list[Message]]:
    env = job.env
    settings = env.settings
    root = find_project_root(env.cwd, settings.project_root_markers, env.fs)
    # A directory's file is reached by touching it; a rule file is reached by no touch of its
    # own (its globs match other files), so it is named directly.
    rules = [c.scope for c in kept if is_rule_scope(c.scope)]
    touched = [scope_abs_path(c.scope, root, env.dsh_home) for c in kept if c.scope not in rules]
    visible = visible_instructions(store, job.session_id)
    desired = compose(
        env, job.instructions, visible=visible, claimed=(), pending=(),
        touched=[os.path.normpath(p) for p in touched], dismissed=dismissed, scopes=rules,
    )  # fmt: skip
    return desired, visible


def dismissed_of(store: Store, session_id: str) -> Mapping[str, Change]:
    """The transitions a session's user dropped that still hold, read back from its log."""
    records: dict[str, tuple[int, Change]] = {}
    for event in store.events_of_type(session_id, INBOX_DISCARDED):
        for raw in event.data.get("changes", []):
            change = parse_change(raw)
            if change is not None:
                records[change.scope] = (event.seq, change)
    if records:
        # A drop holds until the model is shown that file anyway (a later change enters).
        for event in store.visible_events_of_source(session_id, SOURCE_KIND):
            message = event.message()
            for change in changes_of(message) if message is not None else ():
                record = records.get(change.scope)
                if record is not None and event.seq > record[0]:
                    del records[change.scope]
    return frozen_changes({scope: change for scope, (_, change) in records.items()})


def still_dismissed(
    dismissed: Mapping[str, Change], entered: Sequence[Message]
) -> Mapping[str, Change]:
    """``dismissed`` minus the scopes whose changes just entered the model's view."""
    shown = {c.scope for m in entered for c in changes_of(m)}
    if not shown & set(dismissed):
        return dismissed
    return frozen_changes({s: c for s, c in dismissed.items() if s not in shown})

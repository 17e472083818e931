"""Compose the agent-instructions context for a session (docs/reference/agent-instructions.md, Compose) and sync the inbox (Inbox sync).

Inputs are durable (visible messages from the log, claimed messages, the pending inbox) plus a
per-session ``SessionInstructionState`` that only accelerates: a version cache and the baseline
preparation. Losing that state (restart, resume) costs re-reads, never a different answer, except
for upstream's deliberate "excluded scopes stay frozen out until the preparation is recomputed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.model import Message

from .baseline import load_baseline
from .discovery import baseline_identity, find_project_root
from .git_excludes import GitUser
from .gitignore import IgnoreMatcher
from .reconcile import CacheEntry, PlanCache, ReconcileContext, VersionCache, reconcile
from .render import EMPTY_REPLACEMENT_INTRO, render
from .rules import RuleIndex
from .state import (
    Change,
    changes_of,
    effective_changes,
    is_instructions_message,
    make_source,
    visible_baseline,
)

# A pure function of strings and frozen settings that JSON-encodes with JS rules on every
# compose; the same few (root, cwd, settings) come back touch after touch.
_baseline_identity = lru_cache(maxsize=256)(baseline_identity)


@attrs.define
class Preparation:
    identity: str
    excluded: frozenset[str]


@attrs.define
class SessionInstructionState:
    """In-memory accelerators for one session: never authority, safe to lose."""

    cache: VersionCache = attrs.field(factory=dict)
    preparation: Preparation | None = None
    ignore: IgnoreMatcher | None = None
    plans: PlanCache = attrs.field(factory=PlanCache)
    rules: RuleIndex | None = None  # the project's rule files, kept by version


@attrs.frozen
class ComposeEnv:
    cwd: str
    settings: InstructionSettings
    dsh_home: str
    fs: LocalFileSystem
    os_home: str  # the session's home directory, from the caller's environment
    # Where git keeps the user's global excludes; None: this process's user.
    git_user: GitUser | None = None


def compose(
    env: ComposeEnv,
    state: SessionInstructionState,
    *,
    visible: Sequence[Message],
    claimed: Sequence[Message],
    pending: Sequence[Message],
    touched: Sequence[str],
    dismissed: Mapping[str, Change] | None = None,
    scopes: Sequence[str] = (),
) -> Message | None:
    """The one agent-instructions message now due for this session, or None.

    ``dismissed``: transitions the user dropped from the pending context (see ``reconcile``).
    ``scopes``: more scopes to reconcile (a rule file is reached by no touch of its own).
    """
    settings = env.settings
    if not settings.active:
        return None
    if not touched and pending:
        return pending[0]  # upstream returns a queued context as-is, without revalidating it
    fs = env.fs
    # The session's kept rule index and ignore matcher, asking this call's filesystem (a
    # projection's recording one): what they consult is seen, and they stay as they were.
    rules = state.rules.seen_through(fs) if state.rules is not None else None
    root = find_project_root(env.cwd, settings.project_root_markers, fs)
    cwd = fs.resolve(env.cwd)
    identity = _baseline_identity(root, cwd, settings)
    authority = [m for m in claimed if is_instructions_message(m)]
    previous = visible_baseline(visible, authority)
    keep = previous is not None and previous.source.get("baselineIdentity") == identity
    prep = state.preparation
    excluded = (
        prep.excluded if keep and prep is not None and prep.identity == identity else frozenset()
    )
    blocks: list[str] = []
    baseline_changes: list[Change] = []
    next_preparation: Preparation | None = None
    if previous is None or not keep or prep is None or prep.identity != identity:
        load = load_baseline(
            env.cwd, settings, fs, dsh_home=env.dsh_home,
            replace_previous=previous is not None and not keep, os_home=env.os_home,
            rules=rules,
        )  # fmt: skip
        excluded = load.excluded_scopes
        next_preparation = Preparation(identity, excluded)
        for f in load.retained:
            assert f.probe.version is not None
            state.cache[f.candidate.scope] = CacheEntry(
                f.candidate.display_path, f.probe.version, f.digest, f.trimmed, f.deps
            ).shared()
        if not keep:
            retained_scopes = {f.candidate.scope for f in load.retained}
            removals = [
                Change("remove", c.scope, c.path)
                for c in (changes_of(previous) if previous is not None else [])
                if c.active and c.scope not in retained_scopes
            ]
            sets = [
                Change("set", f.candidate.scope, f.candidate.display_path, f.digest)
                for f in load.retained
            ]
            if load.text:
                blocks.append(load.text)
                baseline_changes = removals + sets
            elif previous is not None:
                # Upstream budgets the empty replacement too: under ~183 bytes it renders nothing.
                empty = render([], settings.max_bytes, EMPTY_REPLACEMENT_INTRO).text
                if empty:
                    blocks.append(empty)
                    baseline_changes = removals
    baseline_emitted = bool(blocks)
    if baseline_emitted:
        synthetic = Message.user(
            blocks, make_source(baseline_changes, baseline=True, identity=identity)
        )
        authority.append(synthetic)
    if state.ignore is None or state.ignore.project_root != root:
        state.ignore = IgnoreMatcher(root, settings, fs, git_user=env.git_user)
    ctx = ReconcileContext(
        root, cwd, settings, env.dsh_home, fs, env.os_home, state.ignore.seen_through(fs),
        state.plans, rules,
    )  # fmt: skip
    update = reconcile(
        ctx,
        effective=effective_changes(visible, authority),
        scope_messages=pending,
        touched=touched,
        include_baseline_scopes=keep,
        excluded=excluded if keep else frozenset(),
        cache=state.cache,
        dismissed=dismissed,
        scopes=scopes,
    )
    if ctx.rules is not rules:  # built by this pass: kept for the next ones
        state.rules = ctx.rules
    if next_preparation is not None:
        # Saved only once the whole compose has run (as upstream does): a cancelled or failed
        # compose must not leave a preparation that skips the next baseline load.
        state.preparation = next_preparation
    changes = list(baseline_changes)
    if update is not None:
        blocks.append(update.text)
        changes.extend(update.changes)
    if not blocks:
        return None
    source = make_source(
        changes, baseline=baseline_emitted, identity=identity if baseline_emitted else None
    )
    return Message.user(blocks, source)


def sync_inbox(
    inbox: Sequence[Message],
    desired: Message | None,
    *,
    claimed: Sequence[Message] = (),
    visible: Sequence[Message] = (),
) -> list[Message]:
    """The new inbox: at most one pending agent-instructions message, recomputed
    (docs/reference/agent-instructions.md, Inbox sync).

    A desired message equal to one the model already has is dropped, as upstream does, but only
    while that message is still in effect: once a later change of one of its scopes entered (a
    ``remove`` is a tombstone), the same message is news again (a file removed and restored with
    the same bytes, as ``git stash`` / ``git stash pop`` do, is announced again).
    """
    pending = [m for m in inbox if is_instructions_message(m)]
    others = [m for m in inbox if not is_instructions_message(m)]
    if desired is None:
        return others
    seen = (*claimed, *visible)
    if any(m.same_payload(desired) for m in seen):
        effective = effective_changes(visible, claimed)
        if any(m.same_payload(desired) and _in_effect(m, effective) for m in seen):
            return others
    for m in pending:
        if m.same_payload(desired):
            return _replace_pending(inbox, keep=m)
    if not pending:
        return [desired, *inbox]
    return _replace_pending(inbox, keep=desired, at=pending[0])


def _in_effect(message: Message, effective: Mapping[str, Change]) -> bool:
    """Whether every change of ``message`` is still the latest one of its scope."""
    return all(effective.get(c.scope) == c for c in changes_of(message))


def _replace_pending(
    inbox: Sequence[Message], keep: Message, at: Message | None = None
) -> list[Message]:
    anchor = at or keep
    out = []
    for m in inbox:
        if m is anchor:
            out.append(keep)
        elif not is_instructions_message(m):
            out.append(m)
    return out

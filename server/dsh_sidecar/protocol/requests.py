"""Every request of the wire contract as one object: its name, its params type, its result type.

The LSP layer registers a handler per object (``lsp/handlers/base.request``), typed by it, so a
handler that answers another type fails ``mypy``; the names are ``methods.py``'s (which the
editor clients mirror) and a test checks both tables hold the same requests.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from . import methods
from . import types as wt

P = TypeVar("P")
R = TypeVar("R")
NULL = type(None)  # the result of a request answered with null


@attrs.frozen
class Request(Generic[P, R]):
    name: str
    params: type[P]
    result: type[R]


SESSION_OPEN = Request(methods.SESSION_OPEN, wt.SessionOpenParams, wt.SessionOpenResult)
SESSION_CLOSE = Request(methods.SESSION_CLOSE, wt.SessionIdParams, NULL)
SESSION_LIST = Request(methods.SESSION_LIST, wt.SessionListParams, wt.SessionListResult)
SESSION_SURFACE = Request(methods.SESSION_SURFACE, wt.SessionIdParams, wt.SurfaceResult)
SESSION_EVENTS = Request(methods.SESSION_EVENTS, wt.SessionEventsParams, wt.EventsResult)
SESSION_APPEND = Request(methods.SESSION_APPEND, wt.SessionAppendParams, wt.AppendResult)
SESSION_COMPACT = Request(methods.SESSION_COMPACT, wt.SessionCompactParams, wt.CompactResult)
SESSION_DELETE = Request(methods.SESSION_DELETE, wt.SessionIdParams, NULL)
STEP_PREPARE = Request(methods.STEP_PREPARE, wt.StepPrepareParams, wt.PrepareResult)
STEP_END = Request(methods.STEP_END, wt.StepEndParams, NULL)
TURN_END = Request(methods.TURN_END, wt.TurnEndParams, NULL)
CONTEXT_PENDING = Request(methods.CONTEXT_PENDING, wt.SessionIdParams, wt.PendingResult)
CONTEXT_DISCARD = Request(methods.CONTEXT_DISCARD, wt.ContextDiscardParams, wt.PendingResult)
CONTEXT_PREVIEW = Request(methods.CONTEXT_PREVIEW, wt.ContextPreviewParams, wt.PreviewResult)
SCOPES = Request(methods.SCOPES, wt.ScopesParams, wt.ScopesResult)
EXPLAIN = Request(methods.EXPLAIN, wt.ExplainParams, wt.ExplainResult)
SESSION_REFERENCE_CANDIDATES = Request(
    methods.SESSION_REFERENCE_CANDIDATES, wt.CandidatesParams, wt.CandidatesResult
)

ALL: tuple[Request[Any, Any], ...] = (
    SESSION_OPEN,
    SESSION_CLOSE,
    SESSION_LIST,
    SESSION_SURFACE,
    SESSION_EVENTS,
    SESSION_APPEND,
    SESSION_COMPACT,
    SESSION_DELETE,
    STEP_PREPARE,
    STEP_END,
    TURN_END,
    CONTEXT_PENDING,
    CONTEXT_DISCARD,
    CONTEXT_PREVIEW,
    SCOPES,
    EXPLAIN,
    SESSION_REFERENCE_CANDIDATES,
)

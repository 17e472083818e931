"""Every custom method name of the wire contract (protocol.md), in one table.

The VS Code extension (vscode-extension/src/methods.ts) and the Neovim plugin
(editors/nvim/lua/dsh_sidecar/methods.lua) mirror this table; tests fail when they drift.
"""

from __future__ import annotations

PROTOCOL_VERSION = 1

SESSION_OPEN = "dsh/session/open"
SESSION_CLOSE = "dsh/session/close"
SESSION_LIST = "dsh/session/list"
SESSION_SURFACE = "dsh/session/surface"
SESSION_EVENTS = "dsh/session/events"
SESSION_APPEND = "dsh/session/append"
SESSION_COMPACT = "dsh/session/compact"
SESSION_DELETE = "dsh/session/delete"
STEP_PREPARE = "dsh/step/prepare"
STEP_END = "dsh/step/end"
TURN_END = "dsh/turn/end"
TOOL_RESULT = "dsh/tool/result"
CONTEXT_PENDING = "dsh/context/pending"
CONTEXT_DISCARD = "dsh/context/discard"
CONTEXT_PREVIEW = "dsh/context/preview"
SCOPES = "dsh/scopes"
EXPLAIN = "dsh/explain"
SESSION_REFERENCE_CANDIDATES = "dsh/sessionReferences/candidates"
CONTEXT_DID_CHANGE = "dsh/context/didChange"
SETTINGS_DID_CHECK = "dsh/settings/didCheck"

# Client-to-server requests.
REQUESTS = (
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
# Client-to-server notifications.
NOTIFICATIONS = (TOOL_RESULT,)
# Server-to-client notifications.
SERVER_NOTIFICATIONS = (CONTEXT_DID_CHANGE, SETTINGS_DID_CHECK)

ALL_METHODS = REQUESTS + NOTIFICATIONS + SERVER_NOTIFICATIONS

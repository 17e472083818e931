-- Every custom method name of the wire contract, mirroring server/dsh_sidecar/protocol/methods.py
-- constant for constant (tests/editors/test_nvim_plugin.py fails when the two drift apart).

local M = {}

M.PROTOCOL_VERSION = 1

M.SESSION_OPEN = 'dsh/session/open'
M.SESSION_CLOSE = 'dsh/session/close'
M.SESSION_LIST = 'dsh/session/list'
M.SESSION_SURFACE = 'dsh/session/surface'
M.SESSION_EVENTS = 'dsh/session/events'
M.SESSION_APPEND = 'dsh/session/append'
M.SESSION_COMPACT = 'dsh/session/compact'
M.SESSION_DELETE = 'dsh/session/delete'
M.STEP_PREPARE = 'dsh/step/prepare'
M.STEP_END = 'dsh/step/end'
M.TURN_END = 'dsh/turn/end'
M.TOOL_RESULT = 'dsh/tool/result'
M.CONTEXT_PENDING = 'dsh/context/pending'
M.CONTEXT_DISCARD = 'dsh/context/discard'
M.CONTEXT_PREVIEW = 'dsh/context/preview'
M.SCOPES = 'dsh/scopes'
M.EXPLAIN = 'dsh/explain'
M.SESSION_REFERENCE_CANDIDATES = 'dsh/sessionReferences/candidates'
M.CONTEXT_DID_CHANGE = 'dsh/context/didChange'
M.SETTINGS_DID_CHECK = 'dsh/settings/didCheck'

-- Client-to-server requests.
M.REQUESTS = {
  M.SESSION_OPEN,
  M.SESSION_CLOSE,
  M.SESSION_LIST,
  M.SESSION_SURFACE,
  M.SESSION_EVENTS,
  M.SESSION_APPEND,
  M.SESSION_COMPACT,
  M.SESSION_DELETE,
  M.STEP_PREPARE,
  M.STEP_END,
  M.TURN_END,
  M.CONTEXT_PENDING,
  M.CONTEXT_DISCARD,
  M.CONTEXT_PREVIEW,
  M.SCOPES,
  M.EXPLAIN,
  M.SESSION_REFERENCE_CANDIDATES,
}
-- Client-to-server notifications.
M.NOTIFICATIONS = { M.TOOL_RESULT }
-- Server-to-client notifications.
M.SERVER_NOTIFICATIONS = { M.CONTEXT_DID_CHANGE, M.SETTINGS_DID_CHECK }

return M

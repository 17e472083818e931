/**
 * Every custom method name of the wire contract (docs/protocol.md), in one table.
 *
 * Mirrors server/dsh_sidecar/protocol/methods.py name for name; tests/editors/test_vscode_methods.py
 * parses both files and fails when they differ, so edit them together.
 */

export const PROTOCOL_VERSION = 1;

export const SESSION_OPEN = 'dsh/session/open';
export const SESSION_CLOSE = 'dsh/session/close';
export const SESSION_LIST = 'dsh/session/list';
export const SESSION_SURFACE = 'dsh/session/surface';
export const SESSION_EVENTS = 'dsh/session/events';
export const SESSION_APPEND = 'dsh/session/append';
export const SESSION_COMPACT = 'dsh/session/compact';
export const SESSION_DELETE = 'dsh/session/delete';
export const STEP_PREPARE = 'dsh/step/prepare';
export const STEP_END = 'dsh/step/end';
export const TURN_END = 'dsh/turn/end';
export const TOOL_RESULT = 'dsh/tool/result';
export const CONTEXT_PENDING = 'dsh/context/pending';
export const CONTEXT_DISCARD = 'dsh/context/discard';
export const CONTEXT_PREVIEW = 'dsh/context/preview';
export const SCOPES = 'dsh/scopes';
export const EXPLAIN = 'dsh/explain';
export const SESSION_REFERENCE_CANDIDATES = 'dsh/sessionReferences/candidates';
export const CONTEXT_DID_CHANGE = 'dsh/context/didChange';
export const SETTINGS_DID_CHECK = 'dsh/settings/didCheck';

/** Client-to-server requests. */
export const REQUESTS = [
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
] as const;

/** Client-to-server notifications. */
export const NOTIFICATIONS = [TOOL_RESULT] as const;

/** Server-to-client notifications. */
export const SERVER_NOTIFICATIONS = [CONTEXT_DID_CHANGE, SETTINGS_DID_CHECK] as const;

export const ALL_METHODS = [...REQUESTS, ...NOTIFICATIONS, ...SERVER_NOTIFICATIONS] as const;

export type RequestMethod = (typeof REQUESTS)[number];
export type NotificationMethod = (typeof NOTIFICATIONS)[number];

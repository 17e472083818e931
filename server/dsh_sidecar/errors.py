"""Domain errors with stable codes.

Every error the sidecar reports for bad input carries one of these codes; the LSP layer maps a
``DshError`` to JSON-RPC ``InvalidParams`` with ``data.code`` in exactly one place.
"""

from __future__ import annotations

from typing import Any

UNKNOWN_SESSION = "unknown-session"
INVALID_CWD = "invalid-cwd"
INVALID_EVENT = "invalid-event"
INVALID_CONFIG = "invalid-config"
INVALID_TIME_ZONE = "invalid-time-zone"
INVALID_PARAMS = "invalid-params"
INVALID_URI = "invalid-uri"
UNKNOWN_MESSAGE = "unknown-message"
# Not bad input: the store's write lock stayed taken (by another process) past the busy timeout.
STORE_BUSY = "store-busy"

SESSION_REFERENCE_INVALID_CONFIG = "SESSION_REFERENCE_INVALID_CONFIG"
SESSION_REFERENCE_INVALID_REFERENCE = "SESSION_REFERENCE_INVALID_REFERENCE"
SESSION_REFERENCE_SELF_REFERENCE = "SESSION_REFERENCE_SELF_REFERENCE"
SESSION_REFERENCE_TOO_MANY = "SESSION_REFERENCE_TOO_MANY"
SESSION_REFERENCE_READ_FAILED = "SESSION_REFERENCE_READ_FAILED"
SESSION_REFERENCE_BUDGET_EXCEEDED = "SESSION_REFERENCE_BUDGET_EXCEEDED"
SESSION_REFERENCE_CANCELLED = "SESSION_REFERENCE_CANCELLED"

INVARIANT = "INVARIANT"

# The transport and the LSP lifecycle (lsp/rpc/framing.py, lsp/rpc/incoming.py, lsp/rpc/protocol.py,
# lsp/rpc/transport.py). Their JSON-RPC codes differ; docs/protocol.md, Errors, lists each.
INVALID_HEADER = "invalid-header"
MESSAGE_TOO_LARGE = "message-too-large"
PARSE_ERROR = "parse-error"
INVALID_REQUEST = "invalid-request"
NESTED_TOO_DEEPLY = "nested-too-deeply"
NOT_INITIALIZED = "not-initialized"
SHUTTING_DOWN = "shutting-down"
ALREADY_INITIALIZED = "already-initialized"
UNAUTHORIZED = "unauthorized"
INTERNAL_ERROR = "internal-error"


class DshError(Exception):
    """An error with a stable machine-readable ``code`` and a human message."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data or {}

    def __repr__(self) -> str:
        return f"DshError({self.code!r}, {self.message!r})"


class ConfigError(DshError):
    """An invalid setting; the message names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(INVALID_CONFIG, f"{key}: {message}", {"key": key})
        self.key = key


class StoreBusy(DshError):
    """Another connection held the session store's write lock past the busy timeout."""

    def __init__(self, path: str) -> None:
        super().__init__(
            STORE_BUSY,
            f"the session store {path} is busy: another process holds its write lock; nothing was written",
            {"path": path},
        )


class Cancelled(Exception):
    """The request that owns this work was cancelled; nothing may be written."""

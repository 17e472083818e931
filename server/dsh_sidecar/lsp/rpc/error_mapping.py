"""The one place where domain errors become JSON-RPC errors (docs/protocol.md, Errors)."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError

# LSP's RequestFailed: the request was valid, the server could not carry it out.
REQUEST_FAILED = -32803


class JsonRpcRequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED


def invalid_params(
    message: str, code: str = errors.INVALID_PARAMS, **data: object
) -> JsonRpcException:
    return JsonRpcInvalidParams(message, data={"code": code, **data})


def to_jsonrpc(exc: DshError) -> JsonRpcException:
    """Bad input: InvalidParams (-32602); a busy store: RequestFailed (-32803); both with ``data.code``."""
    if exc.code == errors.STORE_BUSY:
        return JsonRpcRequestFailed(exc.message, data={"code": exc.code, **exc.data})
    return invalid_params(exc.message, exc.code, **exc.data)

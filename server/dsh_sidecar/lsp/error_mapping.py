"""The one place where domain errors become JSON-RPC errors (protocol.md §10)."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError


def invalid_params(
    message: str, code: str = errors.INVALID_PARAMS, **data: object
) -> JsonRpcException:
    return JsonRpcInvalidParams(message, data={"code": code, **data})


def to_jsonrpc(exc: DshError) -> JsonRpcException:
    """Bad input: InvalidParams (-32602) with a stable ``data.code``."""
    return invalid_params(exc.message, exc.code, **exc.data)

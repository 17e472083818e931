"""Refusals the protocol object makes itself: -32002 always names its data.code, and a
``$/cancelRequest`` whose id is not an id never reaches pygls (which would hash it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcServerNotInitialized

from dsh_sidecar.lsp.rpc.protocol import DshProtocol
from dsh_sidecar.lsp.server import DshServer


class _Capture:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def write(self, body: bytes) -> None:
        self.bodies.append(json.loads(body))

    def close(self) -> None:
        return None


def _server() -> tuple[DshServer, _Capture]:
    server = DshServer()
    capture = _Capture()
    server.protocol.set_writer(capture, include_headers=False)
    return server, capture


def _protocol(server: DshServer) -> DshProtocol:
    protocol = server.protocol
    assert isinstance(protocol, DshProtocol)
    return protocol


def test_the_service_before_it_started_is_not_initialized_with_data_code() -> None:
    server, _ = _server()
    with pytest.raises(JsonRpcServerNotInitialized) as refused:
        _ = server.service
    assert refused.value.data == {"code": "not-initialized"}


def test_any_server_not_initialized_error_is_sent_with_data_code() -> None:
    server, capture = _server()
    error = JsonRpcServerNotInitialized().to_response_error()  # pygls' own: no data
    server.protocol._send_response(5, error=error)
    (body,) = capture.bodies
    assert body["error"]["code"] == -32002
    assert body["error"]["data"] == {"code": "not-initialized"}


@pytest.mark.parametrize("bad_id", [[], {}, [1, 2], {"a": 1}, 1.5, True, None])
def test_a_cancel_whose_id_is_not_an_id_is_refused_as_invalid_params(bad_id: Any) -> None:
    server, _ = _server()
    message = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": bad_id}}
    with pytest.raises(ValueError, match=r"params\.id must be an integer or a string"):
        _protocol(server).structure_incoming(message, is_request=False)


@pytest.mark.parametrize("good_id", [0, 7, "abc"])
def test_a_cancel_with_an_id_is_structured(good_id: Any) -> None:
    server, _ = _server()
    message = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": good_id}}
    assert _protocol(server).structure_incoming(message, is_request=False).params.id == good_id

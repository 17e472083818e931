"""Each request is declared once (``protocol/requests.py``): the method table holds the same
requests, the server registers a handler for every one, and each handler answers its declared
result type."""

from __future__ import annotations

import typing

import pytest

from dsh_sidecar.lsp.server import build_server
from dsh_sidecar.protocol import methods, requests


def test_the_request_objects_are_the_method_tables_requests() -> None:
    assert tuple(r.name for r in requests.ALL) == methods.REQUESTS


@pytest.mark.parametrize("request_", requests.ALL, ids=lambda r: r.name)
def test_each_handler_answers_its_declared_type(request_: requests.Request[object, object]) -> None:
    handler = build_server().registered[request_.name]
    hints = typing.get_type_hints(handler)
    assert hints["p"] is request_.params
    assert hints["return"] is request_.result


def test_a_handler_answering_another_type_is_refused_at_run_time() -> None:
    import asyncio
    from typing import Any

    from dsh_sidecar.lsp.handlers.base import request

    registered: dict[str, Any] = {}

    class Fake:
        def __init__(self) -> None:
            self.registered: dict[str, Any] = {}

        def structure(self, raw: Any, kind: type[Any]) -> Any:
            return kind("s")

        def feature(self, name: str, options: Any = None) -> Any:
            return lambda fn: registered.setdefault(name, fn)

    async def wrong(p: Any) -> Any:
        return "not a PendingResult"

    fake = Fake()
    request(fake, requests.CONTEXT_PENDING, wrong)  # type: ignore[arg-type]
    run = registered[methods.CONTEXT_PENDING]
    with pytest.raises(TypeError, match="dsh/context/pending answered str"):
        asyncio.run(run(fake, {}))

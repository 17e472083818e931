"""``pytest_lsp.fixture`` with a type.

pytest-lsp's decorator carries no annotations, so under ``mypy --strict`` every client fixture it
decorates would become untyped; this wrapper states what it does: it returns the function as a
fixture of the same signature.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest_lsp
from pytest_lsp import ClientServerConfig

F = TypeVar("F", bound=Callable[..., Any])


def lsp_fixture(*, config: ClientServerConfig, **options: Any) -> Callable[[F], F]:
    """A fixture giving a client connected to a server started per ``config`` (pytest-lsp)."""
    decorate: Callable[[F], F] = pytest_lsp.fixture(config=config, **options)
    return decorate

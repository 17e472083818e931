"""``dsh/explain``: params checked as ``dsh/scopes`` checks a uri, the engine run in a worker
thread, and its JSON form structured into the typed wire result (so the request and
``dsh-sidecar explain --json`` share one mapping).

An explanation is kept per file (and session directory) in the service's ``explained`` cache,
with what the engine saw of the filesystem: hover asks for the same file on every cursor rest,
and while no file or directory it looked at has changed, the answer is the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import cattrs

from dsh_sidecar import errors
from dsh_sidecar.config import os_home
from dsh_sidecar.errors import DshError
from dsh_sidecar.explain import Explanation, explain_file
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.sessions.locations import existing_cwd, parse_cwd, parse_file_uri
from dsh_sidecar.sessions.service import SessionService
from dsh_sidecar.sources.observed import OneLook


async def explain(service: SessionService, params: wt.ExplainParams) -> Explanation:
    work = explain_work(service, params)
    return await service.workers.fs(lambda: work(None))


def explain_work(
    service: SessionService, params: wt.ExplainParams
) -> Callable[[LocalFileSystem | None], Explanation]:
    """The params checked now (on the loop); the explanation for a worker to produce (through
    the ``OneLook`` of the rest of a hover, when it is one)."""
    path = parse_file_uri(params.uri)
    cwd = parse_cwd(params.cwd) if params.cwd is not None else None
    snapshot = service.snapshot()
    env = snapshot.env
    home = env.get("HOME") or os_home()
    cache = service.explained

    def build(fs: LocalFileSystem) -> Explanation:
        # Filesystem questions, so they are asked in a worker, never on the event loop.
        if fs.is_directory(path):
            raise DshError(errors.INVALID_URI, f"{path} is a directory; dsh/explain needs a file")
        if not fs.is_directory(os.path.dirname(path)):
            raise DshError(
                errors.INVALID_URI, f"{os.path.dirname(path)} is not an existing directory"
            )
        if cwd is not None:
            existing_cwd(cwd, fs)
        return explain_file(
            path, snapshot.settings.instructions, fs, dsh_home=snapshot.dsh_home,
            cwd=cwd, home=home, env=env, os_home=home,
        )  # fmt: skip

    key = (path, cwd, snapshot.dsh_home, home)
    return lambda look: cache.get(key, look or OneLook(snapshot.fs), build)


def to_wire(converter: cattrs.Converter, explanation: Explanation) -> wt.ExplainResult:
    return converter.structure(explanation.to_json(), wt.ExplainResult)

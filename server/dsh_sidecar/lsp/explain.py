"""``dsh/explain``: params checked as ``dsh/scopes`` checks a uri, the engine run in a worker
thread, and its JSON form structured into the typed wire result (so the request and
``dsh-sidecar explain --json`` share one mapping)."""

from __future__ import annotations

import os

import cattrs

from dsh_sidecar import errors
from dsh_sidecar.config import os_home
from dsh_sidecar.errors import DshError
from dsh_sidecar.explain import Explanation, explain_file
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.sessions.locations import existing_cwd, parse_cwd, parse_file_uri
from dsh_sidecar.sessions.service import SessionService


async def explain(service: SessionService, params: wt.ExplainParams) -> Explanation:
    path = parse_file_uri(params.uri)
    cwd = parse_cwd(params.cwd) if params.cwd is not None else None
    snapshot = service.snapshot()
    env = snapshot.env
    home = env.get("HOME") or os_home()

    def work() -> Explanation:
        # Filesystem questions, so they are asked in a worker, never on the event loop.
        if os.path.isdir(path):
            raise DshError(errors.INVALID_URI, f"{path} is a directory; dsh/explain needs a file")
        if not os.path.isdir(os.path.dirname(path)):
            raise DshError(
                errors.INVALID_URI, f"{os.path.dirname(path)} is not an existing directory"
            )
        if cwd is not None:
            existing_cwd(cwd)
        return explain_file(
            path, snapshot.settings.instructions, snapshot.fs, dsh_home=snapshot.dsh_home,
            cwd=cwd, home=home, env=env, os_home=home,
        )  # fmt: skip

    return await service.workers.fs(work)


def to_wire(converter: cattrs.Converter, explanation: Explanation) -> wt.ExplainResult:
    return converter.structure(explanation.to_json(), wt.ExplainResult)

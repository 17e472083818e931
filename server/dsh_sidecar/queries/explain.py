"""``dsh/explain`` over an ``Asked``: the engine run in the worker, its answer kept per file.

An explanation is kept per file (and session directory) in ``Caches.explained`` with what the
engine saw of the filesystem: hover asks for the same file on every cursor rest, and while no
file or directory it looked at has changed, the answer is the same.
"""

from __future__ import annotations

import os

from dsh_sidecar import errors
from dsh_sidecar.errors import DshError
from dsh_sidecar.explain import Explanation, explain_file
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.sessions.locations import existing_cwd

from .asked import Asked


def explanation(asked: Asked, path: str, cwd: str | None, look: LocalFileSystem) -> Explanation:
    """What the sidecar and each agent load for ``path`` (blocking: a worker's)."""
    snapshot, home = asked.snapshot, asked.home

    def build(fs: LocalFileSystem) -> Explanation:
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
            cwd=cwd, home=home, env=snapshot.env, os_home=home,
        )  # fmt: skip

    key = (path, cwd, snapshot.dsh_home, home)
    result: Explanation = asked.caches.explained.get(key, look, build)
    return result

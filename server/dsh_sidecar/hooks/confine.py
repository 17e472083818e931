"""A project's settings file must stay in the project.

At project scope, ``<root>/.claude/settings.json`` and its directory are repository content: a
cloned repository can commit them as symlinks to anywhere (``../../outside.json``, ``/tmp/x``,
or a target that does not exist yet). Writing through such a link would let a repository choose
a file outside itself for ``hooks install`` to create or rewrite. So every component from the
root down is resolved, dangling links included, and a path whose real location leaves the real
root is refused before anything is read or written. The user's own files (user scope) are not
checked: a dotfiles symlink there is the user's choice.
"""

from __future__ import annotations

import os


class OutsideProjectError(Exception):
    """The message names the file and where it leads."""


def check_inside(path: str, root: str) -> None:
    real_root = os.path.realpath(root)
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise OutsideProjectError(f"{path}: not inside the project {root}")
    walked = os.path.abspath(root)
    for part in relative.split(os.sep):
        walked = os.path.join(walked, part)
        if not os.path.islink(walked):
            continue
        # realpath resolves a dangling link too, to where its target would be.
        real = os.path.realpath(walked)
        if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
            shown = walked if walked == path else f"{walked} (in {path})"
            raise OutsideProjectError(
                f"{shown}: a link that leads out of the project, to {real}; a project's hook"
                " settings must stay inside it"
            )

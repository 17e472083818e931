"""What the session service and its touch pipeline share on the event loop.

``Host`` holds the service's surroundings (settings, environment, store, filesystem seam,
worker pools, clock, the callbacks to the client) and what is derived from them: the compose
environment of a session, warnings delivered on the loop, the inbox notification. The service
(commands) and ``touches/`` (routing and projecting touches) both take it, so neither imports the
other. Loop only: ``settings`` is replaced here by ``SessionService.update_settings``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

import attrs

from dsh_sidecar import errors
from dsh_sidecar.config import Settings, os_home
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LocalFileSystem
from dsh_sidecar.model import SessionHeader
from dsh_sidecar.sources.agent_instructions.compose import ComposeEnv
from dsh_sidecar.sources.agent_instructions.git_excludes import GitUser

from .store import Store
from .workers import Workers

log = logging.getLogger(__name__)


@attrs.define(eq=False)
class Host:
    settings: Settings
    env: Mapping[str, str]
    store: Store
    fs: LocalFileSystem
    workers: Workers
    clock: Callable[[], int]
    on_inbox_changed: Callable[[str, int], None] | None = None
    on_warning: Callable[[str], None] | None = None
    _dsh_home: tuple[Settings, str] | None = None

    @property
    def dsh_home(self) -> str:
        # Asked on every touch and hover: worked out once per settings (and environment).
        found = self._dsh_home
        if found is None or found[0] is not self.settings:
            home = self.settings.instructions.home(self.env, self.os_home)
            found = self._dsh_home = (self.settings, home)
        return found[1]

    @property
    def os_home(self) -> str:
        """The home directory of this service's environment (``~`` in settings, display paths,
        the default DSH home)."""
        return environment_home(self.env)

    def git_user(self) -> GitUser:
        return GitUser.from_env(self.env, self.os_home)

    def compose_env(self, header: SessionHeader) -> ComposeEnv:
        """The frozen compose environment of a session under the current settings."""
        return ComposeEnv(
            header.cwd,
            self.settings.instructions,
            self.dsh_home,
            self.fs,
            self.os_home,
            self.git_user(),
        )

    def warn(self, message: str) -> None:
        log.warning("%s", message)
        if self.on_warning is not None:
            self.on_warning(message)

    def warner(self) -> Callable[[str], None]:
        """A warning function for a worker thread: the warning is delivered on the loop."""
        loop = asyncio.get_running_loop()

        def warn(message: str) -> None:
            loop.call_soon_threadsafe(self.warn, message)

        return warn

    def notify_inbox(self, session_id: str, count: int) -> None:
        if self.on_inbox_changed is not None:
            self.on_inbox_changed(session_id, count)


def environment_home(env: Mapping[str, str]) -> str:
    """The home directory of a service's environment: its ``HOME``, else this process's. Every
    home-relative path of the service (``~`` in settings, the default DSH home and with it the
    default store) is taken from this one, so a service given another environment never mixes
    in this process's home."""
    return env.get("HOME") or os_home()


def open_store(settings: Settings, env: Mapping[str, str], clock: Callable[[], int]) -> Store:
    """The configured store file, opened (blocking)."""
    path = settings.store_path(env, environment_home(env))
    return Store(path, clock, busy_timeout_ms=settings.store.busy_timeout_ms)


def not_open(session_id: str) -> DshError:
    return DshError(
        errors.UNKNOWN_SESSION,
        f"session {session_id!r} is not open in this sidecar (open it with dsh/session/open)",
        {"sessionId": session_id},
    )


def unknown(session_id: str) -> DshError:
    return DshError(
        errors.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
    )

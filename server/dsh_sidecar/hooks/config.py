"""What one hook process runs with: its settings, environment, mode, filesystem and clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

import attrs

from dsh_sidecar.config import Settings, os_home
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem
from dsh_sidecar.sessions.spool import Spool
from dsh_sidecar.sessions.store import now_ms

Mode = Literal["complement", "all"]


@attrs.frozen
class HookConfig:
    settings: Settings
    env: Mapping[str, str]
    mode: Mode = "complement"
    fs: LocalFileSystem = LOCAL_FS
    clock: Callable[[], int] = now_ms

    @property
    def dsh_home(self) -> str:
        return self.settings.instructions.home(self.env)

    @property
    def os_home(self) -> str:
        return self.env.get("HOME") or os_home()

    def spool(self) -> Spool:
        return Spool.of_home(self.dsh_home)

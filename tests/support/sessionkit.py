"""Shared scaffolding for the session-service tests: a real project tree, a real SQLite file.

Every test drives ``SessionService`` the way the LSP layer does (async calls, notifications as
plain calls) against files on disk. Nothing is mocked except the filesystem faults that root
cannot provoke with permissions, which come from ``LocalFileSystem`` subclasses below.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from dsh_sidecar.config import Settings, parse_settings
from dsh_sidecar.fs import LOCAL_FS, LocalFileSystem, Probe, ReadResult
from dsh_sidecar.model import INBOX_SPLICED, USER_MESSAGE, Event, Message
from dsh_sidecar.sessions.service import Prompt, SessionService
from dsh_sidecar.sessions.store import Store, now_ms, replay_inbox
from dsh_sidecar.sessions.surface import fold_surface
from dsh_sidecar.sources.agent_instructions.state import SOURCE_KIND
from tests.support.instrkit import INTRO, REPLACES

__all__ = ["INTRO", "REPLACES", "Prompt"]

T3 = (
    "<system-reminder>\n"
    "This complete workspace instruction baseline replaces all earlier workspace instruction "
    "baselines. No workspace instructions are currently active.\n"
    "</system-reminder>"
)


class Kit:
    """A project at ``root`` (with ``.git``), a store file and the services opened over it."""

    def __init__(self, tmp: Path, **instructions: Any) -> None:
        self.tmp = tmp
        self.root = tmp / "proj"
        (self.root / ".git").mkdir(parents=True)
        self.home = tmp / "home"
        self.store_path = tmp / "s.sqlite3"
        self.instructions = dict(instructions)
        self.notes: list[tuple[str, int]] = []
        self.warnings: list[str] = []
        self.services: list[SessionService] = []

    def settings(self, **instructions: Any) -> Settings:
        merged = {"dshHome": str(self.home), **self.instructions, **instructions}
        return parse_settings({"store": {"path": str(self.store_path)}, "instructions": merged})

    def service(
        self,
        fs: LocalFileSystem = LOCAL_FS,
        clock: Callable[[], int] = now_ms,
        env: dict[str, str] | None = None,
        **instructions: Any,
    ) -> SessionService:
        """A new service over the same store file: what a restarted sidecar would be."""
        # Not about durability: no fsync (docs/architecture.md, The store).
        store = Store(str(self.store_path), clock, durable=False)
        svc = SessionService(
            self.settings(**instructions),
            store=store,
            fs=fs,
            env=env or {},
            on_inbox_changed=lambda sid, n: self.notes.append((sid, n)),
            on_warning=self.warnings.append,
            clock=clock,
        )
        self.services.append(svc)
        return svc

    async def close(self) -> None:
        for svc in self.services:
            await svc.shutdown()

    def path(self, rel: str) -> Path:
        return self.root / rel

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink()


async def opened(kit: Kit, svc: SessionService, cwd: Path | None = None) -> str:
    header, _ = await svc.open_session(str(cwd or kit.root))
    return header.id


async def start(svc: SessionService, sid: str, text: str = "hello") -> list[Message]:
    """Turn 1 step 1 with a prompt, then step end: the baseline enters here."""
    prepared = await svc.prepare_step(sid, 1, 1, Prompt(text))
    await svc.end_step(sid, 1, 1)
    return list(prepared.messages)


async def ready(kit: Kit) -> tuple[SessionService, str]:
    """A service with one session at the project root, past its first step, notes cleared."""
    svc = kit.service()
    sid = await opened(kit, svc)
    await start(svc, sid)
    kit.notes.clear()
    return svc, sid


async def step(svc: SessionService, sid: str, turn: int, number: int) -> list[Message]:
    """One promptless tool-loop step, closed right away."""
    prepared = await svc.prepare_step(sid, turn, number, None)
    await svc.end_step(sid, turn, number)
    return list(prepared.messages)


def instructions(messages: Iterable[Message]) -> list[Message]:
    return [m for m in messages if m.source.get("kind") == SOURCE_KIND]


def changes(message: Message) -> list[tuple[str, str]]:
    """``(action, path)`` of each change, in order."""
    return [(c["action"], c["path"]) for c in message.source["changes"]]


def all_changes(messages: Iterable[Message]) -> list[tuple[str, str]]:
    return [c for m in instructions(messages) for c in changes(m)]


def frame(body: str) -> str:
    return f"<system-reminder>\n{body}\n</system-reminder>"


def set_text(path: str, scope: str, content: str) -> str:
    return frame(
        f"Additional instructions from: {path}\n\nThese instructions apply to work under "
        f"`{scope}`. Use them as guidance when relevant; more specific instructions take "
        "precedence. They do not override system, developer, or direct user instructions."
        f"\n\n{content}"
    )


def replace_text(path: str, content: str) -> str:
    return frame(
        f"Updated instructions from: {path}\n\nThis file changed after it was loaded. Use the "
        "following content instead of the previously loaded instructions from this file."
        f"\n\n{content}"
    )


def remove_text(path: str) -> str:
    return frame(
        f"Instructions removed: {path}\n\n"
        "The previously loaded instructions from this file no longer apply."
    )


def check_store_consistent(svc: SessionService, sid: str) -> list[Event]:
    """The materialized surface and inbox equal the pure folds of the raw log; returns the log."""
    log = svc.store.events(sid)
    assert [e.seq for e in log] == list(range(len(log)))
    assert svc.store.surface_seqs(sid) == fold_surface(log)
    stored_inbox = [m.to_json() for m in svc.store.inbox(sid)]
    assert stored_inbox == replay_inbox([e for e in log if e.type == INBOX_SPLICED])
    return log


def entered(log: Sequence[Event]) -> list[Message]:
    """Every message the log says entered the surface, in log order."""
    out = []
    for event in log:
        message = event.message() if event.type == USER_MESSAGE else None
        if message is not None and event.surface_op is not None:
            out.append(message)
    return out


class FaultyFS(LocalFileSystem):
    """``stat`` of the paths in ``failing`` raises ``errno`` (EACCES by default)."""

    def __init__(self) -> None:
        self.failing: dict[str, int] = {}

    def fail(self, path: Path, code: int = errno.EACCES) -> None:
        self.failing[str(path)] = code

    def heal(self) -> None:
        self.failing.clear()

    def stat(self, path: str) -> os.stat_result:
        code = self.failing.get(path)
        if code is not None:
            raise OSError(code, os.strerror(code), path)
        return super().stat(path)


class BlockingFS(LocalFileSystem):
    """Once armed, a read of ``path`` waits for ``release``; ``entered`` says one is waiting.

    This lets a test cancel ``prepare_step`` while its worker thread is provably mid-compose,
    without sleeping and hoping.
    """

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()

    def read_text(
        self, probe: Probe, max_source_bytes: int, *, allowed: Callable[[str], bool] | None = None
    ) -> ReadResult:
        if self.armed and probe.path == self.path:
            self.armed = False
            self.entered.set()
            self.release.wait()
        return super().read_text(probe, max_source_bytes, allowed=allowed)


def baseline_text(sections: Sequence[tuple[str, str]], intro: str = INTRO) -> str:
    """A framed baseline block: the intro, then ``Instructions from:`` sections.

    docs/reference/agent-instructions.md, Templates (T1).
    """
    parts = [intro, *(f"Instructions from: {path}\n\n{content}" for path, content in sections)]
    return frame("\n\n".join(parts))


def identity(project_root: str = "", max_bytes: int = 65536) -> str:
    """The baseline identity for default settings, written out in upstream's key order.

    docs/reference/agent-instructions.md, Baseline identity.
    """
    return (
        f'{{"projectRoot":"{project_root}","projectRootMarkers":[".git"],"maxBytes":{max_bytes},'
        '"maxSourceBytes":1048576,"instructionFileCandidates":["AGENTS.md","CLAUDE.md"],'
        '"localInstructionFileCandidates":["AGENTS.local.md","CLAUDE.local.md"]}'
    )

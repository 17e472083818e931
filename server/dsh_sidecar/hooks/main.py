"""``dsh-sidecar hook --agent AGENT [--mode complement|all] [--settings FILE]``.

``AGENT`` is one of the ids of dsh_sidecar/agents/registry.py whose record has hooks (``claude``,
``codex``, ``gemini``); any other is a usage error.

Reads the agent's hook event JSON on stdin; prints ``{"hookSpecificOutput": {...}}`` or nothing.
Always exits 0: a failure is logged under ``$DSH_HOME/log/hooks.log`` (``failopen``). Imports
only what the hook path uses: no server, no pygls, not ``dsh_sidecar.cli``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .event import HookEvent
from .failopen import HandedBack, log_line

MAX_INPUT_BYTES = 16 * 1024 * 1024
USAGE_ERROR = 1


def build_parser() -> Any:
    import argparse  # only for --help and usage errors: the usual command line skips it

    parser = argparse.ArgumentParser(
        prog="dsh-sidecar hook",
        description="answer one agent hook event (JSON on stdin) with the context now due",
    )
    from dsh_sidecar.agents.registry import hook_ids

    parser.add_argument("--agent", required=True, choices=hook_ids())
    parser.add_argument(
        "--mode",
        choices=("complement", "all"),
        default="complement",
        help="complement: only what the agent does not load itself (default); all: everything",
    )
    parser.add_argument(
        "--settings", metavar="FILE.json", help="settings tree (docs/configuration.md)"
    )
    return parser


def parse_event(agent: str, data: Any) -> HookEvent:
    """``data`` read by the record of the agent that sent it: ``agent``'s, or that of another
    host running ``agent``'s hooks (``host.host_of``: Copilot runs Claude Code's); an agent
    without one (or without hooks) is an ``UnknownAgent``, never another agent's reading."""
    from dsh_sidecar.agents.registry import hook_record

    from .adapter import parse
    from .host import host_of
    from .payload import BadPayload

    hook_record(agent)
    if not isinstance(data, Mapping):
        raise BadPayload("hook input is not a JSON object")
    return parse(hook_record(host_of(agent, data)), data)


class _Args:
    def __init__(self, agent: str, mode: str, settings: str | None) -> None:
        self.agent, self.mode, self.settings = agent, mode, settings


def _quick_args(argv: Sequence[str]) -> _Args | None:
    """The command lines the installer writes, read without argparse; None: anything else."""
    found: dict[str, str] = {}
    words = list(argv)
    while words:
        flag = words.pop(0)
        key, eq, value = flag.partition("=")
        if key not in ("--agent", "--mode", "--settings") or key in found:
            return None
        if not eq:
            if not words:
                return None
            value = words.pop(0)
        found[key] = value
    agent, mode = found.get("--agent"), found.get("--mode", "complement")
    if agent is None or not _hook_agent(agent) or mode not in ("complement", "all"):
        return None
    return _Args(agent, mode, found.get("--settings"))


def _hook_agent(agent: str) -> bool:
    """Whether ``agent`` names a record with hooks of its own, as argparse's choices do (its
    module alone is imported). An agent that only runs another's hooks (Copilot in VS Code) is
    no ``--agent``: its events arrive through that agent's command and are told apart there."""
    from dsh_sidecar.agents.registry import UnknownAgent, record

    try:
        return record(agent).hooks is not None
    except UnknownAgent:
        return False


def main(
    argv: Sequence[str] | None = None,
    stdin: Any = None,
    stdout: Any = None,
    *,
    env: Mapping[str, str] | None = None,
    started: float | None = None,
    before_commit: Callable[[], None] | None = None,
) -> int:
    """One event in this process. The resident engine (``hooks/resident.py``) calls it with the
    hook's environment and start, and ``before_commit`` to learn that the answer was printed; the
    thin client (``resident_client``) with the stdin it read already and its start."""
    started = time.monotonic() if started is None else started
    words = list(sys.argv[1:] if argv is None else argv)
    args: Any = _quick_args(words)
    if args is None:
        try:
            args = build_parser().parse_args(words)
        except SystemExit as exc:
            # Never 2: Claude Code and Gemini CLI read exit status 2 as "block this action".
            # A command line the agent cannot run is 1, which they report and go on.
            return 0 if exc.code == 0 else USAGE_ERROR
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
    env = dict(os.environ if env is None else env)
    home: str | None = None
    try:
        from dsh_sidecar.config import Settings

        settings = _settings(args.settings) if args.settings else Settings()
        home = settings.instructions.home(env)
        raw = reader.read(MAX_INPUT_BYTES + 1)
        if len(raw) > MAX_INPUT_BYTES:
            raise ValueError("hook input over 16 MiB")
        event = parse_event(args.agent, json.loads(raw))
        run(
            event,
            settings,
            env,
            args.mode,
            _emitter(writer),
            started=started,
            before_commit=before_commit,
        )
    except HandedBack:
        raise  # the resident's to note: its client answered the event itself
    except BaseException as exc:  # fail-open: whatever happened, the agent goes on
        if isinstance(exc, KeyboardInterrupt):
            return 0
        log_line(home or _home_guess(env), args.agent, f"{type(exc).__name__}: {exc}")
    return 0


def run(
    event: HookEvent,
    settings: Any,
    env: Mapping[str, str],
    mode: str,
    emit: Callable[[bytes], None],
    *,
    started: float | None = None,
    before_commit: Callable[[], None] | None = None,
) -> None:
    """Answer ``event``. The wait for the store's write lock (its one transaction; opening a
    current store takes none) is what is left of the agent's timeout for the hook, counted from
    ``started``, less a margin (``budget``); a lock held past that keeps the event's touches."""
    from dsh_sidecar.agents.registry import hooks_of
    from dsh_sidecar.errors import StoreBusy
    from dsh_sidecar.sessions.store import Store

    from .budget import wait_ms
    from .config import HookConfig
    from .mapping import session_id_of
    from .runtime import handle

    config = HookConfig(settings, env, mode)  # type: ignore[arg-type]
    if event.compacting:
        _compacting(config, event, session_id_of)  # its text would reach no model
        return
    try:
        now = time.monotonic()
        wait = wait_ms(now if started is None else started, now)
        store = Store(settings.store_path(env), busy_timeout_ms=wait)
    except (StoreBusy, sqlite3.OperationalError) as exc:
        if isinstance(exc, sqlite3.OperationalError) and "locked" not in str(exc):
            raise
        _keep(config, event, session_id_of)
        return
    try:
        handle(store, event, config, emit, before_commit=before_commit)
        if event.kind == "prompt" and hooks_of(event.agent).compaction == "start-keeps-call":
            # The agent fires its prompt hook before each model call (hooks/model_calls.py).
            from .model_calls import ModelCalls

            sid = session_id_of(event.agent, event.session_id, event.agent_id)
            ModelCalls(config.dsh_home).note(sid, store.last_seq(sid) or 0)
    except StoreBusy:
        _keep(config, event, session_id_of)
    finally:
        store.close()


def _compacting(config: Any, event: HookEvent, session_id_of: Callable[..., str]) -> None:
    """The agent begins to compact its history (``Hooks.compaction``): with no start after it,
    the reset waits for the session's next event, whose text lands after the compaction point,
    which stays; compacted by hand, no model call's message is in flight to keep."""
    from dsh_sidecar.agents.registry import hooks_of

    compaction = hooks_of(event.agent).compaction
    if compaction == "event-only":
        _keep(config, event, session_id_of, note=False)
    elif compaction == "start-keeps-call" and event.trigger == "manual":
        from .model_calls import ModelCalls

        sid = session_id_of(event.agent, event.session_id, event.agent_id)
        ModelCalls(config.dsh_home).forget(sid)


def _keep(
    config: Any, event: HookEvent, session_id_of: Callable[..., str], *, note: bool = True
) -> None:
    """A busy event's touches, and the reset of the agent's context it reports, kept for the
    session's next event (``note``: logged, as a busy store is)."""
    sid = session_id_of(event.agent, event.session_id, event.agent_id)
    reset = event.context_reset
    config.spool().keep(sid, event.touched, event.scanned, reset=reset)
    if not note:
        return
    kept = f"store busy: kept {len(event.touched)} touch(es)"
    log_line(config.dsh_home, event.agent, kept + (f" and the {reset}" if reset else ""))


def _emitter(writer: Any) -> Callable[[bytes], None]:
    def emit(data: bytes) -> None:
        writer.write(data)
        writer.flush()

    return emit


def _settings(path: str) -> Any:
    from dsh_sidecar.config import parse_settings

    with open(path, encoding="utf-8") as handle:
        return parse_settings(json.load(handle))


def _home_guess(env: Mapping[str, str]) -> str | None:
    try:
        from dsh_sidecar.config import resolve_dsh_home

        return resolve_dsh_home(None, env)
    except Exception:
        return env.get("DSH_HOME")

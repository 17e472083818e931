"""The ``dsh-sidecar`` command: run the language server, or answer one question and exit.

``preview`` and ``scopes`` run the same engine a session uses (no server, no session store), so
what they print is what an agent would be given. ``serve`` hands over to ``dsh_sidecar.lsp``;
on the stdio transport stdout is the protocol channel, so nothing here writes to it for ``serve``
and logging is configured by the server (stderr or ``--log-file``).

Bad input (a missing directory or file, an unreadable settings file, an invalid setting) is one
line on stderr naming the problem and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import import_module, metadata
from typing import Any, BinaryIO

from dsh_sidecar.config import Settings, describe_dsh_home
from dsh_sidecar.errors import DshError
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.baseline import (
    BaselineLoad,
    ChainEntry,
    load_baseline,
    load_document_chain,
)

PROG = "dsh-sidecar"
EXIT_OK = 0
EXIT_UNHEALTHY = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 1  # what Python's own SIGPIPE recipe returns
# Kept equal to dsh_sidecar.lsp.framing.DEFAULT_MAX_BODY_BYTES (a test checks); not imported so
# that parsing the command line does not load the server.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MIN_MAX_MESSAGE_BYTES = 1024


class UsageError(Exception):
    """Bad command-line input; reported as ``dsh-sidecar: <message>`` with exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    if command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return command(args)
    except UsageError as exc:
        return _fail(str(exc))
    except DshError as exc:
        return _fail(_config_message(exc))
    except BrokenPipeError:
        # The reader went away (``| head``); point stdout at /dev/null so the interpreter's
        # final flush does not raise a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Workspace instructions (AGENTS.md/CLAUDE.md) for editor AI agents.",
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the language server (stdio unless --tcp or --socket)")
    serve.add_argument("--tcp", action="store_true", help="listen on 127.0.0.1 instead of stdio")
    serve.add_argument(
        "--port", type=int, help="TCP port (with --tcp; default 2087, 0 lets the OS choose)"
    )
    serve.add_argument("--socket", metavar="PATH", help="listen on a Unix domain socket at PATH")
    serve.add_argument(
        "--max-message-bytes",
        type=int,
        metavar="N",
        help=f"refuse messages whose body is over N bytes (default {DEFAULT_MAX_MESSAGE_BYTES})",
    )
    serve.add_argument("--log-file", metavar="FILE", help="log to FILE (created 0600), not stderr")
    serve.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    serve.set_defaults(run=_cmd_serve)

    preview = sub.add_parser(
        "preview", help="print the baseline a new session in DIR would receive"
    )
    preview.add_argument("directory", nargs="?", metavar="DIR", help="default: the current one")
    preview.add_argument("--json", action="store_true", help="text plus every file's state")
    _settings_option(preview)
    preview.set_defaults(run=_cmd_preview)

    scopes = sub.add_parser("scopes", help="list the instruction chain that governs FILE")
    scopes.add_argument("file", metavar="FILE", help="a file (its directory) or a directory")
    scopes.add_argument("--json", action="store_true", help="machine-readable output")
    _settings_option(scopes)
    scopes.set_defaults(run=_cmd_scopes)

    doctor = sub.add_parser("doctor", help="check the installation and the environment")
    _settings_option(doctor)
    doctor.set_defaults(run=_cmd_doctor)
    return parser


def _settings_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--settings",
        metavar="FILE.json",
        help="settings tree as in initializationOptions (protocol §9); defaults otherwise",
    )


# --- commands ---------------------------------------------------------------------------------


def _cmd_preview(args: argparse.Namespace) -> int:
    settings = load_settings(args.settings).instructions
    directory = _existing_directory(args.directory)
    load = load_baseline(directory, settings, LOCAL_FS, dsh_home=settings.home())
    if args.json:
        _write_json(preview_json(load))
    else:
        # Exactly the baseline bytes, with no newline added: the output can be compared with
        # (or counted against) the budget as it is. An empty baseline prints nothing on stdout,
        # and says so on stderr so an empty result is not mistaken for a failure.
        _write_bytes(load.text.encode("utf-8", "surrogateescape"))
        if not load.text:
            sys.stderr.write(
                f"dsh-sidecar: no workspace instruction files apply to {load.cwd}"
                f" (project root {load.project_root}, DSH_HOME {settings.home()})\n"
            )
    return EXIT_OK


def _cmd_scopes(args: argparse.Namespace) -> int:
    settings = load_settings(args.settings).instructions
    path = os.path.abspath(args.file)
    if not os.path.exists(path):
        raise UsageError(f"{args.file}: no such file or directory")
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    load = load_document_chain(directory, settings, LOCAL_FS, dsh_home=settings.home())
    if args.json:
        _write_json(
            {
                "projectRoot": load.project_root,
                "directory": load.cwd,
                "files": [_entry_json(e) for e in load.entries],
            }
        )
    else:
        _write_text("".join(_entry_line(e) + "\n" for e in load.entries))
    return EXIT_OK


def _cmd_doctor(args: argparse.Namespace) -> int:
    settings = load_settings(args.settings)
    rows: list[tuple[str, str]] = [
        ("python", f"{platform.python_version()} ({sys.executable})"),
    ]
    problems: list[str] = []
    for dist in ("pygls", "lsprotocol"):
        try:
            version = metadata.version(dist)
            import_module(dist)
        except (metadata.PackageNotFoundError, ImportError) as exc:
            rows.append((dist, f"missing ({exc})"))
            problems.append(f"{dist} is not installed")
        else:
            rows.append((dist, version))
    home, origin = describe_dsh_home(settings.instructions.dsh_home)
    rows.append(("DSH_HOME", f"{home} ({origin})"))
    store = settings.store_path()
    writable, detail = store_writable(store)
    rows.append(("store", f"{store} ({detail})"))
    if not writable:
        problems.append(f"store {store} is not writable")
    tmux, tmux_detail = _tmux_status()
    rows.append(("tmux", tmux_detail))
    if tmux is None and settings.tmux_context.enabled:
        problems.append("tmuxContext is enabled but tmux is not available")
    rows.append(("status", "ok" if not problems else "; ".join(problems)))
    width = max(len(name) for name, _ in rows)
    _write_text("".join(f"{name:<{width}}  {value}\n" for name, value in rows))
    return EXIT_OK if not problems else EXIT_UNHEALTHY


def _cmd_serve(args: argparse.Namespace) -> int:
    if args.port is not None and not args.tcp:
        raise UsageError("--port needs --tcp")
    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port: must be between 0 and 65535, got {args.port}")
    if args.socket is not None and args.tcp:
        raise UsageError("--socket and --tcp cannot be used together")
    if args.socket == "":
        raise UsageError("--socket: the path is empty")
    max_bytes = (
        DEFAULT_MAX_MESSAGE_BYTES if args.max_message_bytes is None else args.max_message_bytes
    )
    if max_bytes < MIN_MAX_MESSAGE_BYTES:
        raise UsageError(
            f"--max-message-bytes: must be at least {MIN_MAX_MESSAGE_BYTES}, got {max_bytes}"
        )
    if args.log_file is not None:
        # Opened here first so a bad path is a one-line error rather than a traceback from
        # inside the server's logging setup. A new log is private: it can quote session data.
        # O_NONBLOCK: a FIFO nobody reads is refused (ENXIO) instead of hanging the start.
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK
        try:
            os.close(os.open(args.log_file, flags, 0o600))
        except OSError as exc:
            raise UsageError(f"--log-file {args.log_file}: {exc.strerror or exc}") from exc
    try:
        # Imported here: pygls is only needed to serve, and preview/doctor must work without it.
        from dsh_sidecar.lsp.server import serve
        from dsh_sidecar.lsp.transport_serve import ServeError, StoppedBySignal

        try:
            return serve(
                tcp=args.tcp,
                port=args.port,
                log_file=args.log_file,
                verbose=args.verbose,
                socket_path=args.socket,
                max_message_bytes=max_bytes,
            )
        except ServeError as exc:
            sys.stderr.write(f"{PROG}: {exc}\n")
            return EXIT_UNHEALTHY
        except StoppedBySignal as stopped:
            sys.stderr.write(f"{PROG}: stopped by {stopped}\n")
            return 128 + stopped.signum
    except KeyboardInterrupt:
        # Ctrl-C before the server installed its own handler (while importing, say).
        sys.stderr.write(f"{PROG}: stopped by SIGINT\n")
        return 128 + signal.SIGINT


# --- helpers ----------------------------------------------------------------------------------


def load_settings(path: str | None) -> Settings:
    """Defaults, or the protocol §9 tree read from ``path``."""
    if path is None:
        return Settings()
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except OSError as exc:
        raise UsageError(f"--settings {path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"--settings {path}: not UTF-8 ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--settings {path}: invalid JSON: {exc}") from exc
    return Settings.from_json(raw)


def _existing_directory(given: str | None) -> str:
    try:
        directory = os.path.abspath(given) if given is not None else os.getcwd()
    except FileNotFoundError as exc:  # the shell's cwd was deleted under it
        raise UsageError("the current directory no longer exists") from exc
    if not os.path.isdir(directory):
        shown = given if given is not None else directory
        reason = "not a directory" if os.path.exists(directory) else "no such directory"
        raise UsageError(f"{shown}: {reason}")
    return directory


def _config_message(exc: DshError) -> str:
    # Session-reference errors keep upstream's wording, which names the key without its section.
    key = exc.data.get("key")
    if isinstance(key, str) and not exc.message.startswith(key):
        return f"{key}: {exc.message}"
    return exc.message


def preview_json(load: BaselineLoad) -> dict[str, Any]:
    """The ``--json`` document: the ``dsh/context/preview`` result plus ``projectRoot``."""
    return {
        "text": load.text,
        "projectRoot": load.project_root,
        "baselineIdentity": load.identity,
        "files": [_entry_json(e) for e in load.entries],
        "omitted": list(load.result.omitted),
        "truncated": [
            {"path": t.path, "originalBytes": t.original_bytes, "includedBytes": t.included_bytes}
            for t in load.result.truncated
        ],
    }


def _entry_json(entry: ChainEntry) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": entry.candidate.abs_path,
        "displayPath": entry.candidate.display_path,
        "scope": entry.candidate.scope,
        "state": entry.state,
        # None only when the file could not even be stat'ed (state "unreadable").
        "bytes": entry.bytes,
    }
    if entry.included_bytes is not None:
        out["includedBytes"] = entry.included_bytes
    if entry.digest is not None:
        out["digest"] = entry.digest
    if entry.reason is not None:
        out["reason"] = entry.reason
    return out


def _entry_line(entry: ChainEntry) -> str:
    size = "-" if entry.bytes is None else str(entry.bytes)
    line = f"{entry.state:<10} {size:>8}  {entry.candidate.display_path}"
    return f"{line}  {entry.reason}" if entry.reason else line


def store_writable(path: str) -> tuple[bool, str]:
    """Whether SQLite could create or open ``path`` for writing, without creating anything.

    The directory must be writable too: SQLite puts its journal and WAL files beside the store.
    """
    if os.path.isdir(path):
        return False, "not writable: it is a directory"
    parent = os.path.dirname(path)
    if os.path.exists(path):
        ok = os.access(path, os.W_OK) and os.access(parent, os.W_OK | os.X_OK)
        return ok, "writable" if ok else "not writable: permission denied"
    existing = parent
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return False, f"not writable: {existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return False, f"not writable: cannot create files under {existing}"
    return True, "writable, will be created"


def _tmux_status() -> tuple[str | None, str]:
    tmux = shutil.which("tmux")
    if tmux is None:
        return None, "not found on PATH (tmux-context has nothing to report)"
    try:
        done = subprocess.run([tmux, "-V"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{tmux} does not run ({exc})"
    version = done.stdout.strip() or f"exit status {done.returncode}"
    inside = "inside a tmux session" if os.environ.get("TMUX") else "not inside a tmux session"
    return tmux, f"{version} ({tmux}; {inside})"


def _write_json(document: Any) -> None:
    # backslashreplace turns a lone surrogate (an undecodable byte in a file name) into a \\udcXX
    # escape, which is valid JSON, instead of failing or emitting invalid UTF-8.
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    _write_bytes(text.encode("utf-8", "backslashreplace"))


def _write_text(text: str) -> None:
    _write_bytes(text.encode("utf-8", "surrogateescape"))


def _write_bytes(data: bytes) -> None:
    # Bytes, not text: the locale's encoding must not change what the baseline looks like.
    stream: BinaryIO = sys.stdout.buffer
    stream.write(data)
    stream.flush()


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: {message}\n")
    return EXIT_USAGE

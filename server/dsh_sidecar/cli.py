"""The ``dsh-sidecar`` command: run the language server, or answer one question and exit.

``preview`` and ``scopes`` run the same engine a session uses (no server, no session store), so
what they print is what an agent would be given. ``serve`` hands over to ``dsh_sidecar.lsp``;
on the stdio transport stdout is the protocol channel, so nothing here writes to it for ``serve``
and logging is configured by the server (stderr or ``--log-file``).

Bad input (a missing directory or file, an unreadable settings file, an invalid setting) is one
line on stderr naming the problem and exit status 2, never a traceback. A usage error of a
subcommand shows that subcommand's usage, not the top-level one.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import dsh_sidecar
from dsh_sidecar.errors import DshError

# Each command imports what it uses inside its own function: ``--version`` and ``preview``
# must not pay for the session store, the wire mapping or explain's models (docs/benchmarks.md,
# CLI start-up; tests/unit/test_cli_imports.py checks the imported modules per command).
if TYPE_CHECKING:
    from dsh_sidecar.config import InstructionSettings, Settings
    from dsh_sidecar.sources.agent_instructions.baseline import BaselineLoad, ChainEntry
    from dsh_sidecar.sources.agent_instructions.usage import OffConvention

PROG = "dsh-sidecar"
EXIT_OK = 0
EXIT_UNHEALTHY = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 1  # what Python's own SIGPIPE recipe returns
# Kept equal to dsh_sidecar.lsp.rpc.framing.DEFAULT_MAX_BODY_BYTES (a test checks); not imported so
# that parsing the command line does not load the server.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MIN_MAX_MESSAGE_BYTES = 1024
# A settings tree is a few kilobytes; the cap keeps ``--settings /dev/zero`` (or a file named by
# mistake) from being read without end.
MAX_SETTINGS_FILE_BYTES = 1024 * 1024


class UsageError(Exception):
    """Bad command-line input; reported as ``dsh-sidecar: <message>`` with exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        # argparse exits for --help, --version and usage errors; return its status instead so
        # callers of main() (the console script, tests) see one way of ending.
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
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


class _SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser that reports its own leftover arguments.

    argparse hands a subcommand's unrecognized arguments back to the top-level parser, whose
    error then shows the top-level usage (``dsh-sidecar [-h] COMMAND ...``), which does not tell
    the user what ``preview`` accepts. Failing here shows ``usage: dsh-sidecar preview ...``.
    """

    # typeshed spells this method as three overloads; one signature that serves them all is
    # what argparse itself has.
    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Workspace instructions (AGENTS.md/CLAUDE.md) for editor AI agents.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {dsh_sidecar.__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_SubcommandParser)

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

    explain = sub.add_parser(
        "explain", help="what this sidecar and each agent load for FILE, and where limits cut"
    )
    explain.add_argument(
        "file", metavar="FILE", help="a file (it need not exist; its directory must)"
    )
    explain.add_argument(
        "--cwd", metavar="DIR", help="the session directory (default: FILE's project root)"
    )
    explain.add_argument("--json", action="store_true", help="machine-readable output")
    _settings_option(explain)
    explain.set_defaults(run=_cmd_explain)

    doctor = sub.add_parser("doctor", help="check the installation and the environment")
    _settings_option(doctor)
    doctor.set_defaults(run=_cmd_doctor)

    # Parsed by dsh_sidecar.hooks.main (the console script sends ``hook`` there directly); listed
    # here so ``dsh-sidecar --help`` names it and ``python -m dsh_sidecar hook`` works too.
    hook = sub.add_parser(
        "hook",
        help="answer one Claude Code, Codex or Gemini CLI hook event (JSON on stdin)",
        add_help=False,
        prefix_chars="\0",
    )
    hook.add_argument("rest", nargs=argparse.REMAINDER)
    hook.set_defaults(run=_cmd_hook)
    _hooks_parser(sub)

    sessions = sub.add_parser(
        "sessions",
        help="list the stored sessions: agent, directory, what each was told, what is pending",
    )
    sessions.add_argument(
        "--agent",
        choices=AGENT_CHOICES,
        metavar="AGENT",
        help="only this agent's sessions (%(choices)s)",
    )
    sessions.add_argument("--json", action="store_true", help="machine-readable output")
    _settings_option(sessions)
    sessions.set_defaults(run=_cmd_sessions)
    return parser


class _HookAgents:
    """The ids of the agents whose hooks the sidecar runs (dsh_sidecar/agents/registry.py), as
    argparse ``choices``: read only when an ``--agent`` is given or listed, so a command without
    one never imports the agents' records."""

    def _ids(self) -> tuple[str, ...]:
        from dsh_sidecar.agents.registry import hook_ids

        return hook_ids()

    def __contains__(self, agent: object) -> bool:
        return agent in self._ids()

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids())


AGENT_CHOICES = _HookAgents()


def _hooks_parser(sub: Any) -> None:
    hooks = sub.add_parser(
        "hooks", help="install, remove or show this sidecar's hooks in an agent's settings"
    )
    actions = hooks.add_subparsers(
        title="actions", metavar="ACTION", parser_class=_SubcommandParser
    )

    def hooks_usage(args: argparse.Namespace) -> int:
        hooks.print_help(sys.stderr)  # ``hooks`` without an action: its own help, not the top one
        return EXIT_USAGE

    hooks.set_defaults(run=hooks_usage)
    for action, text in (
        ("install", "add the hooks to the agent's settings file (merged; other entries kept)"),
        ("uninstall", "remove only this sidecar's hooks from the agent's settings file"),
        ("status", "show, per agent and scope, whether the hooks are installed"),
    ):
        parser = actions.add_parser(action, help=text)
        if action == "status":
            parser.add_argument(
                "--agent",
                choices=AGENT_CHOICES,
                metavar="AGENT",
                help="only this agent: %(choices)s (default: every agent)",
            )
        else:
            # A heading of its own: argparse lists every option under "options", which reads as
            # optional, and install or uninstall without an agent has nothing to change.
            parser.add_argument_group("required arguments").add_argument(
                "--agent",
                choices=AGENT_CHOICES,
                metavar="AGENT",
                required=True,
                help="the agent whose settings file to change: %(choices)s",
            )
            parser.add_argument(
                "--scope",
                choices=("project", "user"),
                default="project",
                help="the project's settings (default) or the user's",
            )
            parser.add_argument(
                "--shared",
                action="store_true",
                help="the project file the team shares, with dsh-sidecar from PATH"
                " (Claude Code; default: .claude/settings.local.json, this machine's)",
            )
        parser.add_argument(
            "--project",
            metavar="DIR",
            help="the project directory (default: the git repository you are in)",
        )
        # The option's name before --project; kept so that scripts written for it still work.
        parser.add_argument("--root", dest="project", metavar="DIR", help=argparse.SUPPRESS)
        parser.set_defaults(run=_cmd_hooks, action=action)


def _cmd_hooks(args: argparse.Namespace) -> int:
    from dsh_sidecar.config import os_home
    from dsh_sidecar.hooks import manage
    from dsh_sidecar.hooks.install import default_executable

    given = None if args.project is None else _existing_directory(args.project)
    cwd = _existing_directory(None)
    env, home = dict(os.environ), os_home()
    if args.action == "status":
        try:
            root: str | None = manage.find_project(given, cwd)[0]
        except manage.NoProjectError:
            root = None
        agents = tuple(AGENT_CHOICES) if args.agent is None else (args.agent,)
        report = manage.status_lines(agents, root, env, home)
    else:
        if args.shared and args.scope == "user":
            raise UsageError("--shared is for a project's files (--scope project)")
        try:
            root, how = manage.find_project(given, cwd)
            found: str | None = how if args.scope == "project" else None
        except manage.NoProjectError as exc:
            if args.scope == "project":
                raise UsageError(str(exc)) from exc
            root, found = cwd, None  # user scope: the directory only names a trust step
        if args.action == "install":
            executable = default_executable()
            report = manage.install_hooks(
                args.agent, args.scope, root, env, home, executable, shared=args.shared, found=found
            )
        else:
            report = manage.uninstall_hooks(
                args.agent, args.scope, root, env, home, shared=args.shared, found=found
            )
    lines = [part for line in report.lines for part in line.split("\n")]
    _write_text("".join(terminal_safe(line) + "\n" for line in lines))
    for warning in report.warnings:
        sys.stderr.write(f"{PROG}: warning: {terminal_safe(warning)}\n")
    for error in report.errors:
        sys.stderr.write(f"{PROG}: {terminal_safe(error)}\n")
    return EXIT_OK if report.ok else EXIT_USAGE


def _cmd_sessions(args: argparse.Namespace) -> int:
    import sqlite3

    from dsh_sidecar.sessions.listing import list_stored_sessions, session_lines
    from dsh_sidecar.sessions.spool import Spool

    settings = load_settings(args.settings)
    store = settings.store_path()
    spool = Spool.of_home(settings.instructions.home(os.environ))
    try:
        listed = list_stored_sessions(store, agent=args.agent, spool=spool)
    except (sqlite3.Error, OSError) as exc:
        raise UsageError(f"cannot read the session store {store}: {exc}") from exc
    if args.json:
        _write_json({"store": store, "sessions": [s.to_json() for s in listed or []]})
    elif listed is None:
        _write_text(f"no sessions: there is no session store at {terminal_safe(store)} yet\n")
    elif not listed:
        of = f" of {args.agent}" if args.agent else ""
        _write_text(f"no sessions{of} in {terminal_safe(store)}\n")
    else:
        lines = [terminal_safe(line) for item in listed for line in session_lines(item)]
        _write_text("".join(line + "\n" for line in lines))
    return EXIT_OK


def _cmd_hook(args: argparse.Namespace) -> int:
    from dsh_sidecar.hooks.main import main as hook_main

    return hook_main(args.rest)


def _settings_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--settings",
        metavar="FILE.json",
        help="settings tree as in initializationOptions (docs/configuration.md); defaults otherwise",
    )


# --- commands ---------------------------------------------------------------------------------


def _cmd_preview(args: argparse.Namespace) -> int:
    from dsh_sidecar.fs import LOCAL_FS
    from dsh_sidecar.sources.agent_instructions.baseline import load_baseline

    settings = load_settings(args.settings).instructions
    directory = _existing_directory(args.directory)
    load = load_baseline(directory, settings, LOCAL_FS, dsh_home=settings.home())
    if args.json:
        _write_json(preview_json(load, conventions_here(settings, load.cwd, imports=False)))
    else:
        # The notes go first, so a terminal shows them above the text.
        notes = "".join(f"{PROG}: {note}\n" for note in preview_notes(load, settings))
        notes += "".join(f"{PROG}: {note}\n" for note in unread_notes(load.cwd, settings))
        _write_bytes(notes.encode("utf-8", "surrogateescape"), sys.stderr.buffer)
        # The baseline bytes and one newline, so the next prompt starts on its own line; the
        # baseline itself (what the budget counted) is ``--json``'s ``text``. Nothing to send
        # prints nothing at all.
        text = load.text + "\n" if load.text else ""
        _write_bytes(text.encode("utf-8", "surrogateescape"))
    return EXIT_OK


def preview_notes(load: BaselineLoad, settings: InstructionSettings) -> list[str]:
    """What ``preview`` says on stderr: every file left out of the baseline or cut, and why.

    An empty output must never look like "nothing applies" when files were found but skipped
    (all oversized, say), nor a partial baseline like the whole chain.
    """
    from dsh_sidecar.sources.agent_instructions.baseline import INCLUDED, TRUNCATED

    if not settings.active:
        return [f"no baseline: {_inactive_reason(settings)}"]
    if not load.entries:
        return [
            f"no workspace instruction files apply to {terminal_safe(load.cwd)}"
            f" (project root {terminal_safe(load.project_root)},"
            f" DSH_HOME {terminal_safe(settings.home())})"
        ]
    notes = []
    left_out = [e for e in load.entries if e.state != INCLUDED]
    if not load.text:
        total = len(load.entries)
        every = (
            "the only instruction file was" if total == 1 else f"all {total} instruction files were"
        )
        notes.append(f"no baseline for {terminal_safe(load.cwd)}: {every} skipped")
    for entry in left_out:
        verb = "cut" if entry.state == TRUNCATED else "skipped"
        path, why = entry.candidate.display_path, entry.reason or entry.state
        notes.append(f"{verb} {terminal_safe(path)}: {terminal_safe(why)}")
    return notes


def unread_notes(directory: str, settings: InstructionSettings) -> list[str]:
    """The repository's instruction files that the current settings do not read, each with what
    would read it: so an empty or thin baseline never looks like all there is."""
    found = [c for c in conventions_here(settings, directory, imports=False) if c.in_project]
    return [f"not read: {terminal_safe(c.describe())}" for c in found]


def _inactive_reason(settings: InstructionSettings) -> str:
    if not settings.enabled:
        return "instructions.enabled is false"
    shown = (
        int(settings.max_bytes) if float(settings.max_bytes).is_integer() else settings.max_bytes
    )
    return f"instructions.maxBytes is {shown}; a budget that is not a positive number turns the source off"


def _cmd_scopes(args: argparse.Namespace) -> int:
    from dsh_sidecar.fs import LOCAL_FS
    from dsh_sidecar.sources.agent_instructions.baseline import load_document_chain

    settings = load_settings(args.settings).instructions
    path = os.path.abspath(args.file)
    if not os.path.exists(path):
        raise UsageError(f"{args.file}: no such file or directory")
    is_directory = os.path.isdir(path)
    directory = path if is_directory else os.path.dirname(path)
    load = load_document_chain(
        directory,
        settings,
        LOCAL_FS,
        dsh_home=settings.home(),
        file_path=None if is_directory else path,
    )
    if args.json:
        _write_json(scopes_json(load, conventions_here(settings, load.cwd, imports=False)))
    else:
        _write_text("".join(_entry_lines(e) for e in load.entries))
        notes = "".join(f"{PROG}: {note}\n" for note in unread_notes(load.cwd, settings))
        _write_bytes(notes.encode("utf-8", "surrogateescape"), sys.stderr.buffer)
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace) -> int:
    from dsh_sidecar.explain import explain_file
    from dsh_sidecar.explain.text import render_text
    from dsh_sidecar.fs import LOCAL_FS

    settings = load_settings(args.settings).instructions
    path = os.path.abspath(args.file)
    if os.path.isdir(path):
        raise UsageError(
            f"{args.file}: is a directory (explain takes a file; scopes takes a directory)"
        )
    if not os.path.isdir(os.path.dirname(path)):
        raise UsageError(f"{args.file}: no such directory {os.path.dirname(path)}")
    cwd = None if args.cwd is None else _existing_directory(args.cwd)
    explained = explain_file(path, settings, LOCAL_FS, dsh_home=settings.home(), cwd=cwd)
    if args.json:
        _write_json(explained.to_json())
    else:
        _write_text(render_text(explained))
    return EXIT_OK


def _cmd_doctor(args: argparse.Namespace) -> int:
    import platform
    from importlib import metadata
    from importlib.util import find_spec

    from dsh_sidecar.config import describe_dsh_home
    from dsh_sidecar.sessions.store import describe_schema

    settings = load_settings(args.settings)
    rows: list[tuple[str, str]] = [
        (
            PROG,
            f"{dsh_sidecar.__version__} ({os.path.dirname(os.path.abspath(dsh_sidecar.__file__))})",
        ),
        ("python", f"{platform.python_version()} ({sys.executable})"),
    ]
    problems: list[str] = []
    for dist in ("pygls", "lsprotocol"):
        try:
            version = metadata.version(dist)
            # Located, not imported: importing pygls and lsprotocol costs more than the rest of
            # the command (docs/benchmarks.md, CLI start-up); ``serve`` is what imports them.
            if find_spec(dist) is None:
                raise ImportError(f"no module named {dist!r}")
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
    schema_ok, schema_detail = describe_schema(store)
    rows.append(("schema", schema_detail))
    if not schema_ok:
        problems.append(schema_detail)
    tmux, tmux_detail = _tmux_status()
    rows.append(("tmux", tmux_detail))
    conventions = conventions_here(settings.instructions)
    rows.extend(
        ("convention", terminal_safe(f"off, but used here: {c.describe()}")) for c in conventions
    )
    # Another agent's convention in the repository is information (its line names the setting
    # that would read it), not a fault of this installation: the status stays ok.
    rows.extend(("hooks", terminal_safe(h)) for h in hooks_here(settings.instructions))
    # A hook whose program is gone gives the agent nothing (the installed guard keeps it quiet),
    # so it is a fault to fix: each such row says which uninstall removes it.
    dead = hooks_here(settings.instructions, dead=True)
    rows.extend(("hooks", terminal_safe(d)) for d in dead)
    if dead:
        problems.append("a hook runs a dsh-sidecar that is gone")
    rows.append(("spool", terminal_safe(spool_row(store, settings.instructions.home(os.environ)))))
    from dsh_sidecar.hooks.resident_status import describe as describe_resident

    rows.append(("resident", terminal_safe(describe_resident(os.environ))))
    if tmux is None and settings.tmux_context.enabled:
        problems.append("tmuxContext is enabled but tmux is not available")
    rows.append(("status", "ok" if not problems else "; ".join(problems)))
    width = max(len(name) for name, _ in rows)
    _write_text("".join(f"{name:<{width}}  {value}\n" for name, value in rows))
    return EXIT_OK if not problems else EXIT_UNHEALTHY


def conventions_here(
    settings: InstructionSettings, directory: str | None = None, *, imports: bool = True
) -> list[OffConvention]:
    """Conventions of other agents that the project of the current directory (and the user's
    home) uses while their setting is off: each says which setting reads it."""
    from dsh_sidecar.config import os_home
    from dsh_sidecar.fs import LOCAL_FS
    from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
    from dsh_sidecar.sources.agent_instructions.discovery import find_project_root
    from dsh_sidecar.sources.agent_instructions.usage import project_conventions

    if directory is None:
        try:
            directory = os.getcwd()
        except FileNotFoundError:
            return []
    home = os_home()
    root = find_project_root(directory, settings.project_root_markers, LOCAL_FS)
    found = project_conventions(
        LOCAL_FS.resolve(directory),
        root,
        settings,
        LOCAL_FS,
        home,
        confinement_once(root, settings, LOCAL_FS, home),
        imports=imports,
    )
    return found


def hooks_here(settings: InstructionSettings, *, dead: bool = False) -> list[str]:
    """Per agent: where this sidecar's hooks are installed for the current directory's project
    (and the user), and whether that agent would run them here; ``dead``: the settings files
    whose entries of ours run a program that no longer exists."""
    from dsh_sidecar.config import os_home
    from dsh_sidecar.fs import LOCAL_FS
    from dsh_sidecar.hooks.manage import dead_hook_rows, doctor_rows
    from dsh_sidecar.sources.agent_instructions.discovery import find_project_root

    try:
        directory = os.getcwd()
    except FileNotFoundError:
        return []
    root = find_project_root(directory, settings.project_root_markers, LOCAL_FS)
    rows = dead_hook_rows if dead else doctor_rows
    return rows(root, dict(os.environ), os_home())


def spool_row(store: str, dsh_home: str) -> str:
    """The touches agents' hooks kept while the store was busy, per session: each session's next
    hook event projects them. Informational; it never changes doctor's status."""
    import sqlite3

    from dsh_sidecar.sessions.listing import describe_waiting, waiting_touches
    from dsh_sidecar.sessions.spool import Spool

    try:
        waiting, unowned = waiting_touches(store, Spool.of_home(dsh_home))
    except (sqlite3.Error, OSError) as exc:
        return f"unknown (cannot read the session store: {exc})"
    parts = [f"{describe_waiting(len(p))} for {sid}" for sid, p in waiting.items()]
    if unowned:
        parts.append(f"{describe_waiting(len(unowned))} for sessions not in the store yet")
    return ", ".join(parts) or "no touches waiting"


def _cmd_serve(args: argparse.Namespace) -> int:
    import signal

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
        from dsh_sidecar.lsp.main import serve
        from dsh_sidecar.lsp.rpc.serve import ServeError, StoppedBySignal

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
    """Defaults, or the settings tree (docs/configuration.md) read from ``path``."""
    import json

    from dsh_sidecar.config import Settings, parse_settings

    if path is None:
        return Settings()
    try:
        with open(path, "rb") as handle:
            # One byte past the cap tells an over-sized file (or /dev/zero) from one at it.
            data = _read_at_most(handle, MAX_SETTINGS_FILE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--settings {path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_SETTINGS_FILE_BYTES:
        raise UsageError(
            f"--settings {path}: larger than {MAX_SETTINGS_FILE_BYTES} bytes"
            " (a settings file is a small JSON object)"
        )
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"--settings {path}: not UTF-8 ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--settings {path}: invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise UsageError(f"--settings {path}: invalid JSON: nested too deeply") from exc
    return parse_settings(raw)


def _read_at_most(handle: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes: a device or pipe that never ends is read no further."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = handle.read(min(left, 65536))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


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


def preview_json(load: BaselineLoad, not_read: Sequence[OffConvention] = ()) -> dict[str, Any]:
    """The ``--json`` document: exactly the ``dsh/context/preview`` result."""
    from dsh_sidecar.protocol import mapping
    from dsh_sidecar.protocol.encode import to_json

    document: dict[str, Any] = to_json(mapping.preview_result(load, not_read))
    return document


def scopes_json(load: BaselineLoad, not_read: Sequence[OffConvention] = ()) -> dict[str, Any]:
    """``scopes --json``: the ``dsh/scopes`` result without ``sessions`` (no live sessions here)."""
    from dsh_sidecar.protocol import mapping
    from dsh_sidecar.protocol.encode import to_json

    document: dict[str, Any] = {
        "projectRoot": load.project_root,
        "directory": load.cwd,
        "files": to_json(mapping.scope_files(load)),
    }
    found = mapping.not_read_files(not_read)
    if found is not None:
        document["notRead"] = to_json(found)
    return document


def _entry_line(entry: ChainEntry) -> str:
    """One line per file, whatever its name: a line break in a name or target is escaped."""
    size = "-" if entry.bytes is None else str(entry.bytes)
    line = f"{entry.state:<10} {size:>8}  {terminal_safe(entry.candidate.display_path)}"
    return f"{line}  {terminal_safe(entry.reason)}" if entry.reason else line


def _entry_lines(entry: ChainEntry) -> str:
    """The file's line, then one indented line per import (instructions.imports) and, for a
    rule file, what it applies to."""
    lines = [_entry_line(entry)]
    if entry.applies is not None:
        lines.append(f"{'':>20}  applies to {terminal_safe(entry.applies.describe())}")
    for record in entry.imports:
        size = "-" if record.bytes is None else str(record.bytes)
        shown = "  " * record.depth + "@" + terminal_safe(record.display)
        line = f"{record.state:<10} {size:>8}  {shown}"
        if record.reason:
            line += f"  {terminal_safe(record.reason)}"
        lines.append(line)
    return "".join(line + "\n" for line in lines)


# Bidirectional overrides and isolates: they reorder what a terminal shows ("Trojan source").
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def terminal_safe(text: str) -> str:
    """``text`` on one terminal line, with control characters escaped.

    File and directory names come from the repository, which may be hostile: a newline in a
    name would forge a line of the listing, an escape sequence would drive the terminal. Line
    breaks are escaped as the templates escape them (``\\n``); other controls as ``\\x1b``.
    """
    import unicodedata

    from dsh_sidecar.sources.agent_instructions.escaping import one_line

    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in _BIDI_CONTROLS
        else c
        for c in one_line(text)
    )


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
    import shutil
    import subprocess

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
    import json

    # backslashreplace turns a lone surrogate (an undecodable byte in a file name) into a \\udcXX
    # escape, which is valid JSON, instead of failing or emitting invalid UTF-8.
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    _write_bytes(text.encode("utf-8", "backslashreplace"))


def _write_text(text: str) -> None:
    _write_bytes(text.encode("utf-8", "surrogateescape"))


def _write_bytes(data: bytes, stream: BinaryIO | None = None) -> None:
    # Bytes, not text: the locale's encoding must not change what the baseline looks like.
    if stream is None:
        stream = sys.stdout.buffer
    else:
        sys.stderr.flush()  # keep the order of anything already written through sys.stderr
    stream.write(data)
    stream.flush()


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: {message}\n")
    return EXIT_USAGE

"""The standing adversarial suite (issue 24 item 6): hostile repository trees (``hostile_repo``)
against every entry point that reads repository text, over the real server and the real CLI.

Each entry point is checked three ways:

- **linear growth**: the same requests over a tree of scale 1 and of scale 4 (every attack four
  times as large); the slower costs less than ten times the faster (linear: about 4 at most,
  a quadratic parser: 16 or far more). Wall times of whole requests include fixed costs, which
  only lower the ratio; a bad ratio is measured again before it counts;
- **nothing read outside the boundary**: the secret beside the project (linked to by
  ``CLAUDE.md`` and rule files, imported by ``..`` and absolute paths) appears in no response,
  notification or CLI output;
- **no crash**: no traceback in the server's log, every request answered.

The agent hooks (``dsh-sidecar hook``, one process per event as the agents run it) get the same
three checks over a tree with FIFOs added (``add_fifos``), each event's exit status 0 and its
output within the agent's cap.

Responsiveness: while a request (``dsh/scopes`` with imports on) does seconds of linear work
over a chain of large files, a
cheap request is answered within 100 ms. Stop signals: SIGTERM in the middle of that request
ends the process within a second. One server round runs at scale 16 every time; long variants
(scales 2 and 8, a 32 MB chain) run with ``DSH_LONG_TESTS=1``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.hostile_repo import SECRET, add_fifos, big_text_tree, hostile_tree, settings
from tests.support.reliability_rpc import HANG_GUARD, Server, file_uri, server_env

LONG = os.environ.get("DSH_LONG_TESTS") == "1"
SCALES = (1, 4) if not LONG else (2, 8)


# A chain of 1 MB files read whole, imports scanned: seconds of linear work for one dsh/scopes.
BIG_OPTIONS = {
    "instructions": {"maxSourceBytes": 4_000_000, "maxBytes": 100_000_000, "imports": True}
}


def start(tmp: Path, options: dict[str, Any]) -> Server:
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    server = Server(server_env(str(home), fsync=False), stderr=str(tmp / "stderr.log"))
    server.initialize({**options, "store": {"path": str(tmp / "store.sqlite3")}})
    return server


def lsp_round(server: Server, tree: Any) -> list[Any]:
    """Every LSP entry point once over ``tree``: touch, scopes, hover, explain, preview."""
    deep, agents = str(tree.deep_file), str(tree.agents_md)
    session = server.request("dsh/session/open", {"cwd": str(tree.project)})["session"]["id"]
    for path in (agents, deep, str(tree.project / ".github/instructions/huge.instructions.md")):
        server.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": file_uri(path),
                    "languageId": "markdown",
                    "version": 1,
                    "text": Path(path).read_text(errors="replace"),
                }
            },
        )
    answers = [
        server.request("dsh/scopes", {"uri": file_uri(deep)}),
        server.request("dsh/scopes", {"uri": file_uri(agents)}),
        server.request(
            "textDocument/hover",
            {"textDocument": {"uri": file_uri(agents)}, "position": {"line": 0, "character": 0}},
        ),
        *(
            server.request(
                "textDocument/hover",
                {
                    "textDocument": {"uri": file_uri(str(tree.project / rule))},
                    "position": {"line": 0, "character": 0},
                },
            )
            for rule in (
                ".cursor/rules/stars.mdc",
                ".github/instructions/huge.instructions.md",
                ".cursor/rules/many/r499.mdc",
            )
        ),
        server.request("dsh/explain", {"uri": file_uri(deep)}),
        server.request("dsh/context/preview", {"cwd": str(tree.deep_file.parent)}),
        server.request("dsh/context/pending", {"sessionId": session}),
    ]
    server.request("dsh/session/close", {"sessionId": session})
    return answers


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def assert_grows_linearly(run: Callable[[int], float]) -> None:
    """``run(scale)`` gives seconds; scale 4x must cost under 10x (measured twice if not)."""
    small, large = SCALES
    ratios = []
    for _ in range(2):
        ratio = run(large) / max(run(small), 1e-3)
        ratios.append(ratio)
        if ratio < 10:
            return
    raise AssertionError(f"4x the attack cost {ratios} times as much")


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Any]:
    return {
        scale: hostile_tree(tmp_path_factory.mktemp(f"hostile{scale}"), scale) for scale in SCALES
    }


def test_lsp_entry_points_answer_in_linear_time_and_never_quote_outside(
    trees: dict[int, Any], tmp_path: Path
) -> None:
    servers: dict[int, Server] = {}
    outputs: list[str] = []
    try:

        def run(scale: int) -> float:
            server = servers.get(scale)
            if server is None:
                server = servers[scale] = start(tmp_path / f"s{scale}", settings())
            # A fresh tree state each round would need a fresh server: caches keyed by file
            # versions make a second round cheaper, so each round touches the attack files.
            for path in (trees[scale].agents_md,):
                os.utime(path, None)
            seconds, answers = timed(lambda: lsp_round(server, trees[scale]))
            outputs.append(json.dumps(answers))
            return seconds

        for scale in SCALES:
            (tmp_path / f"s{scale}").mkdir(exist_ok=True)
        assert_grows_linearly(run)
        for server in servers.values():
            assert server.proc.poll() is None
            outputs.append(json.dumps(server.notifications))
            assert "Traceback" not in server.stderr_text()
        assert_no_secret(*outputs)
        # The attacks were seen, and the cuts said: the huge rule's glob limit, the rule limit.
        joined = "".join(outputs)
        assert "only the first 100 are used" in joined
        assert "more than 500 rule files" in joined
        assert "links outside the project" in joined
    finally:
        for server in servers.values():
            server.close()


CLI = [sys.executable, "-m", "dsh_sidecar"]


def cli(args: list[str], home: Path, cwd: Path) -> str:
    env = {**os.environ, "DSH_HOME": str(home), "HOME": str(home)}
    done = subprocess.run(
        [*CLI, *args], capture_output=True, timeout=HANG_GUARD, env=env, check=False, cwd=cwd
    )
    assert done.returncode in (0, 1, 2), done.stderr.decode(errors="replace")
    err = done.stderr.decode(errors="replace")
    assert "Traceback" not in err
    return done.stdout.decode(errors="replace") + err


@pytest.mark.parametrize("command", ["preview", "scopes", "explain", "doctor"])
def test_cli_commands_answer_in_linear_time_and_never_quote_outside(
    trees: dict[int, Any], tmp_path: Path, command: str
) -> None:
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(settings()))
    home = tmp_path / "home"
    home.mkdir()
    outputs: list[str] = []

    def run(scale: int) -> float:
        tree = trees[scale]
        target = {
            "preview": [str(tree.deep_file.parent)],
            "scopes": [str(tree.deep_file)],
            "explain": [str(tree.deep_file)],
            "doctor": [],
        }[command]
        args = [command, *(["--json"] if command != "doctor" else []), "--settings"]
        args.append(str(settings_file))
        # doctor looks at the directory it runs in: the bottom of the hostile chain.
        seconds, out = timed(lambda: cli([*args, *target], home, tree.deep_file.parent))
        outputs.append(out)
        return seconds

    assert_grows_linearly(run)
    assert_no_secret(*outputs)


HOOK = [*CLI, "hook"]
HOOK_OUTPUT_CAP = 10_000  # hooks/output.py INLINE_CAP: what Claude Code and Codex keep inline
GEMINI_OUTPUT_BOUND = 8 * 65_536  # no cap of its own: a few messages, each within maxBytes


def hook_events(tree: Any, extra: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    """One session per agent whose touches hit every attack: the deep chain, the root file full
    of attacks, the huge rule, files outside the project and links out, FIFOs."""
    project, outside = tree.project, tree.outside
    touched = [
        tree.deep_file,
        tree.agents_md,
        project / ".github/instructions/huge.instructions.md",
        project / "CLAUDE.md",
        project / ".claude/rules/leak.md",
        outside / "secret.md",
        outside / "pipe.md",
        project / "../outside/also.md",
        *extra,
    ]
    base = {"session_id": "hostile", "cwd": str(project)}
    events: list[tuple[str, dict[str, Any]]] = [
        ("claude", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        ("claude", {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go @AGENTS.md"}),
    ]
    for n, path in enumerate(touched):
        read = {"tool_name": "Read", "tool_input": {"file_path": str(path)}}
        events.append(
            ("claude", {**base, "hook_event_name": "PostToolUse", **read, "tool_use_id": f"r{n}"})
        )
    events += [
        (
            "claude",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": str(tree.deep_file)},
                "tool_use_id": "e1",
            },
        ),
        ("claude", {**base, "hook_event_name": "SessionStart", "source": "compact"}),
        ("codex", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        (
            "codex",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {
                    "command": "cat " + " ".join(f"'{p}'" for p in touched if "also" not in str(p))
                },
                "tool_use_id": "c1",
            },
        ),
        ("gemini", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        *(
            (
                "gemini",
                {
                    **base,
                    "hook_event_name": "AfterTool",
                    "tool_name": "read_file",
                    "tool_input": {"file_path": str(path)},
                    "timestamp": f"t{n}",
                },
            )
            for n, path in enumerate([tree.deep_file, outside / "secret.md", *extra])
        ),
    ]
    return events


def run_hook(agent: str, event: dict[str, Any], home: Path, settings_file: Path) -> str:
    env = {**os.environ, "DSH_HOME": str(home), "HOME": str(home)}
    done = subprocess.run(
        [*HOOK, "--agent", agent, "--settings", str(settings_file)],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=HANG_GUARD,
        env=env,
        check=False,
    )
    assert done.returncode == 0, (agent, event, done.stderr)
    err = done.stderr.decode(errors="replace")
    assert "Traceback" not in err
    out = done.stdout.decode()
    if out:
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        bound = HOOK_OUTPUT_CAP if agent != "gemini" else GEMINI_OUTPUT_BOUND
        assert len(context) <= bound, (agent, event["hook_event_name"], len(context))
    return out + err


def test_agent_hooks_answer_in_linear_time_and_never_quote_outside(
    trees: dict[int, Any], tmp_path: Path
) -> None:
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(settings()))
    extra = {scale: add_fifos(tree) for scale, tree in trees.items()}
    outputs: list[str] = []
    rounds = iter(range(1000))

    def run(scale: int) -> float:
        home = tmp_path / f"home{next(rounds)}"  # a fresh store: nothing answered yet
        home.mkdir()
        events = hook_events(trees[scale], extra[scale])
        seconds, outs = timed(lambda: [run_hook(a, e, home, settings_file) for a, e in events])
        outputs.extend(outs)
        log = home / "log" / "hooks.log"
        if log.exists():
            outputs.append(log.read_text(errors="replace"))
        return seconds

    assert_grows_linearly(run)
    assert_no_secret(*outputs)
    joined = "".join(outputs)
    # The attacks were read, inside the boundary: the bottom of the deep chain, the root file.
    assert "level 11" in joined and "Root rules" in joined


def test_a_cheap_request_is_answered_within_100_ms_during_a_big_one(tmp_path: Path) -> None:
    """The big request (``dsh/scopes`` over a chain of large files) keeps a filesystem worker busy
    for seconds of linear parsing; ``dsh/session/list`` goes through the store pool and the
    event loop, which must still get their turn. Measured from this client, which adds its own
    pipe and thread hops, so the best of several pings counts; a server frozen by one long call
    (the old backtracking regexes held the interpreter for tens of seconds) answers none of them
    in time. The big request must still be running when the pings are answered, or the check
    would prove nothing."""
    deep = big_text_tree(tmp_path, depth=16 if not LONG else 32, megabytes=1.0)
    server = start(tmp_path, BIG_OPTIONS)
    try:
        server.request("dsh/session/list", {})  # warm
        msg_id, waiting = server.start("dsh/scopes", {"uri": file_uri(str(deep))})
        done = threading.Event()

        def finish() -> None:
            server.wait(msg_id, waiting, HANG_GUARD)
            done.set()

        finisher = threading.Thread(target=finish, daemon=True)
        finisher.start()
        time.sleep(0.3)  # let the preview get going
        latencies = []
        for _ in range(8):
            seconds, _ = timed(lambda: server.request("dsh/session/list", {}, timeout=30))
            latencies.append(seconds)
            time.sleep(0.05)
        still_running = not done.is_set()
        finisher.join(HANG_GUARD)
        assert done.is_set()
        assert still_running, "the big request ended before the pings: make it bigger"
        assert min(latencies) < 0.1, latencies
        assert max(latencies) < 2, latencies  # and none was held up for long
        assert "Traceback" not in server.stderr_text()
    finally:
        server.close()


def test_sigterm_ends_the_server_within_a_second_in_the_middle_of_a_big_request(
    tmp_path: Path,
) -> None:
    """SIGTERM while a worker parses a chain of large files: the server does not wait for that
    read-only work to end. One second is the issue's bound; the request itself runs for seconds
    (it is checked to be still unanswered when the signal goes), and the server used to finish
    it (and, with the backtracking regexes, could hold the interpreter for minutes) first."""
    deep = big_text_tree(tmp_path, depth=16 if not LONG else 32, megabytes=1.0)
    server = start(tmp_path, BIG_OPTIONS)
    try:
        _, waiting = server.start("dsh/scopes", {"uri": file_uri(str(deep))})
        time.sleep(0.5)
        assert waiting.empty(), "the preview ended before the signal: make it bigger"
        server.proc.send_signal(signal.SIGTERM)
        seconds, status = timed(lambda: server.proc.wait(timeout=HANG_GUARD))
        assert status == 128 + signal.SIGTERM
        assert seconds < 1.0, seconds
        assert "Traceback" not in server.stderr_text()
    finally:
        if server.proc.poll() is None:
            server.kill()


@pytest.mark.slow
def test_the_hostile_tree_at_scale_16_through_the_server(tmp_path: Path) -> None:
    """Sixteen times the attack in one tree, always run (about 8 s): the long variants make the
    other checks bigger, this one is the size that a skipped test would otherwise leave unseen."""
    tree = hostile_tree(tmp_path / "t", 16)
    (tmp_path / "s").mkdir()
    server = start(tmp_path / "s", settings())
    try:
        answers = lsp_round(server, tree)
        assert_no_secret(json.dumps(answers), json.dumps(server.notifications))
        assert "Traceback" not in server.stderr_text()
    finally:
        server.close()

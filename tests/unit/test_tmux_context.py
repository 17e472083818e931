"""tmux-context: the exact command, parsing, rendering, scheduling, and a real tmux server.

The real-server tests start tmux on a private socket (``-S <tmp>/sock -f /dev/null``), run a
small Python script INSIDE a pane so the pane owns that process's tty, and kill only that server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dsh_sidecar.config import TmuxContextSettings
from dsh_sidecar.model import Event
from dsh_sidecar.sources.tmux_context import (
    TmuxLocation,
    TmuxQueryError,
    parse_tmux_output,
    query_tmux,
    render_tmux_reading,
    tmux_command,
    tmux_reading,
)

SERVER = Path(__file__).resolve().parents[2] / "server"
ON = TmuxContextSettings(enabled=True)

UPSTREAM_LINE = (
    r"0\t1\tnode\t2\t%90\t1\t0\t"
    r"d517,270x71,0,0{135x71,0,0,87,134x71,136,0[134x35,136,0,90,134x35,136,36,93]}"
)
UPSTREAM_TEXT = (
    "tmux location (turn 1):\n"
    'session 0, window 1 "node", pane 2 %90\n'
    "window active=1, pane active=0, "
    "layout d517,270x71,0,0{135x71,0,0,87,134x71,136,0[134x35,136,0,90,134x35,136,36,93]}"
)


def loc(**overrides: str) -> TmuxLocation:
    fields = dict(
        session_name="work",
        window_index="3",
        window_name="ed",
        pane_index="0",
        pane_id="%5",
        window_active="1",
        pane_active="1",
        window_layout="aafd,120x40,0,0,0",
    )
    fields.update(overrides)
    return TmuxLocation(**fields)


# --- command, parsing, rendering ------------------------------------------------------------


def test_exact_command() -> None:
    expected = "\n".join(
        [
            '[ -n "$TMUX_PANE" ] || exit 1',
            "self_tty=$(ps -o tty= -p 4242 | tr -d ' ')",
            '[ -n "$self_tty" ] || exit 1',
            "pane_tty=$(tmux display-message -t \"$TMUX_PANE\" -p '#{pane_tty}') || exit 1",
            '[ "$pane_tty" = "/dev/$self_tty" ] || exit 1',
            r"""exec tmux display-message -t "$TMUX_PANE" -p '#{session_name}\t#{window_index}\t#{window_name}\t#{pane_index}\t#{pane_id}\t#{window_active}\t#{pane_active}\t#{window_layout}'""",
        ]
    )
    assert tmux_command(4242) == expected
    assert len(tmux_command(1).split("\n")) == 6


def test_upstream_golden() -> None:
    location = parse_tmux_output(UPSTREAM_LINE + "\n")
    assert location is not None
    assert render_tmux_reading(1, location) == UPSTREAM_TEXT


def test_computed_window_name_golden() -> None:
    text = render_tmux_reading(7, loc(window_name='ed "x"\\y 中'))
    assert text.split("\n") == [
        "tmux location (turn 7):",
        'session work, window 3 "ed \\"x\\"\\\\y 中", pane 0 %5',
        "window active=1, pane active=1, layout aafd,120x40,0,0,0",
    ]


def test_window_name_control_characters_are_json_escaped() -> None:
    text = render_tmux_reading(2, loc(window_name="a\tb\x01\u2028"))
    assert 'window 3 "a\\tb\\u0001\u2028", pane' in text


@pytest.mark.parametrize(
    "stdout",
    [
        "",
        r"a\tb\tc\td\te\tf\tg",  # 7 fields
        r"a\tb\tc\td\te\tf\tg\th\ti",  # 9 fields
        r"s\t0\tname\\tx\t0\t%1\t1\t1\tlayout",  # a window name holding a literal \t
        r"s\t0\tname\t0\t\t1\t1\tlayout",  # empty pane id
        "s\t0\tname\t0\t%1\t1\t1\tlayout",  # real tabs are not the separator
    ],
)
def test_malformed_output_is_nothing(stdout: str) -> None:
    assert parse_tmux_output(stdout) is None


def test_only_the_first_line_counts_and_fields_are_not_trimmed() -> None:
    got = parse_tmux_output(r" s \t\t\t\t%1\t\t\t" + "\nsecond line")
    assert got == TmuxLocation(" s ", "", "", "", "%1", "", "", "")


# --- scheduling -----------------------------------------------------------------------------


def reading_event(seq: int, time_ms: int, text: str, op: Any = "append") -> Event:
    data = {
        "id": f"m{seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {
            "kind": "plugin",
            "plugin": "tmux-context",
            "form": "snapshot",
            "sections": [{"name": "tmux-context", "text": text}],
        },
    }
    return Event(seq=seq, type="user/message", time=time_ms, data=data, surface_op=op)


class Calls:
    def __init__(self, result: TmuxLocation | None = None, error: BaseException | None = None):
        self.count = 0
        self.result = result
        self.error = error
        self.warnings: list[str] = []

    def query(self) -> TmuxLocation | None:
        self.count += 1
        if self.error is not None:
            raise self.error
        return self.result

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def run(calls: Calls, events: list[Event] | None = None, **kw: Any) -> Any:
    kw.setdefault("turn", 1)
    kw.setdefault("step", 1)
    kw.setdefault("now_ms", 10_000)
    kw.setdefault("settings", ON)
    return tmux_reading(events=events or [], query=calls.query, warn=calls.warn, **kw)


def test_first_reading_has_the_exact_source() -> None:
    calls = Calls(parse_tmux_output(UPSTREAM_LINE))
    message = run(calls)
    assert message is not None and calls.count == 1
    assert message.role == "user"
    assert message.content == ({"type": "text", "text": UPSTREAM_TEXT},)
    assert message.source == {
        "kind": "plugin",
        "plugin": "tmux-context",
        "form": "snapshot",
        "sections": [{"name": "tmux-context", "text": UPSTREAM_TEXT}],
    }


def test_only_step_one_queries() -> None:
    calls = Calls(loc())
    assert run(calls, step=2) is None
    assert calls.count == 0


def test_disabled_never_queries() -> None:
    calls = Calls(loc())
    assert run(calls, settings=TmuxContextSettings(enabled=False)) is None
    assert calls.count == 0


def test_unchanged_state_is_suppressed_even_in_a_new_turn() -> None:
    previous = reading_event(0, 1_000, render_tmux_reading(1, loc()))
    calls = Calls(loc())
    assert run(calls, [previous], turn=5) is None
    assert calls.count == 1  # an unchanged location still costs a query
    changed = Calls(loc(pane_active="0"))
    message = run(changed, [previous], turn=5)
    assert message is not None
    assert message.text.startswith("tmux location (turn 5):\n")


def test_shadowed_latest_reading_counts() -> None:
    previous = reading_event(0, 1_000, render_tmux_reading(1, loc()), op=None)
    assert run(Calls(loc()), [previous]) is None


def test_latest_reading_with_non_text_first_block_is_never_injected() -> None:
    older = reading_event(0, 1_000, render_tmux_reading(1, loc()))
    odd = reading_event(1, 2_000, "")
    odd.data["content"] = [{"type": "image", "data": "x"}]
    calls = Calls(loc())
    assert run(calls, [older, odd]) is not None  # older readings are not consulted


def test_interval_rule() -> None:
    settings = TmuxContextSettings(enabled=True, refresh_interval_ms=1_000)
    previous = [reading_event(0, 10_000, render_tmux_reading(1, loc(pane_id="%1")))]
    within = Calls(loc())
    assert run(within, previous, now_ms=10_999, settings=settings) is None
    assert within.count == 0  # no query inside the interval
    at = Calls(loc())
    assert run(at, previous, now_ms=11_000, settings=settings) is not None
    backward = Calls(loc())
    assert run(backward, previous, now_ms=9_999, settings=settings) is not None


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (TmuxQueryError("timed out after 2s"), "timed out after 2s"),
        (RuntimeError("boom"), "boom"),
        (OSError(), "OSError"),
    ],
)
def test_query_failure_is_a_warning(error: Exception, shown: str) -> None:
    calls = Calls(error=error)
    assert run(calls) is None
    assert calls.warnings == [
        f"tmux location query failed: {shown}; injecting no location this turn"
    ]


def test_no_location_is_silent() -> None:
    calls = Calls(None)
    assert run(calls) is None
    assert calls.warnings == []


# --- subprocess behaviour without tmux ------------------------------------------------------


def test_not_in_a_pane_is_nothing() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    assert query_tmux(os.getpid(), env=env) is None


def test_spawn_failure_raises() -> None:
    with pytest.raises(TmuxQueryError, match=r"^cannot run sh: "):
        query_tmux(os.getpid(), env={"PATH": "/nonexistent-dsh-path"})


def _write_tool(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def test_timeout_raises_and_kills_the_process_group(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pid_file = tmp_path / "tmux.pid"
    _write_tool(bin_dir, "tmux", f'echo $$ > "{pid_file}"\nexec sleep 30\n')
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "TMUX_PANE": "%0"}
    started = time.monotonic()
    with pytest.raises(TmuxQueryError, match=r"^timed out after 0\.5s$"):
        query_tmux(os.getpid(), env=env, timeout_s=0.5)
    assert time.monotonic() - started < 5
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


def test_nonzero_exit_is_nothing_and_output_is_parsed(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A fake tmux whose pane tty is whatever ``ps`` reports for us, so the tty check passes.
    own_tty = subprocess.run(
        ["ps", "-o", "tty=", "-p", str(os.getpid())], capture_output=True, text=True, check=True
    ).stdout.strip()
    _write_tool(
        bin_dir,
        "tmux",
        'case "$5" in\n'
        f"  '#{{pane_tty}}') echo /dev/{own_tty} ;;\n"
        r"  *) printf '%s\n' 'w\t2\tnamé\t1\t%7\t1\t0\tlay' ;;"
        "\nesac\n",
    )
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "TMUX_PANE": "%7"}
    assert query_tmux(os.getpid(), env=env) == TmuxLocation(
        "w", "2", "namé", "1", "%7", "1", "0", "lay"
    )
    _write_tool(bin_dir, "tmux", "exit 3\n")
    assert query_tmux(os.getpid(), env=env) is None


# --- a real tmux server ---------------------------------------------------------------------

INSIDE_SCRIPT = """
import json, os, sys
sys.path.insert(0, {server!r})
from dsh_sidecar.sources.tmux_context import query_tmux
try:
    location = query_tmux(os.getpid())
    result = {{"location": None if location is None else location.to_json()}}
except Exception as exc:
    result = {{"error": repr(exc)}}
result["pid"] = os.getpid()
with open({out!r} + ".tmp", "w") as handle:
    json.dump(result, handle)
os.rename({out!r} + ".tmp", {out!r})
"""


class TmuxServer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.socket = root / "sock"

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=10,
        )

    def show(self, target: str, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", target, fmt).stdout.rstrip("\n")


@pytest.fixture
def tmux_server() -> Iterator[TmuxServer]:
    if shutil.which("tmux") is None or shutil.which("ps") is None:
        pytest.fail("tmux and ps are required (scripts/bootstrap installs them)")
    root = Path(tempfile.mkdtemp(prefix="dshtmux", dir="/tmp"))  # short unix-socket path
    server = TmuxServer(root)
    try:
        yield server
    finally:
        server.tmux("kill-server", check=False)
        shutil.rmtree(root, ignore_errors=True)


def _wait_for(path: Path, seconds: float = 15) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.05)
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def test_real_pane_reports_its_location(tmux_server: TmuxServer) -> None:
    out = tmux_server.root / "inside.json"
    script = tmux_server.root / "inside.py"
    script.write_text(INSIDE_SCRIPT.format(server=str(SERVER), out=str(out)))
    window_name = 'ed "x"\\y 中'
    tmux_server.tmux(
        "new-session",
        "-d",
        "-s",
        "dshwork",
        "-n",
        window_name,
        "-x",
        "120",
        "-y",
        "40",
        f"{sys.executable} {script}; sleep 60",
    )
    result = _wait_for(out)
    assert "error" not in result, result
    target = "dshwork:0.0"
    expected = {
        "sessionName": "dshwork",
        "windowIndex": "0",
        "windowName": window_name,
        "paneIndex": "0",
        "paneId": tmux_server.show(target, "#{pane_id}"),
        "windowActive": "1",
        "paneActive": "1",
        "windowLayout": tmux_server.show(target, "#{window_layout}"),
    }
    assert expected["paneId"].startswith("%")
    assert result["location"] == expected
    location = TmuxLocation(
        *(
            expected[k]
            for k in (
                "sessionName",
                "windowIndex",
                "windowName",
                "paneIndex",
                "paneId",
                "windowActive",
                "paneActive",
                "windowLayout",
            )
        )
    )
    assert render_tmux_reading(1, location).split("\n")[1] == (
        f'session dshwork, window 0 "ed \\"x\\"\\\\y 中", pane 0 {expected["paneId"]}'
    )


def test_inherited_pane_environment_with_another_tty_is_nothing(tmux_server: TmuxServer) -> None:
    tmux_server.tmux("new-session", "-d", "-s", "dshother", "-x", "80", "-y", "24", "sleep 60")
    target = "dshother:0.0"
    pane_id = tmux_server.show(target, "#{pane_id}")
    pane_pid = int(tmux_server.show(target, "#{pane_pid}"))
    pane_tty = tmux_server.show(target, "#{pane_tty}")
    server_pid = tmux_server.show(target, "#{pid}")
    # What a terminal launched from a tmux shell inherits: TMUX and TMUX_PANE of another pane.
    env = dict(os.environ, TMUX=f"{tmux_server.socket},{server_pid},0", TMUX_PANE=pane_id)
    own_tty = subprocess.run(
        ["ps", "-o", "tty=", "-p", str(os.getpid())], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert pane_tty.startswith("/dev/") and pane_tty != f"/dev/{own_tty}"
    assert query_tmux(os.getpid(), env=env) is None
    # The same environment with the PID of a process the pane owns (useClientProcess) matches.
    location = query_tmux(pane_pid, env=env)
    assert location is not None
    assert (location.session_name, location.pane_id) == ("dshother", pane_id)

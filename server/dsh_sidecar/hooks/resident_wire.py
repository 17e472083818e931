"""What the thin hook client and the resident engine agree on: where they meet, who is who, the
bytes between them. Standard library only, and only its cheap modules: the client imports this
on every hook event, before it knows whether it will need anything else.

A request, client to resident, is two length-prefixed blocks: the header (NUL-separated: the
version, the working directory, the client's start on the monotonic clock, the argv words and the
environment, each list preceded by its count; NUL can appear in none of them) and the hook's
stdin bytes. Every reply is a frame: one type byte, a 4-byte big-endian length, the payload.

- ``A`` accepted: the request was read whole and its version matches; nothing was done yet.
- ``V`` other version (payload: the resident's); ``N`` not here (payload: why). Either means
  nothing was or will be done for this request: the client answers in its own process.
- ``O`` the answer's stdout bytes (possibly none), sent inside the event's open transaction. The
  resident commits only once the client has written them to its stdout and replied ``D``.
- ``E`` the end (payload: the exit status, ASCII digits), after the commit.

The client falls back to its own process only while it has not sent ``D``; the resident commits
only after it got ``D``. So an event is committed by at most one of them, and whatever the
resident did before a missing ``D`` is rolled back.
"""

from __future__ import annotations

import os
import stat
import sys

import dsh_sidecar

# Not ``typing.TYPE_CHECKING``: importing typing (and collections.abc) would cost every hook
# event more than the rest of this module; mypy reads any name TYPE_CHECKING the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Protocol

    class Receiver(Protocol):
        def recv(self, size: int, /) -> bytes: ...


SWITCH_ENV = "DSH_HOOK_RESIDENT"  # "1" on, "0" off; unset: DEFAULT_ON
IDLE_ENV = "DSH_HOOK_RESIDENT_IDLE"  # seconds without a request before the resident exits
TEST_VERSION_ENV = "DSH_TEST_RESIDENT_VERSION"  # tests only: appended to ``version()``
DEFAULT_ON = True
DEFAULT_IDLE_SECONDS = 600.0

RUN_DIRNAME = "run"
SOCKET_NAME = "hook.sock"
LOCK_NAME = "hook.lock"
LOG_NAME = "hook-resident.log"
# sun_path holds 108 bytes with its terminating NUL on Linux; a longer path cannot be bound.
MAX_SOCKET_PATH = 107

ACCEPTED, OTHER_VERSION, NOT_HERE, OUTPUT, DONE, END = b"A", b"V", b"N", b"O", b"D", b"E"
MAX_HEADER = 4 * 1024 * 1024
MAX_STDIN = 16 * 1024 * 1024  # hooks/main.py's MAX_INPUT_BYTES: larger input goes in-process


def version(env: Mapping[str, str] | None = None) -> str:
    """Equal only for the same package, at the same place, run by the same interpreter (plus
    ``DSH_TEST_RESIDENT_VERSION``, with which tests play an upgrade)."""
    package = os.path.dirname(os.path.abspath(dsh_sidecar.__file__))
    extra = (os.environ if env is None else env).get(TEST_VERSION_ENV, "")
    return f"{dsh_sidecar.__version__} {package} {sys.executable} {sys.hexversion:x}{extra}"


def enabled(env: Mapping[str, str]) -> bool:
    """On unless switched off; Linux only (the peer checks are ``SO_PEERCRED``'s)."""
    value = env.get(SWITCH_ENV, "").strip()
    return (DEFAULT_ON if value == "" else value == "1") and SUPPORTED


SUPPORTED = sys.platform.startswith("linux")


def idle_seconds(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get(IDLE_ENV, ""))
    except ValueError:
        return DEFAULT_IDLE_SECONDS
    return value if value > 0 else DEFAULT_IDLE_SECONDS


def dsh_home(env: Mapping[str, str]) -> str | None:
    """``$DSH_HOME`` when not blank, else ``~/.dsh``; None when there is no home to speak of.

    The environment only, like the TCP token's place (docs/protocol.md, "Who may connect"): the
    ``instructions.dshHome`` setting is read by the engine, not here. Only where the socket lives
    depends on this; the event is answered with the hook's own settings either way."""
    chosen = env.get("DSH_HOME", "")
    if not chosen.strip():
        home = env.get("HOME", "")
        if not home:
            return None
        chosen = os.path.join(home, ".dsh")
    elif chosen == "~" or chosen.startswith("~/"):
        home = env.get("HOME", "")
        if not home:
            return None
        chosen = home + chosen[1:]
    return os.path.abspath(chosen)


def run_dir(home: str) -> str:
    return os.path.join(home, RUN_DIRNAME)


def socket_path(home: str) -> str:
    return os.path.join(run_dir(home), SOCKET_NAME)


def lock_path(home: str) -> str:
    return os.path.join(run_dir(home), LOCK_NAME)


def log_path(home: str) -> str:
    return os.path.join(home, "log", LOG_NAME)


def owner_only_problem(path: str, kind: str) -> str | None:
    """Why ``path`` (a ``dir`` or a ``socket``, not followed) is not ours alone; None when it is."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if kind == "dir" and not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if kind == "socket" and not stat.S_ISSOCK(st.st_mode):
        return f"{path} is not a socket"
    if st.st_uid != os.geteuid():
        return f"{path} belongs to uid {st.st_uid}, not to this user"
    if stat.S_IMODE(st.st_mode) & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def encode_request(
    version_text: str,
    cwd: bytes,
    started: float,
    argv: Sequence[str],
    environ: Mapping[bytes, bytes],
    stdin: bytes,
) -> bytes:
    fields = [
        version_text.encode(),
        cwd,
        repr(started).encode(),
        str(len(argv)).encode(),
        *(os.fsencode(word) for word in argv),
        str(len(environ)).encode(),
        *(key + b"=" + value for key, value in environ.items()),
    ]
    header = b"\0".join(fields)
    return _sized(header) + _sized(stdin)


class Request:
    """A decoded request; raises ``ValueError`` for anything malformed."""

    def __init__(self, header: bytes, stdin: bytes) -> None:
        fields = header.split(b"\0")
        self.version = fields[0].decode()
        self.cwd = os.fsdecode(fields[1])
        self.started = float(fields[2])
        count = int(fields[3])
        self.argv = [os.fsdecode(word) for word in fields[4 : 4 + count]]
        at = 4 + count
        env_count = int(fields[at])
        pairs = fields[at + 1 : at + 1 + env_count]
        if len(self.argv) != count or len(pairs) != env_count or len(fields) != at + 1 + env_count:
            raise ValueError("request fields do not add up")
        self.env: dict[str, str] = {}
        for pair in pairs:
            key, eq, value = pair.partition(b"=")
            if not eq:
                raise ValueError("an environment entry without '='")
            self.env[os.fsdecode(key)] = os.fsdecode(value)
        self.stdin = stdin


def frame(kind: bytes, payload: bytes = b"") -> bytes:
    return kind + _sized(payload)


def _sized(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def read_exactly(sock: Receiver, size: int) -> bytes:
    """``size`` bytes from a socket (``recv`` honours its timeout); ``EOFError`` when it closes
    first."""
    recv = sock.recv
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_sized(sock: Receiver, limit: int) -> bytes:
    size = int.from_bytes(read_exactly(sock, 4), "big")
    if size > limit:
        raise ValueError(f"block of {size} bytes over {limit}")
    return read_exactly(sock, size)


def read_frame(sock: Receiver) -> tuple[bytes, bytes]:
    kind = read_exactly(sock, 1)
    return kind, read_sized(sock, MAX_STDIN + MAX_HEADER)

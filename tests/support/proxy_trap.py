"""A proxy that lets nothing through and remembers who asked.

Every proxy variable of a sandboxed CLI points here (only 127.0.0.1 and localhost bypass it),
so a request for any other address ends here: the first line (``CONNECT host:443 HTTP/1.1``
or ``GET http://host/...``) is recorded and the connection refused with a 403. A test can then
assert that a run tried to reach nothing outside (``AgentRun.outside_attempts``).
"""

from __future__ import annotations

import socket
import threading


class ProxyTrap:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._attempts: list[str] = []
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="proxy-trap", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    @property
    def attempts(self) -> list[str]:
        with self._lock:
            return list(self._attempts)

    def start(self) -> ProxyTrap:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        self._socket.close()

    def __enter__(self) -> ProxyTrap:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
                except OSError:
                    first = "(no request line)"
            with self._lock:
                self._attempts.append(first)

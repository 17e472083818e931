"""A token sent among the settings never comes back (issue 30, finding 7).

The attack: a client puts its TCP token (here a marker) inside its settings, under ``dsh`` and in
every odd spelling, nested, in a list, as an all-digit number, in the answer to
``workspace/configuration`` and in a ``didChangeConfiguration`` payload, against a real server
process logging at debug level (``-v``) to a file. The marker must appear in no message the client
receives and nowhere in the log; on TCP neither may a wrong token (a failed handshake) nor the
real one. The refusals still name every key, with ``(value hidden)`` as the value.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

from tests.support.listening import Listening
from tests.support.reliability_rpc import (
    HANG_GUARD,
    SERVE,
    RpcError,
    Server,
    server_env,
)

from dsh_sidecar.config.keys import KEYS
from dsh_sidecar.config.secrets import HIDDEN, is_secret_name

MARKER = "SECRET-MARKER-" + secrets.token_hex(8)
DIGITS = "9" + "".join(str(secrets.randbelow(10)) for _ in range(30))  # beyond 2^53-1


def settings_with_secrets(tag: str) -> dict[str, Any]:
    """Settings with the marker wherever a client might put a token by mistake, plus one wrong
    key whose (harmless) value must still be shown."""
    return {
        "dsh": {
            "authToken": f"{MARKER}-{tag}-1",
            "auth_token": f"{MARKER}-{tag}-2",
            "AUTHTOKEN": [f"{MARKER}-{tag}-3"],
            "Auth-Token": {"nested": f"{MARKER}-{tag}-4"},
            "ＡＵＴＨＴＯＫＥＮ": f"{MARKER}-{tag}-5",  # fullwidth letters
            "auth\u200btoken": f"{MARKER}-{tag}-6",  # a zero-width space inside
            "instructions": {
                "apiKey": f"{MARKER}-{tag}-7",
                # A known key given an object: its refusal quotes the object.
                "enabled": {"password": f"{MARKER}-{tag}-8"},
                "maxBytes": [{"client_secret": f"{MARKER}-{tag}-9"}],
            },
            "timeContext": {"timeZone": {"credentials": {"token": f"{MARKER}-{tag}-10"}}},
            "hover": {"otherFiles": [[{"SESSION_COOKIE": f"{MARKER}-{tag}-11"}]]},
            "extras": {"token": f"{MARKER}-{tag}-12", "colour": "blue"},
            "colour": "green",
        }
    }


class Client(Server):
    """A real client that also answers the server's ``workspace/configuration`` with secrets
    (the first time) and null (after that: the notification's payload is then read)."""

    def __init__(self, env: dict[str, str], argv: list[str]) -> None:
        self.pulls = 0
        super().__init__(env, argv)

    def answer_server_request(self, message: dict[str, Any]) -> Any:
        if message.get("method") != "workspace/configuration":
            return None
        self.pulls += 1
        return [settings_with_secrets("pulled")["dsh"]] if self.pulls == 1 else [None]


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def refusals(peer: Any) -> list[list[dict[str, Any]]]:
    return [
        n["params"]["refused"]
        for n in list(peer.notifications)
        if n.get("method") == "dsh/settings/didCheck"
    ]


def assert_refusals_hide_the_marker(refused: list[dict[str, Any]]) -> None:
    by_key = {r["key"]: r for r in refused}
    for key in ("authToken", "auth_token", "AUTHTOKEN", "Auth-Token", "instructions.apiKey"):
        assert by_key[key]["value"] == HIDDEN, by_key[key]
    assert by_key["ＡＵＴＨＴＯＫＥＮ"]["value"] == HIDDEN
    assert by_key["auth\u200btoken"]["value"] == HIDDEN
    assert by_key["instructions.enabled"]["value"] == {"password": HIDDEN}
    assert f"got {{'password': '{HIDDEN}'}}" in by_key["instructions.enabled"]["message"]
    assert by_key["instructions.maxBytes"]["value"] == [{"client_secret": HIDDEN}]
    assert by_key["timeContext.timeZone"]["value"] == {"credentials": HIDDEN}
    assert by_key["hover.otherFiles"]["value"] == [[{"SESSION_COOKIE": HIDDEN}]]
    assert by_key["extras"]["value"] == {"token": HIDDEN, "colour": "blue"}
    # Not a secret's name: shown as given, so a user can still see what they got wrong.
    assert by_key["colour"]["value"] == "green"


def test_a_token_in_the_settings_never_comes_back_over_stdio(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    home = tmp_path / "home"
    home.mkdir()
    argv = [*SERVE, "-v", "--log-file", str(log)]
    client = Client(server_env(str(home), fsync=False), argv)
    try:
        store = {"path": str(tmp_path / "store.sqlite3")}
        options = {
            "dsh": {**settings_with_secrets("init")["dsh"], "store": store},
            "authToken": f"{MARKER}-top",  # the transport's own place: taken out, never read
        }
        client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {"workspace": {"configuration": True}},
                "initializationOptions": options,
            },
        )
        client.notify("initialized", {})
        wait_for(lambda: len(refusals(client)) >= 1, "the first dsh/settings/didCheck")
        assert_refusals_hide_the_marker(refusals(client)[0])
        # Pulled: the client answers workspace/configuration with the secrets.
        client.notify("workspace/didChangeConfiguration", {"settings": None})
        wait_for(lambda: len(refusals(client)) >= 2, "the pulled settings' report")
        assert_refusals_hide_the_marker(refusals(client)[1])
        # The pull answers null: the notification's own payload is read.
        client.notify(
            "workspace/didChangeConfiguration", {"settings": settings_with_secrets("sent")}
        )
        wait_for(lambda: len(refusals(client)) >= 3, "the sent settings' report")
        assert_refusals_hide_the_marker(refusals(client)[2])
        # A token given where a request wants a string: refused, naming the field only.
        for method, params in (
            ("dsh/explain", {"uri": {"token": f"{MARKER}-uri"}}),
            ("dsh/session/open", {"cwd": str(tmp_path), "sessionId": {"apiKey": MARKER}}),
            (
                "textDocument/hover",
                {"textDocument": {"uri": [{"authToken": MARKER}]}, "position": {}},
            ),
        ):
            try:
                client.request(method, params)
                raise AssertionError(f"{method} accepted a token for a string")
            except RpcError as exc:
                assert exc.error["data"]["code"] == "invalid-params", exc.error
        # A token of digits only, sent as a number too large to keep: refused by the message
        # checks, which name the field and not the number.
        body = (
            '{"jsonrpc": "2.0", "id": 9001, "method": "dsh/explain", "params": {"uri": "/x", '
            '"dsh": {"AUTH_TOKEN": [1, ' + DIGITS + "]}}}"
        ).encode()
        waiting = client.expect(9001)
        client.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        try:
            client.wait(9001, waiting)
            raise AssertionError("the unsafe number was accepted")
        except RpcError as exc:
            assert "AUTH_TOKEN[1]: the number (value hidden)" in str(exc), exc
    finally:
        client.close()
    received = json.dumps(client.received, ensure_ascii=False)
    assert client.pulls >= 2
    assert MARKER not in received and DIGITS not in received
    text = log.read_text(encoding="utf-8", errors="replace")
    # Debug logging really ran, and logged the messages that held the marker.
    assert "Language server initialized" in text and "Sending notification" in text, text[:2000]
    assert "Received result" in text  # the pulled settings, as pygls logs them
    assert MARKER not in text and DIGITS not in text


def test_neither_a_wrong_nor_the_real_tcp_token_is_echoed(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    server = Listening(tmp_path, "--tcp", "--port", "0", "-v", "--log-file", str(log))
    try:
        token = server.token()
        wrong = server.connect()
        try:
            try:
                wrong.initialize({"authToken": f"{MARKER}-wrong", **settings_with_secrets("x")})
                raise AssertionError("a wrong token was accepted")
            except RpcError as exc:
                assert exc.error["data"]["code"] == "unauthorized"
            wait_for(wrong.closed.is_set, "the refused connection to close")
        finally:
            wrong.close()
        right = server.connect()
        try:
            store = {"path": str(tmp_path / "store.sqlite3")}
            right.initialize(
                {"dsh": {**settings_with_secrets("tcp")["dsh"], "store": store}, "authToken": token}
            )
            wait_for(lambda: len(refusals(right)) >= 1, "dsh/settings/didCheck")
            assert_refusals_hide_the_marker(refusals(right)[0])
            right.request("shutdown")
            right.notify("exit")
        finally:
            right.close()
    finally:
        server.stop()
    for peer in (wrong, right):
        received = json.dumps(peer.received, ensure_ascii=False)
        assert MARKER not in received and token not in received
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "authenticated" in text and "Language server initialized" in text, text[:2000]
    assert MARKER not in text
    assert token not in text


def test_no_settings_key_is_named_like_a_secret() -> None:
    """So no valid setting is ever hidden, and every check that quotes a value quotes a key
    that is not a secret's (docs/configuration.md, "Values never quoted")."""
    for key in KEYS:
        assert not any(is_secret_name(part) for part in key.wire.split(".")), key.wire

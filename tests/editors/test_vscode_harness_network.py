"""The VS Code tests' guard against requests beyond 127.0.0.1 (vscode_harness.outside_attempts)
finds what code-server logs when it tries the outside, and lets loopback traffic and mere
mentions of a URL through."""

from __future__ import annotations

from tests.support.vscode_harness import outside_attempts


def test_a_gallery_query_that_failed_its_lookup_is_found() -> None:
    line = (
        "[06:02:58] #1: https://open-vsx.org/vscode/gallery/extensionquery - error POST "
        "getaddrinfo ENOTFOUND open-vsx.org"
    )
    assert outside_attempts(f"[06:02:57] Extension host started.\n{line}\n") == [line]


def test_a_request_to_an_outside_host_is_found_even_when_it_succeeded() -> None:
    assert outside_attempts("#4: https://marketplace.example/x - 200 OK") != []
    assert outside_attempts("GET http://example.org/schema.json") != []


def test_loopback_requests_and_mentions_of_urls_pass() -> None:
    text = (
        "[info] HTTP server listening on http://127.0.0.1:41289/\n"
        "#2: http://127.0.0.1:5000/v1/chat/completions - 200\n"
        "GET http://localhost:8080/healthz\n"
        "created a webview without a content security policy: https://aka.ms/vscode-webview\n"
    )
    assert outside_attempts(text) == []

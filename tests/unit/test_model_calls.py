"""The model-call notes of a session (hooks/model_calls.py): the last call's message is what the
steps after the one-before-last note took in, through the last."""

from __future__ import annotations

from pathlib import Path

from dsh_sidecar.hooks.model_calls import ModelCalls


def test_the_last_message_is_between_the_last_two_notes(tmp_path: Path) -> None:
    calls = ModelCalls(str(tmp_path))
    assert calls.last_message("qwen-code:s") is None
    calls.note("qwen-code:s", 4)
    assert calls.last_message("qwen-code:s") == (0, 4)  # the first call: everything so far
    calls.note("qwen-code:s", 9)
    calls.note("qwen-code:s", 12)
    assert calls.last_message("qwen-code:s") == (9, 12)
    assert calls.last_message("qwen-code:other") is None  # one file per session


def test_forgotten_or_unreadable_notes_keep_nothing(tmp_path: Path) -> None:
    calls = ModelCalls(str(tmp_path))
    calls.note("s", 3)
    calls.forget("s")
    calls.forget("s")  # twice: nothing to forget, no error
    assert calls.last_message("s") is None
    calls.note("s", 3)
    path = next((tmp_path / "hooks" / "calls").iterdir())
    for broken in ("", "[1]", '["a", 2]', "[true, 2]", "{}"):
        path.write_text(broken)
        assert calls.last_message("s") is None, broken

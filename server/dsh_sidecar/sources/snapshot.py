"""The ``snapshot`` form shared by plugin readings (time-context, tmux-context).

A snapshot message carries one text block and a source naming its plugin, with one section whose
name is the plugin and whose text repeats the message text, as upstream's ``ContextFormed``
requires of the ``snapshot`` form.
"""

from __future__ import annotations

from typing import Any

from dsh_sidecar.model import Message


def snapshot_source(plugin: str, text: str) -> dict[str, Any]:
    return {
        "kind": "plugin",
        "plugin": plugin,
        "form": "snapshot",
        "sections": [{"name": plugin, "text": text}],
    }


def snapshot_message(plugin: str, text: str) -> Message:
    return Message.user([text], snapshot_source(plugin, text))

"""docs/agents.md's table of the agents, written from their records (``scripts/agent-table``
rewrites it; tests/unit/test_agent_records.py fails while the page and the records disagree).

The table sits between ``BEGIN`` and ``END`` on the page; nothing else there is touched.
"""

from __future__ import annotations

from collections.abc import Sequence

from .record import AgentRecord, Hooks, SettingsPlace

BEGIN = (
    "<!-- agent-records: written by scripts/agent-table from dsh_sidecar/agents; do not edit -->"
)
END = "<!-- agent-records: end -->"
HEAD = (
    "| agent | `--agent` | settings files | events installed | trust step | one hook's text |",
    "|---|---|---|---|---|---|",
)


def _place(place: SettingsPlace) -> str:
    if place.scope != "user":
        where = f"`<root>/{place.path}`"
        return where + (" (this machine's; git leaves it out)" if place.scope == "local" else "")
    if place.env is None:
        return f"`~/{place.path}`"
    if place.env_replaces == "directory":
        name = place.path.rsplit("/", 1)[-1]
        return f"`${place.env}/{name}` (`~/{place.path}`)"
    return f"`~/{place.path}` (`${place.env}` for `~`)"


def _events(hooks: Hooks) -> str:
    names = sorted(t.name for t in hooks.tools)
    shown = []
    for event in hooks.installed_events():
        if event.seam != "after-tool":
            shown.append(f"`{event.name}`")
        elif hooks.matcher == "every-tool":
            shown.append(f"`{event.name}` (every tool)")
        else:
            shown.append(f"`{event.name}` ({', '.join(f'`{n}`' for n in names)})")
    return ", ".join(shown)


def _text(hooks: Hooks) -> str:
    out = hooks.output
    units = {"utf-16-units": "UTF-16 units", "utf-8-bytes": "UTF-8 bytes"}
    parts = [
        f"at most {out.cap:,} {units[out.cap_unit]}"
        if out.cap is not None and out.cap_unit is not None
        else f"no cap ({out.cap_note})"
    ]
    parts.append("framed by the agent" if out.frames_itself else "in `<system-reminder>` tags")
    if out.escaping != "none":
        parts.append(f"`{out.escaping}` at {', '.join(out.escaped_at)}")
    parts.append(f"timeout in {hooks.timeout_unit}")
    return "; ".join(parts)


def row(record: AgentRecord) -> str:
    hooks = record.hooks
    if hooks is None:
        return f"| {record.name} | none | | | | {record.no_hooks} |"
    files = "; ".join(f"{p.scope}: {_place(p)}" for p in hooks.settings)
    return (
        f"| {record.name} | `{record.id}` | {files} | {_events(hooks)} | `{hooks.trust}` |"
        f" {_text(hooks)} |"
    )


def table(records: Sequence[AgentRecord]) -> str:
    return "\n".join((BEGIN, "", *HEAD, *(row(r) for r in records), "", END))


def rewritten(page: str, records: Sequence[AgentRecord]) -> str:
    """``page`` with its table replaced by the one ``records`` give."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + table(records) + page[end:]

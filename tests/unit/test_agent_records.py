"""Every agent is one record (dsh_sidecar/agents/record.py), complete, and read alike by explain,
the hooks, install and the docs; nothing in ``hooks/`` or ``agents/`` branches on an agent's id.

``problems`` is the completeness check: for each seam the hooks use, an event name or an explicit
``NotAvailable`` with its reason; every tool with a reader and its path fields; a cap or an
explicit none; a settings file for project and user scope; a trust step, an escaping and a shape
the hook implements; docs/agents.md naming the agent. A record missing any of those fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest

from dsh_sidecar.agents import AGENTS, docs_table
from dsh_sidecar.agents.record import SEAMS, AgentRecord, Event, NotAvailable, Tool
from dsh_sidecar.agents.registry import (
    IDS,
    REGISTRY,
    UnknownAgent,
    hook_ids,
    hook_record,
    record,
    records,
)
from dsh_sidecar.hooks import install, output, trust
from dsh_sidecar.hooks.complement import rules_of
from dsh_sidecar.hooks.main import parse_event
from dsh_sidecar.hooks.tool_paths import READERS

REPO = Path(__file__).resolve().parents[2]
AGENTS_PAGE = REPO / "docs" / "agents.md"
SERVER = REPO / "server" / "dsh_sidecar"
# Readers whose path fields name more than one thing: the first is the path or command, the rest
# where it is taken from.
AT_LEAST = {"glob": 2}


def problems(agent: AgentRecord) -> list[str]:
    """What ``agent``'s record leaves out or names that nothing implements."""
    found: list[str] = []
    if not agent.id or not agent.name:
        found.append("no id or name")
    if agent.rules.id != agent.id or agent.rules.name != agent.name:
        found.append(f"its rules say {agent.rules.id!r} / {agent.rules.name!r}")
    page = AGENTS_PAGE.read_text(encoding="utf-8")
    if agent.name not in page:
        found.append(f"docs/agents.md does not name {agent.name!r}")
    hooks = agent.hooks
    if hooks is None:
        if not agent.no_hooks:
            found.append("no hooks and no reason why")
        return found
    if f"--agent {agent.id}" not in page:
        found.append(f"docs/agents.md shows no `--agent {agent.id}`")
    names = [e.name for e in hooks.events]
    if len(set(names)) != len(names):
        found.append(f"an event name twice: {names}")
    for seam in SEAMS:
        events = [e for e in hooks.events if e.seam == seam]
        missing = [n for n in hooks.not_available if n.seam == seam]
        if len(events) + len(missing) != 1:
            found.append(f"seam {seam}: {len(events)} event(s), {len(missing)} not-available")
        found.extend(
            f"seam {seam}: not available without a reason" for n in missing if not n.reason
        )
    found.extend(
        f"{e.name}: not installed, no reason" for e in hooks.events if not e.installed and not e.why
    )
    for needed in ("start", "prompt", "after-tool"):
        # The prompt may be declared not available, with its reason (Copilot CLI: only the last
        # of several hooks' prompt texts reaches its model).
        if needed == "prompt" and any(n.seam == "prompt" for n in hooks.not_available):
            continue
        if not any(e.seam == needed and e.installed for e in hooks.events):
            found.append(f"no installed {needed} event")
    if not hooks.tools:
        found.append("no tools")
    for tool in hooks.tools:
        if tool.reader not in READERS:
            found.append(f"tool {tool.name}: reader {tool.reader!r} is not implemented")
        if len(tool.fields) < AT_LEAST.get(tool.reader, 1) or not all(tool.fields):
            found.append(f"tool {tool.name}: path fields {tool.fields}")
    tool_names = [t.name for t in hooks.tools]
    if len(set(tool_names)) != len(tool_names):
        found.append(f"a tool twice: {tool_names}")
    out = hooks.output
    if out.cap is None and not out.cap_note:
        found.append("no cap and no note saying so")
    if out.cap is not None and out.cap <= output.NOTICE_ROOM + 200:
        found.append(f"cap {out.cap} leaves no room for text")
    if out.escaping not in output.ESCAPINGS:
        found.append(f"escaping {out.escaping!r} is not implemented")
    if out.escaping != "none" and not out.escaped_at:
        found.append("an escaping applied at no seam")
    scopes = hooks.scopes()
    if len(set(scopes)) != len(scopes) or not {"project", "user"} <= set(scopes):
        found.append(f"settings scopes {scopes}: want project and user, each once")
    found.extend(f"{p.scope}: no path" for p in hooks.settings if not p.path)
    if hooks.trust != "none" and (
        hooks.trust not in trust.CHECKS or hooks.trust not in trust.STEPS
    ):
        found.append(f"trust step {hooks.trust!r} is not implemented")
    return found


@pytest.mark.parametrize("agent", IDS)
def test_every_record_is_complete(agent: str) -> None:
    assert problems(record(agent)) == []


def test_an_incomplete_record_is_found_out() -> None:
    claude = hook_record("claude")
    hooks = claude.hooks
    assert hooks is not None
    without_prompt = attrs.evolve(
        hooks, events=tuple(e for e in hooks.events if e.seam != "prompt")
    )
    assert "seam prompt: 0 event(s), 0 not-available" in problems(
        attrs.evolve(claude, hooks=without_prompt)
    )
    twice = attrs.evolve(
        hooks, not_available=(NotAvailable("prompt", "said twice"),), events=hooks.events
    )
    assert "seam prompt: 1 event(s), 1 not-available" in problems(attrs.evolve(claude, hooks=twice))
    no_reason = attrs.evolve(hooks, events=(*hooks.events, Event("pre-tool", "X", installed=False)))
    assert "X: not installed, no reason" in problems(attrs.evolve(claude, hooks=no_reason))
    bad_tool = attrs.evolve(hooks, tools=(*hooks.tools, Tool("Find", "glob", ("pattern",))))
    assert "tool Find: path fields ('pattern',)" in problems(attrs.evolve(claude, hooks=bad_tool))
    uncapped = attrs.evolve(hooks, output=attrs.evolve(hooks.output, cap=None, cap_unit=None))
    assert "no cap and no note saying so" in problems(attrs.evolve(claude, hooks=uncapped))
    # A cap is a number in the unit the agent counts: neither goes without the other.
    with pytest.raises(ValueError, match="cap_unit"):
        attrs.evolve(hooks.output, cap=None, cap_unit="utf-16-units")
    with pytest.raises(ValueError, match="cap_unit"):
        attrs.evolve(hooks.output, cap=10, cap_unit=None)
    user_only = attrs.evolve(hooks, settings=tuple(p for p in hooks.settings if p.scope == "user"))
    assert any("settings scopes" in p for p in problems(attrs.evolve(claude, hooks=user_only)))
    renamed = attrs.evolve(claude, id="claude-code")
    assert "its rules say 'claude' / 'Claude Code'" in problems(renamed)
    rules = attrs.evolve(claude.rules, id="nobody", name="Nobody")
    unnamed = attrs.evolve(claude, id="nobody", name="Nobody", rules=rules)
    assert problems(unnamed) == [
        "docs/agents.md does not name 'Nobody'",
        "docs/agents.md shows no `--agent nobody`",
    ]
    assert problems(attrs.evolve(claude, hooks=None)) == ["no hooks and no reason why"]


def test_one_id_everywhere() -> None:
    """The registry, the record, explain's rules, the hook's --agent and install all say the
    same id; explain compares every record's rules, in the registry's order."""
    assert [r.id for r in records()] == [agent for agent, _ in REGISTRY] == list(IDS)
    assert [a.id for a in AGENTS] == list(IDS)
    assert tuple(install.AGENT_NAMES) == tuple(install.HOOK_EVENTS) == hook_ids()
    for agent in hook_ids():
        assert install.AGENT_NAMES[agent] == record(agent).name
        assert rules_of(agent) is record(agent).rules
        assert install.hook_command(agent, "/bin/dsh-sidecar").endswith(f"hook --agent {agent}")


@pytest.mark.parametrize("agent", ["claude-code", "gemini-cli", "nobody", ""])
def test_an_unknown_agent_is_an_error_everywhere(agent: str) -> None:
    with pytest.raises(UnknownAgent, match="unknown agent"):
        record(agent)
    with pytest.raises(UnknownAgent):
        rules_of(agent)
    with pytest.raises(UnknownAgent):
        output.cap_of(agent)
    with pytest.raises(UnknownAgent):
        parse_event(agent, {"hook_event_name": "SessionStart", "session_id": "s", "cwd": "/"})


def test_an_agent_without_hooks_is_no_hook_agent() -> None:
    without = [r.id for r in records() if r.hooks is None and r.guest_hooks is None]
    assert "cursor" in without
    for agent in without:
        with pytest.raises(UnknownAgent, match="runs no hooks"):
            hook_record(agent)
        assert agent not in hook_ids()


def test_an_agent_running_another_s_hooks_is_read_by_them_and_installs_none() -> None:
    guests = [r for r in records() if r.hooks is None and r.guest_hooks is not None]
    assert [r.id for r in guests] == ["copilot-vscode"]
    for guest in guests:
        assert hook_record(guest.id).hooks is guest.guest_hooks
        assert guest.id not in hook_ids() and guest.id not in install.AGENT_NAMES


def _id_literals(node: ast.AST) -> list[str]:
    """Agent ids written as string literals in ``node`` (a comparison's operands, a
    container of them)."""
    if isinstance(node, ast.Constant) and node.value in IDS:
        return [str(node.value)]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [i for element in node.elts for i in _id_literals(element)]
    return []


def branches_on_ids(path: Path) -> list[str]:
    """``== "claude"``, ``in ("codex", …)``, ``{"gemini": …}`` and the like in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        ids: list[str] = []
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                ids += _id_literals(operand)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                ids += _id_literals(key) if key is not None else []
        found += [f"{path.name}:{getattr(node, 'lineno', 0)}: {i}" for i in ids]
    return found


def test_no_per_agent_branches_in_hooks_or_agents() -> None:
    """Outside an agent's own module and the registry, nothing in ``hooks/`` or ``agents/``
    compares with an agent's id: what differs is in the record."""
    own = {f"{module}.py" for _, module in REGISTRY} | {"registry.py"}
    files = [p for p in sorted((SERVER / "agents").glob("*.py")) if p.name not in own]
    files += sorted((SERVER / "hooks").glob("*.py"))
    assert len(files) > 20
    assert [hit for path in files for hit in branches_on_ids(path)] == []


def test_the_branch_finder_finds_branches(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'if agent == "claude":\n    pass\nx = agent in ("codex", "y")\nCAPS = {"gemini": 1}\n'
        'name = "claude"  # naming an id is no branch\n'
    )
    assert branches_on_ids(sample) == [
        "sample.py:1: claude",
        "sample.py:3: codex",
        "sample.py:4: gemini",
    ]


def test_the_agents_table_of_the_docs_is_the_records() -> None:
    """docs/agents.md's table is written from the records (scripts/agent-table)."""
    page = AGENTS_PAGE.read_text(encoding="utf-8")
    assert docs_table.rewritten(page, records()) == page, "run scripts/agent-table"
    for agent in records():
        assert docs_table.row(agent) in page


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_store_written_before_the_records_resumes_under_the_same_keys(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions stored by earlier versions are keyed ``<hook id>:<session>`` (``claude:s1``);
    those ids are the agents' ids now, so an event of that agent session finds its session and
    no second one is made."""
    import io
    import json

    from dsh_sidecar.hooks.main import main
    from dsh_sidecar.model import SessionHeader
    from dsh_sidecar.sessions.store import Store

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT RULE\n")
    home = tmp_path / "dsh"
    home.mkdir()
    (home / "AGENTS.md").write_text("USER GLOBAL RULE\n")  # no agent loads it itself
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    store = Store(str(home / "sessions.sqlite3"))
    old = SessionHeader(f"{agent}:s1", 1, str(root), agent=agent, agent_session="s1")
    assert store.create_session(old)
    store.close()
    name = hook_record(agent).hooks.events[0].name  # type: ignore[union-attr]
    payload = {"hook_event_name": name, "session_id": "s1", "cwd": str(root), "source": "resume"}
    out = io.BytesIO()
    assert main(["--agent", agent], io.BytesIO(json.dumps(payload).encode()), out) == 0
    assert "USER GLOBAL RULE" in out.getvalue().decode()
    store = Store(str(home / "sessions.sqlite3"))
    try:
        assert [(h.id, h.agent, h.created_at) for h in store.list_sessions()] == [
            (f"{agent}:s1", agent, 1)
        ]
        assert store.events(f"{agent}:s1")  # the baseline went into the stored session
    finally:
        store.close()
    assert not (home / "log" / "hooks.log").exists()


def test_the_docs_list_the_hook_agents_the_registry_has() -> None:
    """Every ``--agent a|b|c`` the docs show names exactly the agents with hooks."""
    import re

    shown = []
    for page in ("cli.md", "architecture.md", "agents.md"):
        text = (REPO / "docs" / page).read_text(encoding="utf-8")
        shown += [(page, m) for m in re.findall(r"--agent ([a-z-]+(?:\|[a-z-]+)+)", text)]
    assert len(shown) >= 5
    for page, choices in shown:
        assert sorted(choices.split("|")) == sorted(hook_ids()), page


def test_an_agents_compaction_event_prints_nothing_and_keeps_the_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot CLI's PreCompact (``Hooks.compact_event``) is installed, read as a start after a
    compaction, and answered with nothing: the reset waits in the spool for the next event,
    whose text lands after the compaction point."""
    import io
    import json

    from dsh_sidecar.hooks.main import main
    from dsh_sidecar.sessions.spool import Spool

    hooks = hook_record("copilot-cli").hooks
    assert hooks is not None and hooks.compact_event == "PreCompact"
    assert "PreCompact" in [e.event for e in install.HOOK_EVENTS["copilot-cli"]]
    payload = {"hook_event_name": "PreCompact", "session_id": "s1", "cwd": str(tmp_path)}
    payload |= {"trigger": "auto", "custom_instructions": ""}
    event = parse_event("copilot-cli", payload)
    assert (event.kind, event.context_reset, event.compacting) == ("start", "compact", True)
    home = tmp_path / "dsh"
    monkeypatch.setenv("DSH_HOME", str(home))
    out = io.BytesIO()
    assert main(["--agent", "copilot-cli"], io.BytesIO(json.dumps(payload).encode()), out) == 0
    assert out.getvalue() == b""
    kept = Spool.of_home(str(home)).read("copilot-cli:s1")
    assert [(k.paths, k.reset) for k in kept] == [((), "compact")]
    assert not (home / "log" / "hooks.log").exists()

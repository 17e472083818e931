"""Test infrastructure for driving the real agent CLIs (Claude Code, Codex CLI, Gemini CLI).

- ``steps``: what the fake model does on each main request (``ReadFile``, ``WriteFile``,
  ``EditFile``, ``Shell``, ``ToolCall``, ``ToolCalls``, ``Text``), translated per agent.
- ``fake_model``: ``FakeModel``, the scripted endpoint on 127.0.0.1 (Anthropic Messages, OpenAI
  Responses, Gemini), recording every request.
- ``recorded``: ``RecordedRequest``; ``parts_of`` / ``texts_of`` / ``count_in`` flatten a request
  into what the model saw.
- ``agent_cli``: ``run_agent(agent, cwd, prompt, script, home=..., hooks=...)`` runs one
  sandboxed headless turn and returns an ``AgentRun``; ``missing_clis()`` for the install check.
- ``hooks``: ``HookConfig`` and ``install_hooks`` (each agent's documented place),
  ``capture_command`` / ``capture_all`` / ``captured`` (the capture hook), and
  ``sidecar_hook_command`` (``dsh-sidecar hook --agent X`` as a hook command).
- ``proxy_trap``: where every proxy variable of a run points; records outside requests.
- ``record_hooks``: ``python -m tests.support.record_hooks`` rewrites
  tests/fixtures/agent_hooks/.

A test that uses the CLIs lives under tests/agents/ or is marked ``agent_clis``; it fails (never
skips) when ``scripts/install-agent-clis`` has not been run. What the CLIs were seen to do is in
docs/reference/agent-clis.md.

    from tests.support.agent_cli import run_agent
    from tests.support.hooks import HookConfig, sidecar_hook_command
    from tests.support.recorded import count_in
    from tests.support.steps import ReadFile, Text

    hooks = HookConfig.for_events(
        ["SessionStart", "UserPromptSubmit", "PostToolUse"],
        sidecar_hook_command("codex", env={"DSH_HOME": str(tmp_path / "dsh")}),
    )
    run = run_agent("codex", repo, "read pkg/x.py", [ReadFile("pkg/x.py"), Text("done")],
                    home=tmp_path / "home", hooks=hooks)
    assert run.exit_code == 0, run.describe()
    assert count_in(run.main_requests[1], "NESTED-MARKER") == 1
"""

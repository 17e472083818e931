"""The test kits, imported as ``tests.support.<kit>``.

Sessions and instruction trees:

- ``instrkit``: ``write_tree``, ``load``, ``instructions``, ``states``, ``shared_tmp``,
  ``run_as_nobody``; ``explainkit``: explain over a tree; ``odd_tree``: a tree of odd names and
  links; ``sessionkit``: a ``SessionService`` on a real store (``Kit``, ``start``, ``step``...).
- ``hostile_repo``: the adversarial repository trees.

Servers and clients:

- ``reliability_rpc``: a raw JSON-RPC peer over pipes or sockets; ``listening``: ``serve`` on TCP
  or a Unix socket; ``lsp_fixture``: pytest-lsp's client fixture, typed; ``forked_servers`` (with
  ``forked_launcher``): the dev loop's forked servers; ``property_budget``: example counts.
- ``tools``: the fixtures for real editors and their toolchains, which mark a test ``editors``;
  ``vscode_harness``: code-server, Chromium and the scripted model for the VS Code tests.

The real agent CLIs (Claude Code, Codex CLI, Gemini CLI):

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
- ``hook_processes``: ``HookAgent``, one agent session's ``dsh-sidecar hook`` processes on a real
  store, stopped at the hook's test point and killed; ``LockHolder``, another process holding the
  store's write lock.

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

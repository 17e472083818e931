"""``dsh-sidecar hook``: the context engine behind the agents' hooks (Claude Code, Codex CLI,
Gemini CLI, GitHub Copilot CLI, Qwen Code; each one record in ``dsh_sidecar/agents``).

One event at a time: a thin client (``resident_client``) hands the agent's JSON to the resident
engine, or answers it in its own process; the record reads it into a neutral event
(``adapter``), the event finds the durable session of that agent session (``mapping``), is
worked out on a copy of it and recorded after its print (``runtime``, ``offer``), keeps to what
the agent does not load itself (``complement``) and to its limits (``output``), and never breaks
the agent (``failopen``). Imports neither ``lsp/`` nor pygls.
"""

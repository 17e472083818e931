"""``dsh-sidecar hook``: the context engine behind Claude Code's, Codex CLI's and Gemini CLI's hooks.

One process per hook event: read the agent's JSON on stdin (``adapters``), find the durable
session of that agent session (``mapping``), turn the event into touches and a step
(``runtime``), keep to what the agent does not load itself (``complement``) and to its limits
(``output``), and never break the agent (``failopen``). Imports neither ``lsp/`` nor pygls.
"""

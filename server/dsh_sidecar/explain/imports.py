"""Re-exported from the instruction engine (``sources/agent_instructions/import_syntax.py``),
which follows imports with the same syntax the simulation uses."""

from dsh_sidecar.sources.agent_instructions.import_syntax import *  # noqa: F403

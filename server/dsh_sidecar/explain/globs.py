"""Re-exported from the instruction engine (``sources/agent_instructions/globs.py``), which reads
rule files with the same rules the simulation uses."""

from dsh_sidecar.sources.agent_instructions.globs import *  # noqa: F403

"""Re-exported from the instruction engine (``sources/agent_instructions/frontmatter.py``), which reads
rule files with the same rules the simulation uses."""

from dsh_sidecar.sources.agent_instructions.frontmatter import *  # noqa: F403

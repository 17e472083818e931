"""dsh-sidecar: workspace instructions and session context for editor AI agents, over LSP."""

__version__ = "0.1.0"

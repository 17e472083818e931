"""The unit suite's session scaffolding, imported from its own directory."""

from __future__ import annotations

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit")
)

from instrkit import run_as_nobody, shared_tmp
from sessionkit import Kit, Prompt, opened, start

__all__ = ["Kit", "Prompt", "opened", "run_as_nobody", "shared_tmp", "start"]

"""What every worker job on one session carries (a step, a projection, a discard).

Built on the loop while the session lock is held and handed whole to one worker call: frozen
values, plus the session's instruction accelerator (``instructions``), which the job owns while
the lock is held; the loop never looks inside it and only ever replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from dsh_sidecar.model import Message
from dsh_sidecar.sources.agent_instructions.compose import ComposeEnv, SessionInstructionState
from dsh_sidecar.sources.agent_instructions.state import Change


@attrs.frozen(kw_only=True)
class SessionJob:
    session_id: str
    env: ComposeEnv
    # Owned by this job: the session lock is held while it runs, and the loop only replaces it.
    instructions: SessionInstructionState
    # Transitions the user dropped from the pending context and that still hold (discard.py).
    dismissed: Mapping[str, Change]
    # The visible agent-instructions messages when the loop knows them (None: read the store).
    visible: tuple[Message, ...] | None = None

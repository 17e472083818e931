"""The loop side of a projection: one gathered batch of a session's touches, projected.

Called by the session's ``ProjectionQueue`` when the batch's turn comes. Under the session lock
it freezes what the worker needs into a ``ProjectionJob``, runs ``project_touches`` in a store
worker, and back on the loop keeps the new inbox and tells the client when it changed. A failed
projection is reported as a warning, never raised: a touch is a notification.
"""

from __future__ import annotations

import logging

from ..host import Host
from ..live import LiveSession
from .projection import ProjectionJob, Touched, project_touches

log = logging.getLogger(__name__)
REFRESH_FAILED = "workspace instruction refresh failed: %s"


class Projector:
    def __init__(self, host: Host) -> None:
        self.host = host

    async def project(self, live: LiveSession, batch: list[Touched]) -> None:
        host = self.host
        try:
            async with live.lock:
                job = ProjectionJob(
                    session_id=live.header.id, env=host.compose_env(live.header),
                    instructions=live.instructions, dismissed=live.dismissed,
                    visible=live.kept_visible(), touched=tuple(batch), inbox=live.inbox,
                    visible_gen=live.visible_gen, memo=live.projection_memo,
                    project_root=live.project_root,
                )  # fmt: skip
                # Background work, unless somebody waits for this session's queue: then it is
                # their request's own work and runs at once (workers.py).
                result = await host.workers.background(
                    lambda: project_touches(host.store, job), live.projections.hurry
                )
                live.inbox = result.inbox
        except Exception as exc:
            log.exception("projection of %d touched path(s) failed", len(batch))
            if host.on_warning is not None:
                host.on_warning(REFRESH_FAILED % exc)
            return
        if result.changed:
            host.notify_inbox(live.header.id, result.pending_count)

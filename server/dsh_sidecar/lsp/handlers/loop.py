"""The agent loop: ``dsh/step/prepare``, ``dsh/step/end``, ``dsh/turn/end`` and the
``dsh/tool/result`` notification (the agent's touch seam)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException

from dsh_sidecar.errors import DshError
from dsh_sidecar.protocol import methods, requests
from dsh_sidecar.protocol import types as wt
from dsh_sidecar.sessions.service import Prompt

from .base import Server, request


def register(server: Server) -> None:
    async def prepare(p: wt.StepPrepareParams) -> wt.PrepareResult:
        prompt = None
        if p.prompt is not None:
            prompt = Prompt(p.prompt.text, p.prompt.client_time_zone, p.prompt.rpc_id)
        prepared = await server.service.prepare_step(p.session_id, p.turn, p.step, prompt)
        return wt.PrepareResult([m.to_json() for m in prepared.messages], list(prepared.seqs))

    async def end_step(p: wt.StepEndParams) -> None:
        await server.service.end_step(p.session_id, p.turn, p.step)

    async def end_turn(p: wt.TurnEndParams) -> None:
        await server.service.end_turn(p.session_id, p.turn, p.reason)

    request(server, requests.STEP_PREPARE, prepare)
    request(server, requests.STEP_END, end_step)
    request(server, requests.TURN_END, end_turn)

    @server.feature(methods.TOOL_RESULT)
    def tool_result(ls: Server, raw: Any) -> None:
        # A notification has no reply: a bad one is reported in the log, never fatal.
        try:
            p = ls.structure(raw, wt.ToolResultParams)
            ls.service.tool_result(
                p.session_id, p.token, p.parent_token, p.name, p.arguments, p.is_error, p.aborted
            )
        except (JsonRpcException, DshError) as exc:
            ls.log_warning(f"dsh/tool/result ignored: {getattr(exc, 'message', exc)}")

"""MCP tools of a run's review loop: its apply history, rejecting a draft, cancelling the run."""

from __future__ import annotations

from typing import Any

import msgspec
from mcp.server.mcpserver import Context, MCPServer

from groundwork.api.mcp.enhancement import APPLIES, PROPOSES, replayable
from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.enhancement_review import apply_list
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN
from groundwork.domain.errors import GroundworkError
from groundwork.services.enhancement import apply_history, cancellations, rejections


def register_enhancement_review_tools(mcp: MCPServer) -> None:
    """Register the review-loop tools on `mcp`."""

    @mcp.tool(annotations=READ_ONLY)
    async def list_run_applies(
        ctx: Context[Any, Any], run_id: str, limit: int = 20, cursor: str | None = None
    ) -> dict[str, Any]:
        """A run's apply history, oldest first: each apply's operation id, actor, time, drafts, the work item's
        version before and after, and each field's value before and after."""
        try:
            rows, page = await apply_history.list_run_applies(
                caller(ctx, SCOPE_READ), run_id, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        answer: dict[str, Any] = msgspec.to_builtins(apply_list(rows, page))
        return answer

    @mcp.tool(annotations=PROPOSES)
    async def reject_draft(
        ctx: Context[Any, Any],
        run_id: str,
        draft_id: str,
        reason: str,
        idempotency_key: str,
        confirm: bool | None = None,
    ) -> dict[str, Any]:
        """Reject a draft with a reason (1-500 characters): it is never applied afterwards. Needs `confirm: true`;
        an applied draft cannot be rejected."""

        async def reject(principal: Any) -> dict[str, Any]:
            view = await rejections.reject_draft(principal, run_id, draft_id, reason, confirm)
            return {"run_id": view.run.id}

        request = {"run_id": run_id, "draft_id": draft_id, "reason": reason, "confirm": confirm}
        return await replayable(ctx, SCOPE_APPLY, idempotency_key, "reject_draft", request, reject)

    @mcp.tool(annotations=APPLIES)
    async def cancel_enhancement_run(
        ctx: Context[Any, Any], run_id: str, idempotency_key: str, confirm: bool | None = None
    ) -> dict[str, Any]:
        """Cancel a run: its pending actions stop and none of its drafts can be applied any more. Needs
        `confirm: true`; a failed, expired or cancelled run cannot be cancelled."""

        async def cancel(principal: Any) -> dict[str, Any]:
            view, finished = await cancellations.cancel_run(principal, run_id, confirm)
            return {"run_id": view.run.id, "pending": not finished}

        request = {"run_id": run_id, "confirm": confirm}
        return await replayable(ctx, SCOPE_RUN, idempotency_key, "cancel_enhancement_run", request, cancel)

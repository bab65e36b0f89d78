"""MCP tools for work item enhancement: read, propose, and apply only after an explicit confirmation."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.enhancement import artifact_resource, draft_resource, run_resource
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN
from groundwork.domain.errors import GroundworkError
from groundwork.platform.idempotency.calls import call_once
from groundwork.services.enhancement import applies, outputs, run_views
from groundwork.services.enhancement import runs as service

# Creating a run or running an action adds proposals but changes no work item.
PROPOSES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# Applying overwrites work item fields: clients should ask the user first.
APPLIES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)


async def replayable(
    ctx: Context[Any, Any], scope: str, key: str, operation: str, request: dict[str, Any], call: Any
) -> dict[str, Any]:
    """Run a tool's change once per idempotency key and answer the run it changed (or its stored error)."""
    principal = caller(ctx, scope)
    try:
        outcome, replayed = await call_once(principal, key, operation, request, lambda: call(principal))
    except GroundworkError as error:
        raise tool_error(error) from None
    if "error" in outcome:
        raise tool_error(StoredError(outcome["error"]))
    view = await run_views.load_run(principal, outcome["run_id"])  # the tool's own scope suffices
    answer: dict[str, Any] = {"data": run_resource(view), "idempotency_replayed": replayed}
    if outcome.get("pending"):  # the deadline passed first: the operation goes on
        answer["pending"] = True
        answer["operation"] = f"/api/v1/operations/{view.run.id}"
    return answer


class StoredError(GroundworkError):
    """A stored error outcome, rendered again on replay."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(
            error.get("message", ""), extra={k: v for k, v in error.items() if k not in ("code", "message")}
        )
        self.code = error["code"]


def register_enhancement_tools(mcp: MCPServer) -> None:
    """Register the enhancement tools on `mcp`."""

    @mcp.tool(annotations=READ_ONLY)
    async def list_enhancement_runs(
        ctx: Context[Any, Any],
        state: str | None = None,
        target_id: str | None = None,
        action: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Enhancement runs of visible projects, newest first; filter by state, target work item or action."""
        try:
            views, page = await service.list_runs(
                caller(ctx, SCOPE_READ), state=state, target_id=target_id, action=action, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": [run_resource(v) for v in views], "page": page}

    @mcp.tool(annotations=PROPOSES)
    async def create_enhancement_run(
        ctx: Context[Any, Any],
        work_item_id: str,
        actions: list[str],
        idempotency_key: str,
        confirm: bool | None = None,
        instructions: str | None = None,
        wait: int = 10,
    ) -> dict[str, Any]:
        """Propose drafts for a work item. Actions: requirements, description, design, implementation_plan,
        acceptance_criteria, test_plan, estimate, risk_check. Never changes the work item. Pass a fresh
        `idempotency_key` (reuse it only to retry the same call) and `confirm: true`."""

        async def create(principal: Any) -> dict[str, Any]:
            view = await service.create_run(
                principal,
                service.CreateRun("work_item", work_item_id, actions, instructions, confirm),
                wait,
                idempotency_key=idempotency_key,
            )
            return {"run_id": view.run.id}

        request = {"work_item_id": work_item_id, "actions": actions, "instructions": instructions, "confirm": confirm}
        return await replayable(ctx, SCOPE_RUN, idempotency_key, "create_enhancement_run", request, create)

    @mcp.tool(annotations=READ_ONLY)
    async def get_enhancement_run(ctx: Context[Any, Any], run_id: str) -> dict[str, Any]:
        """A run with its target, drafts, artifacts, evidence references and allowed next actions."""
        try:
            return {"data": run_resource(await run_views.read_run(caller(ctx, SCOPE_READ), run_id))}
        except GroundworkError as error:
            raise tool_error(error) from None

    @mcp.tool(annotations=PROPOSES)
    async def run_enhancement_action(
        ctx: Context[Any, Any],
        run_id: str,
        action: str,
        idempotency_key: str,
        confirm: bool | None = None,
        instructions: str | None = None,
        wait: int = 10,
    ) -> dict[str, Any]:
        """Run one more action on a run that is ready for review; adds drafts, changes no work item."""

        async def act(principal: Any) -> dict[str, Any]:
            view, finished = await service.run_action(
                principal, run_id, action, instructions, confirm, wait, idempotency_key
            )
            return {"run_id": view.run.id, "pending": not finished}

        request = {"run_id": run_id, "action": action, "instructions": instructions, "confirm": confirm}
        return await replayable(ctx, SCOPE_RUN, idempotency_key, "run_enhancement_action", request, act)

    @mcp.tool(annotations=READ_ONLY)
    async def list_enhancement_drafts(
        ctx: Context[Any, Any],
        run_id: str,
        field: str | None = None,
        apply_eligible: bool | None = None,
        action: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Drafts of a run: proposed values per field with confidence, evidence and eligibility."""
        try:
            view, drafts, page = await outputs.list_drafts(
                caller(ctx, SCOPE_READ),
                run_id,
                field=field,
                apply_eligible=apply_eligible,
                action=action,
                limit=limit,
                cursor=cursor,
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {
            "data": [draft_resource(d, view.eligible[d.id], view.ineligible_reasons.get(d.id)) for d in drafts],
            "page": page,
        }

    @mcp.tool(annotations=READ_ONLY)
    async def list_enhancement_artifacts(
        ctx: Context[Any, Any],
        run_id: str,
        type: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Artifacts of a run: review material (traces, plans, matrices, risk reports, evidence digests)."""
        try:
            rows, page = await outputs.list_artifacts(
                caller(ctx, SCOPE_READ), run_id, type=type, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": [artifact_resource(a) for a in rows], "page": page}

    @mcp.tool(annotations=READ_ONLY)
    async def get_operation_status(ctx: Context[Any, Any], run_id: str) -> dict[str, Any]:
        """The run's operation status, read live from Temporal."""
        try:
            return {"data": await service.operation_status(caller(ctx, SCOPE_READ), run_id)}
        except GroundworkError as error:
            raise tool_error(error) from None

    @mcp.tool(annotations=READ_ONLY)
    async def prepare_apply(ctx: Context[Any, Any], run_id: str, draft_ids: list[str]) -> dict[str, Any]:
        """Show the user exactly what applying these drafts would change, and the version to confirm with.
        Changes nothing. Then call apply_drafts with `confirm: true` and `expected_target_version`."""
        try:
            diff, version = await applies.prepare_apply(caller(ctx, SCOPE_APPLY), run_id, draft_ids)
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": applies.diff_resource(diff, version)}

    @mcp.tool(annotations=APPLIES)
    async def apply_drafts(
        ctx: Context[Any, Any],
        run_id: str,
        draft_ids: list[str],
        expected_target_version: str,
        idempotency_key: str,
        confirm: bool | None = None,
    ) -> dict[str, Any]:
        """Apply drafts to the work item after the user confirmed the diff from prepare_apply. Needs
        `confirm: true` and the `expected_target_version` prepare_apply returned; a stale version changes nothing."""

        async def apply(principal: Any) -> dict[str, Any]:
            view, finished = await applies.apply_drafts(
                principal, run_id, draft_ids, expected_target_version, confirm, idempotency_key
            )
            return {"run_id": view.run.id, "pending": not finished}

        request = {
            "run_id": run_id,
            "draft_ids": draft_ids,
            "expected_target_version": expected_target_version,
            "confirm": confirm,
        }
        return await replayable(ctx, SCOPE_APPLY, idempotency_key, "apply_drafts", request, apply)

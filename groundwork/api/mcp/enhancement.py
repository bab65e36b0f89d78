"""MCP tools for work item enhancement: read, propose, and apply only after an explicit confirmation."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

from groundwork.api.mcp.answers import listed
from groundwork.api.mcp.arguments import (
    Action,
    ActionFilter,
    Actions,
    ApplyEligible,
    ArtifactType,
    Confirm,
    Cursor,
    DraftField,
    DraftIds,
    IdempotencyKey,
    Instructions,
    Limit,
    RunId,
    RunState,
    TargetFilter,
    TargetVersion,
    Wait,
    WorkItemId,
)
from groundwork.api.mcp.server import READ_ONLY, GroundworkMCPServer, caller, tool_error
from groundwork.api.resources.enhancement import artifact_resource, draft_resource, run_resource
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN, FieldDiff
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
    answer: dict[str, Any] = {"data": run_resource(view), "idempotencyReplayed": replayed}
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


def diff_resource(diff: list[FieldDiff], version: str) -> dict[str, Any]:
    """The confirmation body: each field's value now and the value applying would write, and the version to
    send back."""
    return {
        "diff": [
            {
                "field": d.field,
                "currentValue": d.current_value,
                "proposedValue": d.proposed_value,
                "draftId": d.draft_id,
            }
            for d in diff
        ],
        "currentVersion": version,
    }


def register_enhancement_tools(mcp: GroundworkMCPServer) -> None:
    """Register the enhancement tools on `mcp`."""

    @mcp.groundwork_tool(title="List enhancement runs", scopes=[SCOPE_READ], annotations=READ_ONLY)
    async def list_enhancement_runs(
        ctx: Context[Any, Any],
        state: RunState = None,
        target_id: TargetFilter = None,
        action: ActionFilter = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Enhancement runs of visible projects, newest first; filter by state, target work item or action."""
        try:
            views, page = await service.list_runs(
                caller(ctx, SCOPE_READ), state=state, target_id=target_id, action=action, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return listed([run_resource(v) for v in views], page)

    @mcp.groundwork_tool(title="Create an enhancement run", scopes=[SCOPE_RUN], annotations=PROPOSES)
    async def create_enhancement_run(
        ctx: Context[Any, Any],
        work_item_id: WorkItemId,
        actions: Actions,
        idempotency_key: IdempotencyKey,
        confirm: Confirm = None,
        instructions: Instructions = None,
        wait: Wait = 10,
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

    @mcp.groundwork_tool(title="Get an enhancement run", scopes=[SCOPE_READ], annotations=READ_ONLY)
    async def get_enhancement_run(ctx: Context[Any, Any], run_id: RunId) -> dict[str, Any]:
        """A run with its target, drafts, artifacts, evidence references and allowed next actions."""
        try:
            return {"data": run_resource(await run_views.read_run(caller(ctx, SCOPE_READ), run_id))}
        except GroundworkError as error:
            raise tool_error(error) from None

    @mcp.groundwork_tool(title="Run an enhancement action", scopes=[SCOPE_RUN], annotations=PROPOSES)
    async def run_enhancement_action(
        ctx: Context[Any, Any],
        run_id: RunId,
        action: Action,
        idempotency_key: IdempotencyKey,
        confirm: Confirm = None,
        instructions: Instructions = None,
        wait: Wait = 10,
    ) -> dict[str, Any]:
        """Run one more action on a run that is ready for review; adds drafts, changes no work item."""

        async def act(principal: Any) -> dict[str, Any]:
            view, finished = await service.run_action(
                principal, run_id, action, instructions, confirm, wait, idempotency_key
            )
            return {"run_id": view.run.id, "pending": not finished}

        request = {"run_id": run_id, "action": action, "instructions": instructions, "confirm": confirm}
        return await replayable(ctx, SCOPE_RUN, idempotency_key, "run_enhancement_action", request, act)

    @mcp.groundwork_tool(title="List a run's drafts", scopes=[SCOPE_READ], annotations=READ_ONLY)
    async def list_enhancement_drafts(
        ctx: Context[Any, Any],
        run_id: RunId,
        field: DraftField = None,
        apply_eligible: ApplyEligible = None,
        action: ActionFilter = None,
        limit: Limit = 20,
        cursor: Cursor = None,
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
        return listed([draft_resource(d, view.eligible[d.id], view.ineligible_reasons.get(d.id)) for d in drafts], page)

    @mcp.groundwork_tool(title="List a run's artifacts", scopes=[SCOPE_READ], annotations=READ_ONLY)
    async def list_enhancement_artifacts(
        ctx: Context[Any, Any],
        run_id: RunId,
        type: ArtifactType = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Artifacts of a run: review material (traces, plans, matrices, risk reports, evidence digests)."""
        try:
            rows, page = await outputs.list_artifacts(
                caller(ctx, SCOPE_READ), run_id, type=type, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return listed([artifact_resource(a) for a in rows], page)

    @mcp.groundwork_tool(title="Get a run's operation status", scopes=[SCOPE_READ], annotations=READ_ONLY)
    async def get_operation_status(ctx: Context[Any, Any], run_id: RunId) -> dict[str, Any]:
        """The run's operation status, read live from Temporal."""
        try:
            return {"data": await service.operation_status(caller(ctx, SCOPE_READ), run_id)}
        except GroundworkError as error:
            raise tool_error(error) from None

    @mcp.groundwork_tool(title="Prepare an apply", scopes=[SCOPE_APPLY], annotations=READ_ONLY)
    async def prepare_apply(ctx: Context[Any, Any], run_id: RunId, draft_ids: DraftIds) -> dict[str, Any]:
        """Show the user exactly what applying these drafts would change, and the version to confirm with.
        Changes nothing. Then call apply_drafts with `confirm: true` and `expected_target_version`."""
        try:
            diff, version = await applies.prepare_apply(caller(ctx, SCOPE_APPLY), run_id, draft_ids)
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": diff_resource(diff, version)}

    @mcp.groundwork_tool(title="Apply drafts", scopes=[SCOPE_APPLY], annotations=APPLIES)
    async def apply_drafts(
        ctx: Context[Any, Any],
        run_id: RunId,
        draft_ids: DraftIds,
        expected_target_version: TargetVersion,
        idempotency_key: IdempotencyKey,
        confirm: Confirm = None,
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

"""GraphQL of a run's review loop: its applies (a connection on the run), rejecting a draft, cancelling the run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, authorize, require
from groundwork.api.graphql.enhancement import WorkItemEnhancementRun
from groundwork.api.graphql.mutation_errors import MutationError, mutation_errors, refused
from groundwork.api.resources.enhancement_review import apply_resource
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN
from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.idempotency.calls import call_once
from groundwork.services.enhancement import apply_history, cancellations, rejections, run_views


@strawberry.type(description="One field an apply wrote: the draft that proposed it, the value before and after.")
class EnhancementFieldChange:
    field: str
    draft_id: strawberry.ID | None
    before: JSON | None
    after: JSON | None


@strawberry.type(description="One apply of a run's drafts to its work item.")
class EnhancementApply:
    operation_id: strawberry.ID = strawberry.field(description="The apply's id (`apply_...`), its Update's id.")
    actor_id: strawberry.ID
    applied_at: str
    draft_ids: list[strawberry.ID]
    target_version_before: str
    target_version_after: str
    changes: list[EnhancementFieldChange]


@strawberry.type
class EnhancementApplyConnection:
    nodes: list[EnhancementApply]
    next_cursor: str | None
    has_more: bool


async def run_applies(
    info: Info[GraphQLContext, Any], run_id: str, first: int | None, after: str | None
) -> EnhancementApplyConnection:
    """A page of a run's applies, oldest first (`after`: the `nextCursor` of the previous page)."""
    try:
        rows, page = await apply_history.list_run_applies(require(info, SCOPE_READ), run_id, limit=first, cursor=after)
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    nodes = []
    for row in rows:
        data = apply_resource(row)
        nodes.append(
            EnhancementApply(
                operation_id=strawberry.ID(data.operation_id),
                actor_id=strawberry.ID(data.actor_id),
                applied_at=data.applied_at,
                draft_ids=[strawberry.ID(d) for d in data.draft_ids],
                target_version_before=data.target_version_before,
                target_version_after=data.target_version_after,
                changes=[
                    EnhancementFieldChange(
                        field=c.field,
                        draft_id=strawberry.ID(c.draft_id) if c.draft_id else None,
                        before=c.before,
                        after=c.after,
                    )
                    for c in data.changes
                ],
            )
        )
    return EnhancementApplyConnection(nodes=nodes, next_cursor=page["next_cursor"], has_more=page["has_more"])


@strawberry.type
class RejectDraftPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]


@strawberry.type
class CancelEnhancementRunPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]
    pending: bool = strawberry.field(
        default=False, description="True when the cancellation was not recorded within its wait; it goes on."
    )


@strawberry.input
class RejectDraftInput:
    run_id: strawberry.ID
    draft_id: strawberry.ID
    reason: str
    confirm: bool | None = None
    idempotency_key: str | None = None


@strawberry.input
class CancelEnhancementRunInput:
    run_id: strawberry.ID
    confirm: bool | None = None
    idempotency_key: str | None = None


def _key(info: Info[GraphQLContext, Any], given: str | None) -> str | None:
    request = info.context.request
    return given or (request.headers.get("idempotency-key") if request is not None else None)


async def _once(
    info: Info[GraphQLContext, Any],
    scope: str,
    key: str | None,
    operation: str,
    request: dict[str, Any],
    call: Callable[[Principal], Awaitable[dict[str, Any]]],
) -> tuple[dict[str, Any], bool, WorkItemEnhancementRun | None]:
    """Run a change once per idempotency key: its outcome, whether replayed, and the run it changed."""
    principal = authorize(info, scope)
    outcome, replayed = await call_once(principal, key, operation, request, lambda: call(principal))
    run_id = outcome.get("run_id")
    run = WorkItemEnhancementRun.of(await run_views.load_run(principal, run_id)) if run_id else None
    return outcome, replayed, run


async def reject_draft(info: Info[GraphQLContext, Any], input: RejectDraftInput) -> RejectDraftPayload:
    """Reject a draft with a reason (needs confirm: true and an idempotency key); it is never applied afterwards."""
    key = _key(info, input.idempotency_key)

    async def reject(principal: Principal) -> dict[str, Any]:
        view = await rejections.reject_draft(
            principal, str(input.run_id), str(input.draft_id), input.reason, input.confirm
        )
        return {"run_id": view.run.id}

    request = {
        "run_id": str(input.run_id),
        "draft_id": str(input.draft_id),
        "reason": input.reason,
        "confirm": input.confirm,
    }
    try:
        outcome, replayed, run = await _once(info, SCOPE_APPLY, key, "rejectDraft", request, reject)
    except GroundworkError as error:
        return RejectDraftPayload(ok=False, idempotency_replayed=False, run=None, errors=refused(error))
    return RejectDraftPayload(
        ok="error" not in outcome, idempotency_replayed=replayed, run=run, errors=mutation_errors(outcome)
    )


async def cancel_enhancement_run(
    info: Info[GraphQLContext, Any], input: CancelEnhancementRunInput
) -> CancelEnhancementRunPayload:
    """Cancel a run: its pending actions stop and nothing can be applied (needs confirm: true)."""
    key = _key(info, input.idempotency_key)

    async def cancel(principal: Principal) -> dict[str, Any]:
        view, finished = await cancellations.cancel_run(principal, str(input.run_id), input.confirm)
        return {"run_id": view.run.id, "pending": not finished}

    request = {"run_id": str(input.run_id), "confirm": input.confirm}
    try:
        outcome, replayed, run = await _once(info, SCOPE_RUN, key, "cancelEnhancementRun", request, cancel)
    except GroundworkError as error:
        return CancelEnhancementRunPayload(ok=False, idempotency_replayed=False, run=None, errors=refused(error))
    return CancelEnhancementRunPayload(
        ok="error" not in outcome,
        idempotency_replayed=replayed,
        run=run,
        errors=mutation_errors(outcome),
        pending=bool(outcome.get("pending")),
    )

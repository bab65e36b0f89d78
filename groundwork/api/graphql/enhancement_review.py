"""GraphQL of a run's review loop: its applies (a connection on the run), rejecting a draft, cancelling the run."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.enhancement import WorkItemEnhancementRun, idempotency_key, mutate
from groundwork.api.graphql.enums import DateTime
from groundwork.api.graphql.mutation_errors import MutationError
from groundwork.api.resources.enhancement_review import apply_resource
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN
from groundwork.domain.errors import GroundworkError
from groundwork.domain.pagination import encode_cursor
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.enhancement import apply_history, cancellations, rejections


@strawberry.type(description="One field an apply wrote: the draft that proposed it, the value before and after.")
class WorkItemEnhancementFieldChange:
    field: str
    draft_id: strawberry.ID | None
    before: JSON | None
    after: JSON | None


@strawberry.type(description="One apply of a run's drafts to its work item.")
class WorkItemEnhancementApply:
    operation_id: strawberry.ID = strawberry.field(description="The apply's id (`apply_...`), its Update's id.")
    actor_id: strawberry.ID
    applied_at: DateTime
    draft_ids: list[strawberry.ID]
    target_version_before: str
    target_version_after: str
    changes: list[WorkItemEnhancementFieldChange]
    # Where the list resumes after this apply (the service pages by time, then id); not part of the schema.
    cursor: strawberry.Private[str]


@strawberry.type(description="A page of a run's applies, oldest first.")
class WorkItemEnhancementApplyConnection:
    edges: list[Edge[WorkItemEnhancementApply]]
    nodes: list[WorkItemEnhancementApply]
    page_info: PageInfo


async def run_applies(
    info: Info[GraphQLContext, Any], run_id: str, first: int | None, after: str | None
) -> WorkItemEnhancementApplyConnection:
    """A page of a run's applies, oldest first (`after`: an edge's cursor)."""
    try:
        rows, page = await apply_history.list_run_applies(require(info, SCOPE_READ), run_id, limit=first, cursor=after)
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    nodes = []
    for row in rows:
        data = apply_resource(row)
        nodes.append(
            WorkItemEnhancementApply(
                cursor=encode_cursor({"at": row.applied_at.isoformat(), "id": row.id}),
                operation_id=strawberry.ID(data.operation_id),
                actor_id=strawberry.ID(data.actor_id),
                applied_at=data.applied_at,
                draft_ids=[strawberry.ID(d) for d in data.draft_ids],
                target_version_before=data.target_version_before,
                target_version_after=data.target_version_after,
                changes=[
                    WorkItemEnhancementFieldChange(
                        field=c.field,
                        draft_id=strawberry.ID(c.draft_id) if c.draft_id else None,
                        before=c.before,
                        after=c.after,
                    )
                    for c in data.changes
                ],
            )
        )
    return WorkItemEnhancementApplyConnection(**connection_fields(nodes, page, cursor_of=lambda a: a.cursor))


@strawberry.type
class RejectWorkItemEnhancementDraftPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]


@strawberry.type
class CancelWorkItemEnhancementRunPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]
    pending: bool = strawberry.field(
        default=False, description="True when the cancellation was not recorded within its wait; it goes on."
    )


@strawberry.input
class RejectWorkItemEnhancementDraftInput:
    run_id: strawberry.ID
    draft_id: strawberry.ID
    reason: str
    confirm: bool | None = None
    idempotency_key: str | None = None


@strawberry.input
class CancelWorkItemEnhancementRunInput:
    run_id: strawberry.ID
    confirm: bool | None = None
    idempotency_key: str | None = None


async def reject_work_item_enhancement_draft(
    info: Info[GraphQLContext, Any], input: RejectWorkItemEnhancementDraftInput
) -> RejectWorkItemEnhancementDraftPayload:
    """Reject a draft with a reason (needs confirm: true and an idempotency key); it is never applied afterwards."""

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
    key = idempotency_key(info, input.idempotency_key)
    return await mutate(
        RejectWorkItemEnhancementDraftPayload, info, SCOPE_APPLY, key, "rejectWorkItemEnhancementDraft", request, reject
    )


async def cancel_work_item_enhancement_run(
    info: Info[GraphQLContext, Any], input: CancelWorkItemEnhancementRunInput
) -> CancelWorkItemEnhancementRunPayload:
    """Cancel a run: its pending actions stop and nothing can be applied (needs confirm: true)."""

    async def cancel(principal: Principal) -> dict[str, Any]:
        view, finished = await cancellations.cancel_run(principal, str(input.run_id), input.confirm)
        return {"run_id": view.run.id, "pending": not finished}

    request = {"run_id": str(input.run_id), "confirm": input.confirm}
    key = idempotency_key(info, input.idempotency_key)
    return await mutate(
        CancelWorkItemEnhancementRunPayload, info, SCOPE_RUN, key, "cancelWorkItemEnhancementRun", request, cancel
    )

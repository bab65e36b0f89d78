"""GraphQL for work item enhancement: the spec's operations, plus run listing and named actions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from groundwork.api.graphql.connections import DEPRECATED_UNTIL, Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, authorize, require
from groundwork.api.graphql.enums import (
    EvidenceKind,
    WorkItemEnhancementAction,
    WorkItemEnhancementArtifactType,
    WorkItemEnhancementDraftField,
    WorkItemEnhancementRunState,
)
from groundwork.api.graphql.mutation_errors import MutationError, mutation_errors, refused
from groundwork.api.graphql.operations import Operation
from groundwork.api.resources.enhancement import artifact_resource, run_resource
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN
from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.idempotency.calls import call_once
from groundwork.services.enhancement import applies, outputs, run_views
from groundwork.services.enhancement import runs as service

if TYPE_CHECKING:
    from groundwork.api.graphql.enhancement_review import WorkItemEnhancementApplyConnection

_REVIEW = "groundwork.api.graphql.enhancement_review"


@strawberry.type
class EvidenceRef:
    kind: EvidenceKind
    id: strawberry.ID
    href: str | None = strawberry.field(description="The API path that opens it (null for an external reference).")


@strawberry.type
class EnhancementTarget:
    id: strawberry.ID
    key: str
    title: str
    version: str


@strawberry.type(description="One statement of a draft's proposed value and the evidence it was taken from.")
class DraftStatement:
    text: str
    relevance: float = strawberry.field(description="How much of the work item's weighted words it shares, 0 to 1.")
    evidence_refs: list[EvidenceRef]


@strawberry.type(description="A reviewer's rejection of a draft: it is never applied afterwards.")
class DraftRejection:
    reason: str
    rejected_by: strawberry.ID
    rejected_at: str


@strawberry.type
class WorkItemEnhancementDraft:
    id: strawberry.ID
    action: WorkItemEnhancementAction
    field: WorkItemEnhancementDraftField
    proposed_value: JSON
    confidence: float
    evidence_refs: list[EvidenceRef]
    statements: list[DraftStatement] = strawberry.field(
        description="Each statement of the proposed value with its own evidence references and relevance."
    )
    apply_eligible: bool
    ineligible_reason: str | None = strawberry.field(
        default=None, description="Why the draft cannot be applied now (null when it can)."
    )
    rejection: DraftRejection | None = strawberry.field(
        default=None, description="Who rejected the draft, when and why (null unless rejected)."
    )


@strawberry.type
class WorkItemEnhancementArtifact:
    id: strawberry.ID
    type: WorkItemEnhancementArtifactType
    title: str
    summary: str
    body: str
    evidence_refs: list[EvidenceRef]


@strawberry.type
class AllowedAction:
    id: str
    label: str
    required_scope: str


def _refs(items: list[dict[str, str]]) -> list[EvidenceRef]:
    return [EvidenceRef(kind=r["kind"], id=strawberry.ID(r["id"]), href=r.get("href")) for r in items]


def draft_of(data: dict[str, Any]) -> WorkItemEnhancementDraft:
    """A draft type from its REST resource (one shape for every transport)."""
    return WorkItemEnhancementDraft(
        id=strawberry.ID(data["id"]),
        action=data["action"],
        field=data["field"],
        proposed_value=data["proposedValue"],
        confidence=data["confidence"],
        evidence_refs=_refs(data["evidenceRefs"]),
        statements=[
            DraftStatement(text=s["text"], relevance=s["relevance"], evidence_refs=_refs(s["evidenceRefs"]))
            for s in data["statements"]
        ],
        apply_eligible=data["applyEligible"],
        ineligible_reason=data.get("ineligibleReason"),
        rejection=DraftRejection(
            reason=rejection["reason"],
            rejected_by=strawberry.ID(rejection["rejectedBy"]),
            rejected_at=rejection["rejectedAt"],
        )
        if (rejection := data.get("rejection"))
        else None,
    )


def artifact_of(data: dict[str, Any]) -> WorkItemEnhancementArtifact:
    """An artifact type from its REST resource."""
    return WorkItemEnhancementArtifact(
        id=strawberry.ID(data["id"]),
        type=data["type"],
        title=data["title"],
        summary=data["summary"],
        body=data["body"],
        evidence_refs=_refs(data["evidenceRefs"]),
    )


@strawberry.type
class WorkItemEnhancementRun:
    id: strawberry.ID
    state: WorkItemEnhancementRunState
    target: EnhancementTarget
    requested_actions: list[WorkItemEnhancementAction]
    drafts: list[WorkItemEnhancementDraft]
    artifacts: list[WorkItemEnhancementArtifact]
    allowed_actions: list[AllowedAction]
    applied_draft_ids: list[strawberry.ID]

    @strawberry.field(description="Live operation status of the run, read from Temporal.")
    async def operation(self, info: Info[GraphQLContext, Any]) -> Operation:
        try:
            data = await service.operation_status(require(info, SCOPE_READ), str(self.id))
        except GroundworkError as error:
            raise as_graphql_error(error) from None
        return Operation.of(data)

    @strawberry.field(description="The run's applies, oldest first: who, when, drafts, versions and values.")
    async def applies(
        self, info: Info[GraphQLContext, Any], first: int | None = None, after: str | None = None
    ) -> Annotated[WorkItemEnhancementApplyConnection, strawberry.lazy(_REVIEW)]:
        from groundwork.api.graphql.enhancement_review import run_applies  # it imports this module

        return await run_applies(info, str(self.id), first, after)

    @classmethod
    def of(cls, view: run_views.RunView) -> WorkItemEnhancementRun:
        data = run_resource(view)
        return cls(
            id=strawberry.ID(data["id"]),
            state=data["state"],
            target=EnhancementTarget(**data["target"]),
            requested_actions=data["requestedActions"],
            drafts=[draft_of(d) for d in data["drafts"]],
            artifacts=[artifact_of(a) for a in data["artifacts"]],
            allowed_actions=[
                AllowedAction(id=a["id"], label=a["label"], required_scope=a["requiredScope"])
                for a in data["allowedActions"]
            ],
            applied_draft_ids=[strawberry.ID(i) for i in data["appliedDraftIds"]],
        )


@strawberry.type
class CreateWorkItemEnhancementRunPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]


_PENDING = "True when the call's deadline passed first: the operation goes on; read it at /api/v1/operations/{id}."


@strawberry.type
class RunWorkItemEnhancementActionPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]
    pending: bool = strawberry.field(default=False, description=_PENDING)


@strawberry.type
class ApplyWorkItemEnhancementDraftsPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]
    pending: bool = strawberry.field(default=False, description=_PENDING)


@strawberry.input
class EnhancementTargetInput:
    type: str
    id: strawberry.ID


@strawberry.input
class CreateWorkItemEnhancementRunInput:
    target: EnhancementTargetInput
    actions: list[WorkItemEnhancementAction]
    instructions: str | None = None
    confirm: bool | None = None
    idempotency_key: str | None = None
    wait: int | None = None


@strawberry.input
class RunWorkItemEnhancementActionInput:
    run_id: strawberry.ID
    action: WorkItemEnhancementAction
    instructions: str | None = None
    confirm: bool | None = None
    idempotency_key: str | None = None
    wait: int | None = None


@strawberry.input
class ApplyWorkItemEnhancementDraftsInput:
    run_id: strawberry.ID
    draft_ids: list[strawberry.ID]
    expected_target_version: str
    confirm: bool | None = None
    idempotency_key: str | None = None


@strawberry.type
class WorkItemEnhancementRunConnection:
    edges: list[Edge[WorkItemEnhancementRun]]
    nodes: list[WorkItemEnhancementRun]
    page_info: PageInfo
    next_cursor: str | None = strawberry.field(
        description="The cursor of the next page (null on the last page).",
        deprecation_reason="Use `pageInfo.endCursor` with `pageInfo.hasNextPage`" + DEPRECATED_UNTIL,
    )
    has_more: bool = strawberry.field(
        description="True when more runs follow this page.",
        deprecation_reason="Use `pageInfo.hasNextPage`" + DEPRECATED_UNTIL,
    )


def idempotency_key(info: Info[GraphQLContext, Any], given: str | None) -> str | None:
    """The mutation's idempotency key: its input's, else the request's `Idempotency-Key` header."""
    request = info.context.request
    return given or (request.headers.get("idempotency-key") if request is not None else None)


async def _run_or_none(principal: Principal, outcome: dict[str, Any]) -> WorkItemEnhancementRun | None:
    # The mutation's own scope suffices to see the run it just changed (as REST answers it).
    run_id = outcome.get("run_id")
    if not run_id:
        return None
    return WorkItemEnhancementRun.of(await run_views.load_run(principal, run_id))


# The payload of an enhancement mutation: `ok`, `idempotencyReplayed`, `run`, `errors` (and `pending` on some).
PayloadT = TypeVar("PayloadT")


async def mutate(
    payload: Callable[..., PayloadT],
    info: Info[GraphQLContext, Any],
    scope: str,
    key: str | None,
    operation: str,
    request: dict[str, Any],
    call: Callable[[Principal], Awaitable[dict[str, Any]]],
) -> PayloadT:
    """Run a mutation once per idempotency key and shape its payload (`ok`, `idempotencyReplayed`, ...).

    Every failure - a missing key or scope included - answers `ok: false` with coded `errors`.
    """
    try:
        principal = authorize(info, scope)
        outcome, replayed = await call_once(principal, key, operation, request, lambda: call(principal))
    except GroundworkError as error:
        return payload(
            ok=False,
            idempotency_replayed=False,
            run=None,
            errors=refused(error),
        )
    result = payload(
        ok="error" not in outcome,
        idempotency_replayed=replayed,
        run=await _run_or_none(principal, outcome),
        errors=mutation_errors(outcome),
    )
    if outcome.get("pending") and hasattr(result, "pending"):
        result.pending = True  # type: ignore[attr-defined]
    return result


async def create_work_item_enhancement_run(
    info: Info[GraphQLContext, Any], input: CreateWorkItemEnhancementRunInput
) -> CreateWorkItemEnhancementRunPayload:
    """Create a run (needs confirm: true and an idempotency key)."""
    key = idempotency_key(info, input.idempotency_key)

    async def create(principal: Principal) -> dict[str, Any]:
        view = await service.create_run(
            principal,
            service.CreateRun(
                input.target.type, str(input.target.id), input.actions, input.instructions, input.confirm
            ),
            input.wait,
            idempotency_key=key,
        )
        return {"run_id": view.run.id}

    request = {
        "target": {"type": input.target.type, "id": str(input.target.id)},
        "actions": input.actions,
        "instructions": input.instructions,
        "confirm": input.confirm,
    }
    return await mutate(
        CreateWorkItemEnhancementRunPayload,
        info,
        SCOPE_RUN,
        key,
        "createWorkItemEnhancementRun",
        request,
        create,
    )


async def run_work_item_enhancement_action(
    info: Info[GraphQLContext, Any], input: RunWorkItemEnhancementActionInput
) -> RunWorkItemEnhancementActionPayload:
    """Run one more action on a reviewable run."""
    key = idempotency_key(info, input.idempotency_key)

    async def act(principal: Principal) -> dict[str, Any]:
        view, finished = await service.run_action(
            principal, str(input.run_id), input.action, input.instructions, input.confirm, input.wait, key
        )
        return {"run_id": view.run.id, "pending": not finished}

    request = {
        "run_id": str(input.run_id),
        "action": input.action,
        "instructions": input.instructions,
        "confirm": input.confirm,
    }
    return await mutate(
        RunWorkItemEnhancementActionPayload, info, SCOPE_RUN, key, "runWorkItemEnhancementAction", request, act
    )


async def apply_work_item_enhancement_drafts(
    info: Info[GraphQLContext, Any], input: ApplyWorkItemEnhancementDraftsInput
) -> ApplyWorkItemEnhancementDraftsPayload:
    """Apply selected drafts, with the same explicit target-version guard as REST."""
    key = idempotency_key(info, input.idempotency_key)

    async def apply(principal: Principal) -> dict[str, Any]:
        view, finished = await applies.apply_drafts(
            principal,
            str(input.run_id),
            [str(d) for d in input.draft_ids],
            input.expected_target_version,
            input.confirm,
            key,
        )
        return {"run_id": view.run.id, "pending": not finished}

    request = {
        "run_id": str(input.run_id),
        "draft_ids": [str(d) for d in input.draft_ids],
        "expected_target_version": input.expected_target_version,
        "confirm": input.confirm,
    }
    return await mutate(
        ApplyWorkItemEnhancementDraftsPayload, info, SCOPE_APPLY, key, "applyWorkItemEnhancementDrafts", request, apply
    )


async def work_item_enhancement_run(
    info: Info[GraphQLContext, Any], id: strawberry.ID
) -> WorkItemEnhancementRun | None:
    """One run, or null when the caller cannot see it."""
    try:
        return WorkItemEnhancementRun.of(await run_views.read_run(require(info, SCOPE_READ), str(id)))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None


async def work_item_enhancement_drafts(
    info: Info[GraphQLContext, Any],
    run_id: strawberry.ID,
    field: WorkItemEnhancementDraftField | None = None,
    apply_eligible: bool | None = None,
    first: int | None = None,
    after: strawberry.ID | None = None,
) -> list[WorkItemEnhancementDraft]:
    """Drafts of a run, newest first, filtered by field and eligibility; `first` (1-100, default 20) per page,
    `after` the id of the last draft of the previous page."""
    try:
        view, drafts, _ = await outputs.list_drafts(
            require(info, SCOPE_READ),
            str(run_id),
            field=field,
            apply_eligible=apply_eligible,
            limit=first,
            after_id=str(after) if after else None,
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    data = {d["id"]: d for d in run_resource(view)["drafts"]}
    return [draft_of(data[d.id]) for d in drafts]


async def work_item_enhancement_artifacts(
    info: Info[GraphQLContext, Any],
    run_id: strawberry.ID,
    type: WorkItemEnhancementArtifactType | None = None,
    first: int | None = None,
    after: strawberry.ID | None = None,
) -> list[WorkItemEnhancementArtifact]:
    """Artifacts of a run, newest first, filtered by type; `first` per page, `after` the last artifact id held."""
    try:
        rows, _ = await outputs.list_artifacts(
            require(info, SCOPE_READ), str(run_id), type=type, limit=first, after_id=str(after) if after else None
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return [artifact_of(artifact_resource(a)) for a in rows]


async def work_item_enhancement_runs(
    info: Info[GraphQLContext, Any],
    state: WorkItemEnhancementRunState | None = None,
    target_id: strawberry.ID | None = None,
    action: WorkItemEnhancementAction | None = None,
    first: int | None = None,
    after: str | None = None,
) -> WorkItemEnhancementRunConnection:
    """Runs of the caller's visible projects, newest first."""
    try:
        views, page = await service.list_runs(
            require(info, SCOPE_READ),
            state=state,
            target_id=str(target_id) if target_id else None,
            action=action,
            limit=first,
            cursor=after,
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return WorkItemEnhancementRunConnection(
        **connection_fields([WorkItemEnhancementRun.of(v) for v in views], page),
        next_cursor=page["next_cursor"],
        has_more=page["has_more"],
    )

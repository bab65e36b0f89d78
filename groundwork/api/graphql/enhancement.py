"""GraphQL for work item enhancement: the spec's operations, plus run listing and named actions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.operations import Operation
from groundwork.api.resources import run_resource
from groundwork.domain.enhancement.model import SCOPE_APPLY, SCOPE_READ, SCOPE_RUN
from groundwork.domain.errors import GroundworkError
from groundwork.domain.principals import Principal
from groundwork.services import enhancement as service
from groundwork.services.idempotent_calls import call_once


@strawberry.type
class EvidenceRef:
    kind: str
    id: strawberry.ID


@strawberry.type
class EnhancementTarget:
    id: strawberry.ID
    key: str
    title: str
    version: str


@strawberry.type
class WorkItemEnhancementDraft:
    id: strawberry.ID
    action: str
    field: str
    proposed_value: JSON
    confidence: float
    evidence_refs: list[EvidenceRef]
    apply_eligible: bool


@strawberry.type
class WorkItemEnhancementArtifact:
    id: strawberry.ID
    type: str
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
    return [EvidenceRef(kind=r["kind"], id=strawberry.ID(r["id"])) for r in items]


def draft_of(data: dict[str, Any]) -> WorkItemEnhancementDraft:
    """A draft type from its REST resource (one shape for every transport)."""
    return WorkItemEnhancementDraft(
        id=strawberry.ID(data["id"]),
        action=data["action"],
        field=data["field"],
        proposed_value=data["proposedValue"],
        confidence=data["confidence"],
        evidence_refs=_refs(data["evidenceRefs"]),
        apply_eligible=data["applyEligible"],
    )


@strawberry.type
class WorkItemEnhancementRun:
    id: strawberry.ID
    state: str
    target: EnhancementTarget
    requested_actions: list[str]
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

    @classmethod
    def of(cls, view: service.RunView) -> WorkItemEnhancementRun:
        data = run_resource(view)
        return cls(
            id=strawberry.ID(data["id"]),
            state=data["state"],
            target=EnhancementTarget(**data["target"]),
            requested_actions=data["requestedActions"],
            drafts=[draft_of(d) for d in data["drafts"]],
            artifacts=[
                WorkItemEnhancementArtifact(
                    id=strawberry.ID(a["id"]),
                    type=a["type"],
                    title=a["title"],
                    summary=a["summary"],
                    body=a["body"],
                    evidence_refs=_refs(a["evidenceRefs"]),
                )
                for a in data["artifacts"]
            ],
            allowed_actions=[
                AllowedAction(id=a["id"], label=a["label"], required_scope=a["requiredScope"])
                for a in data["allowedActions"]
            ],
            applied_draft_ids=[strawberry.ID(i) for i in data["appliedDraftIds"]],
        )


@strawberry.type
class MutationError:
    code: str
    message: str
    path: list[str] | None = None
    # Extra members of the error, as REST's problem body carries them (e.g. the apply diff, current_version).
    details: JSON | None = None


@strawberry.type
class CreateWorkItemEnhancementRunPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]


@strawberry.type
class RunWorkItemEnhancementActionPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]


@strawberry.type
class ApplyWorkItemEnhancementDraftsPayload:
    ok: bool
    idempotency_replayed: bool
    run: WorkItemEnhancementRun | None
    errors: list[MutationError]


@strawberry.input
class EnhancementTargetInput:
    type: str
    id: strawberry.ID


@strawberry.input
class CreateWorkItemEnhancementRunInput:
    target: EnhancementTargetInput
    actions: list[str]
    instructions: str | None = None
    confirm: bool | None = None
    idempotency_key: str | None = None
    wait: int | None = None


@strawberry.input
class RunWorkItemEnhancementActionInput:
    run_id: strawberry.ID
    action: str
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
    nodes: list[WorkItemEnhancementRun]
    next_cursor: str | None
    has_more: bool


def _idempotency_key(info: Info[GraphQLContext, Any], given: str | None) -> str | None:
    request = info.context.request
    return given or (request.headers.get("idempotency-key") if request is not None else None)


def mutation_errors(outcome: dict[str, Any]) -> list[MutationError]:
    """One entry per invalid field (with its input path), else one for the whole call."""
    error = outcome.get("error")
    if not error:
        return []
    details: Any = {k: v for k, v in error.items() if k not in ("code", "message", "errors")} or None
    fields = error.get("errors") or []
    if fields:
        return [
            MutationError(
                code=error["code"], message=f["message"], path=["input", *f["path"].split(".")], details=details
            )
            for f in fields
        ]
    return [MutationError(code=error["code"], message=error["message"], path=None, details=details)]


async def _run_or_none(principal: Principal, outcome: dict[str, Any]) -> WorkItemEnhancementRun | None:
    # The mutation's own scope suffices to see the run it just changed (as REST answers it).
    run_id = outcome.get("run_id")
    if not run_id:
        return None
    return WorkItemEnhancementRun.of(await service.load_run(principal, run_id))


PayloadT = TypeVar(
    "PayloadT",
    "CreateWorkItemEnhancementRunPayload",
    "RunWorkItemEnhancementActionPayload",
    "ApplyWorkItemEnhancementDraftsPayload",
)


async def _mutate(
    payload: type[PayloadT],
    principal: Principal,
    key: str | None,
    operation: str,
    request: dict[str, Any],
    call: Callable[[], Awaitable[dict[str, Any]]],
) -> PayloadT:
    """Run a mutation once per idempotency key and shape its payload (`ok`, `idempotencyReplayed`, ...)."""
    try:
        outcome, replayed = await call_once(principal, key, operation, request, call)
    except GroundworkError as error:
        return payload(
            ok=False,
            idempotency_replayed=False,
            run=None,
            errors=[MutationError(code=error.code, message=error.detail)],
        )
    return payload(
        ok="error" not in outcome,
        idempotency_replayed=replayed,
        run=await _run_or_none(principal, outcome),
        errors=mutation_errors(outcome),
    )


async def create_work_item_enhancement_run(
    info: Info[GraphQLContext, Any], input: CreateWorkItemEnhancementRunInput
) -> CreateWorkItemEnhancementRunPayload:
    """Create a run (needs confirm: true and an idempotency key)."""
    principal = require(info, SCOPE_RUN)

    async def create() -> dict[str, Any]:
        view = await service.create_run(
            principal,
            service.CreateRun(
                input.target.type, str(input.target.id), input.actions, input.instructions, input.confirm
            ),
            input.wait,
        )
        return {"run_id": view.run.id}

    request = {
        "target": {"type": input.target.type, "id": str(input.target.id)},
        "actions": input.actions,
        "instructions": input.instructions,
        "confirm": input.confirm,
    }
    return await _mutate(
        CreateWorkItemEnhancementRunPayload,
        principal,
        _idempotency_key(info, input.idempotency_key),
        "createWorkItemEnhancementRun",
        request,
        create,
    )


async def run_work_item_enhancement_action(
    info: Info[GraphQLContext, Any], input: RunWorkItemEnhancementActionInput
) -> RunWorkItemEnhancementActionPayload:
    """Run one more action on a reviewable run."""
    principal = require(info, SCOPE_RUN)

    async def act() -> dict[str, Any]:
        view, _ = await service.run_action(
            principal, str(input.run_id), input.action, input.instructions, input.confirm, input.wait
        )
        return {"run_id": view.run.id}

    request = {
        "run_id": str(input.run_id),
        "action": input.action,
        "instructions": input.instructions,
        "confirm": input.confirm,
    }
    return await _mutate(
        RunWorkItemEnhancementActionPayload,
        principal,
        _idempotency_key(info, input.idempotency_key),
        "runWorkItemEnhancementAction",
        request,
        act,
    )


async def apply_work_item_enhancement_drafts(
    info: Info[GraphQLContext, Any], input: ApplyWorkItemEnhancementDraftsInput
) -> ApplyWorkItemEnhancementDraftsPayload:
    """Apply selected drafts, with the same explicit target-version guard as REST."""
    principal = require(info, SCOPE_APPLY)

    async def apply() -> dict[str, Any]:
        view = await service.apply_drafts(
            principal,
            str(input.run_id),
            [str(d) for d in input.draft_ids],
            input.expected_target_version,
            input.confirm,
        )
        return {"run_id": view.run.id}

    request = {
        "run_id": str(input.run_id),
        "draft_ids": [str(d) for d in input.draft_ids],
        "expected_target_version": input.expected_target_version,
        "confirm": input.confirm,
    }
    return await _mutate(
        ApplyWorkItemEnhancementDraftsPayload,
        principal,
        _idempotency_key(info, input.idempotency_key),
        "applyWorkItemEnhancementDrafts",
        request,
        apply,
    )


async def work_item_enhancement_run(
    info: Info[GraphQLContext, Any], id: strawberry.ID
) -> WorkItemEnhancementRun | None:
    """One run, or null when the caller cannot see it."""
    try:
        return WorkItemEnhancementRun.of(await service.load_run(require(info, SCOPE_READ), str(id)))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None


async def work_item_enhancement_drafts(
    info: Info[GraphQLContext, Any],
    run_id: strawberry.ID,
    field: str | None = None,
    apply_eligible: bool | None = None,
) -> list[WorkItemEnhancementDraft]:
    """Drafts of a run, filtered by field and eligibility."""
    try:
        view, drafts, _ = await service.list_drafts(
            require(info, SCOPE_READ), str(run_id), field=field, apply_eligible=apply_eligible, limit=100
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    data = run_resource(view)
    wanted = {d.id for d in drafts}
    return [draft_of(d) for d in data["drafts"] if d["id"] in wanted]


async def work_item_enhancement_runs(
    info: Info[GraphQLContext, Any],
    state: str | None = None,
    target_id: strawberry.ID | None = None,
    action: str | None = None,
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
        nodes=[WorkItemEnhancementRun.of(v) for v in views], next_cursor=page["next_cursor"], has_more=page["has_more"]
    )

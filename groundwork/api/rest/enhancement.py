"""REST: work item enhancement runs, their actions, drafts, artifacts, apply and operation status."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.openapi import ResponseSpec
from litestar.params import Parameter

from groundwork.api.documented import LIMIT, documented
from groundwork.api.encoded_json import EncodedJSON
from groundwork.api.resources.enhancement import artifact_resource, draft_resource, run_document, run_resource
from groundwork.api.resources.enhancement_review import apply_resource
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.enhancement import (
    ArtifactList,
    DraftList,
    OperationDocument,
    RunApplyList,
    RunDocument,
    RunList,
)
from groundwork.domain.enhancement.model import (
    ACTIONS,
    ARTIFACT_TYPES,
    DRAFT_FIELDS,
    MAX_ACTIONS,
    MAX_INSTRUCTIONS,
    MAX_REJECTION_REASON,
    RUN_STATES,
    SCOPE_APPLY,
    SCOPE_READ,
    SCOPE_RUN,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.enhancement import applies, apply_history, cancellations, outputs, rejections, run_views
from groundwork.services.enhancement import runs as service
from groundwork.services.operations import status as operations

READ = {"scope": SCOPE_READ}
# The range (0-30) is checked by the service, so every transport answers 422 `validation_failed` alike.
Wait = Parameter(
    query="wait",
    default=None,
    description="Seconds to wait for the run (0-30, default 10).",
    schema_extra={"minimum": 0, "maximum": 30},
)
ActionFilter = Parameter(default=None, schema_extra={"enum": list(ACTIONS)})
# Not finished within the wait: the run carries on; `Location` names its operation.
PENDING = {
    202: ResponseSpec(
        RunDocument,
        description="Accepted, still running: poll `Location` (`/api/v1/operations/{run_id}`).",
        generate_examples=False,
    )
}


def _idempotency_key(request: Request[Principal, Any, Any]) -> str | None:
    return request.headers.get("idempotency-key")


Action = Annotated[str, documented(enum=list(ACTIONS))]
Instructions = Annotated[str, documented(maxLength=MAX_INSTRUCTIONS)]
Actions = Annotated[
    list[str],
    documented(items={"type": "string", "enum": list(ACTIONS)}, minItems=1, maxItems=MAX_ACTIONS, uniqueItems=True),
]
TargetType = Annotated[str, documented(enum=["work_item"])]
DraftIds = Annotated[list[str], documented(minItems=1, maxItems=50, uniqueItems=True)]
# Create, action and apply change nothing unless `confirm` is exactly true (422 `confirmation_required`).
Confirm = Annotated[bool, documented(enum=[True])]


class Target(msgspec.Struct, forbid_unknown_fields=True):
    type: TargetType
    id: Annotated[str, documented(minLength=1)]


class CreateRunBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("confirm",)
    target: Target
    actions: Actions
    instructions: Instructions | None = None
    confirm: Confirm | None = None


class RunActionBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("confirm",)
    action: Action
    instructions: Instructions | None = None
    confirm: Confirm | None = None


class ApplyBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("expected_target_version", "confirm")
    draft_ids: DraftIds
    expected_target_version: Annotated[str, documented(format="date-time")] | None = None
    confirm: Confirm | None = None


class RejectDraftBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("confirm",)
    reason: Annotated[str, documented(minLength=1, maxLength=MAX_REJECTION_REASON)]
    confirm: Confirm | None = None


class CancelRunBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("confirm",)
    confirm: Confirm | None = None


def _answer(view: run_views.RunView, finished: bool, created: bool) -> Response[RunDocument]:
    document = typed(RunDocument, {"data": run_resource(view)})
    if finished and created:
        return Response(
            document, status_code=201, headers={"Location": f"/api/v1/work-item-enhancements/{view.run.id}"}
        )
    if finished:
        return Response(document, status_code=200)
    return Response(document, status_code=202, headers={"Location": f"/api/v1/operations/{view.run.id}"})


class EnhancementRunController(Controller):
    path = "/api/v1/work-item-enhancements"
    tags = ["work item enhancement"]

    @post(
        "/",
        opt={"scope": SCOPE_RUN, "idempotent": True},
        summary="Create a run",
        status_code=201,
        responses=PENDING,
    )
    async def create_run(
        self, request: Request[Principal, Any, Any], data: CreateRunBody, wait: int | None = Wait
    ) -> Response[RunDocument]:
        view = await service.create_run(
            request.user,
            service.CreateRun(data.target.type, data.target.id, data.actions, data.instructions, data.confirm),
            wait,
            idempotency_key=request.headers.get("idempotency-key"),
        )
        return _answer(view, view.finished, created=True)

    @get("/", opt=READ, summary="List runs")
    async def list_runs(
        self,
        request: Request[Principal, Any, Any],
        run_state: str | None = Parameter(query="state", default=None, schema_extra={"enum": list(RUN_STATES)}),
        target_id: str | None = None,
        action: str | None = ActionFilter,
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> RunList:
        views, page = await service.list_runs(
            request.user, state=run_state, target_id=target_id, action=action, limit=limit, cursor=cursor
        )
        return typed(RunList, {"data": [run_resource(v) for v in views], "page": page})

    @get("/{run_id:str}", opt=READ, summary="Retrieve a run")
    async def get_run(self, request: Request[Principal, Any, Any], run_id: str) -> Response[RunDocument]:
        view = await run_views.read_run(request.user, run_id)
        # The body is already JSON (kept with the view) and is sent as it is; the annotation documents the object.
        return EncodedJSON(run_document(view))

    @post(
        "/{run_id:str}/actions",
        opt={"scope": SCOPE_RUN, "idempotent": True},
        summary="Run one action",
        status_code=200,
        responses=PENDING,
    )
    async def run_action(
        self, request: Request[Principal, Any, Any], run_id: str, data: RunActionBody, wait: int | None = Wait
    ) -> Response[RunDocument]:
        view, finished = await service.run_action(
            request.user, run_id, data.action, data.instructions, data.confirm, wait, _idempotency_key(request)
        )
        return _answer(view, finished, created=False)

    @get("/{run_id:str}/drafts", opt=READ, summary="List drafts")
    async def list_drafts(
        self,
        request: Request[Principal, Any, Any],
        run_id: str,
        field: str | None = Parameter(default=None, schema_extra={"enum": list(DRAFT_FIELDS)}),
        apply_eligible: bool | None = None,
        action: str | None = ActionFilter,
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> DraftList:
        view, drafts, page = await outputs.list_drafts(
            request.user, run_id, field=field, apply_eligible=apply_eligible, action=action, limit=limit, cursor=cursor
        )
        data = [draft_resource(d, view.eligible[d.id], view.ineligible_reasons.get(d.id)) for d in drafts]
        return typed(DraftList, {"data": data, "page": page})

    @get("/{run_id:str}/artifacts", opt=READ, summary="List artifacts")
    async def list_artifacts(
        self,
        request: Request[Principal, Any, Any],
        run_id: str,
        type: str | None = Parameter(default=None, schema_extra={"enum": list(ARTIFACT_TYPES)}),
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> ArtifactList:
        rows, page = await outputs.list_artifacts(request.user, run_id, type=type, limit=limit, cursor=cursor)
        return typed(ArtifactList, {"data": [artifact_resource(a) for a in rows], "page": page})

    @post(
        "/{run_id:str}/apply",
        opt={"scope": SCOPE_APPLY, "idempotent": True},
        summary="Apply selected drafts to the work item",
        status_code=200,
        responses=PENDING,
    )
    async def apply(self, request: Request[Principal, Any, Any], run_id: str, data: ApplyBody) -> Response[RunDocument]:
        view, finished = await applies.apply_drafts(
            request.user, run_id, data.draft_ids, data.expected_target_version, data.confirm, _idempotency_key(request)
        )
        return _answer(view, finished, created=False)

    @get("/{run_id:str}/applies", opt=READ, summary="List a run's applies (oldest first)")
    async def list_applies(
        self, request: Request[Principal, Any, Any], run_id: str, limit: int | None = LIMIT, cursor: str | None = None
    ) -> RunApplyList:
        rows, page = await apply_history.list_run_applies(request.user, run_id, limit=limit, cursor=cursor)
        return typed(RunApplyList, {"data": [msgspec.to_builtins(apply_resource(r)) for r in rows], "page": page})

    @post(
        "/{run_id:str}/drafts/{draft_id:str}/reject",
        opt={"scope": SCOPE_APPLY, "idempotent": True},
        summary="Reject a draft (it is never applied afterwards)",
        status_code=200,
    )
    async def reject_draft(
        self, request: Request[Principal, Any, Any], run_id: str, draft_id: str, data: RejectDraftBody
    ) -> RunDocument:
        view = await rejections.reject_draft(request.user, run_id, draft_id, data.reason, data.confirm)
        return typed(RunDocument, {"data": run_resource(view)})

    @post(
        "/{run_id:str}/cancel",
        opt={"scope": SCOPE_RUN, "idempotent": True},
        summary="Cancel a run: its pending actions stop and nothing can be applied",
        status_code=200,
        responses=PENDING,
    )
    async def cancel_run(
        self, request: Request[Principal, Any, Any], run_id: str, data: CancelRunBody
    ) -> Response[RunDocument]:
        view, finished = await cancellations.cancel_run(request.user, run_id, data.confirm)
        return _answer(view, finished, created=False)


@get(
    "/api/v1/operations/{operation_id:str}",
    # The scope depends on the id: `work-item-enhance:read` for a run id, `notifications:read` for `op_`.
    opt={"scope": None},
    summary="Operation status of a run (its run id) or of a notification command (`op_...`)",
    tags=["operations"],
)
async def get_operation(request: Request[Principal, Any, Any], operation_id: str) -> OperationDocument:
    return typed(OperationDocument, {"data": await operations.operation_status(request.user, operation_id)})

"""REST: canonical work items and the caller's projects."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, patch, post
from litestar.params import Parameter

from groundwork.api.documented import LIMIT, documented, text
from groundwork.api.resources.enhancement import change_resource, project_resource, work_item_resource
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.work_items import ProjectList, WorkItemDocument, WorkItemHistory, WorkItemList
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.work_items import FIELD_NAMES, MAX_ESTIMATE, MAX_TEXT_FIELD, MAX_TITLE, NUMBER_FIELDS, STATUSES
from groundwork.services.work_items import items as service

READ = {"scope": "work-items:read"}
WRITE = {"scope": "work-items:write"}
FieldValue = str | int | float | None
# Documented, not enforced at decoding: the service answers 422 `validation_failed` naming the field.
Status = Annotated[str, documented(enum=list(STATUSES))]
# Each field's own type: story points for the estimate, Markdown for the rest (null clears a field).
_FIELD_SCHEMAS = {
    name: (
        {"type": ["number", "null"], "minimum": 0, "maximum": MAX_ESTIMATE}
        if name in NUMBER_FIELDS
        else {"type": ["string", "null"], "maxLength": MAX_TEXT_FIELD}
    )
    for name in FIELD_NAMES
}
Fields = Annotated[
    dict[str, FieldValue],
    documented(properties=_FIELD_SCHEMAS, propertyNames={"enum": list(FIELD_NAMES)}, additionalProperties=False),
]
Version = Annotated[str, documented(format="date-time")]
Title = Annotated[str, text(MAX_TITLE)]


class CreateWorkItemBody(msgspec.Struct, forbid_unknown_fields=True):
    project_id: str
    title: Title
    status: Status = "backlog"
    sprint: str | None = None
    watchers: list[str] = []
    fields: Fields = {}


class UpdateWorkItemBody(msgspec.Struct, forbid_unknown_fields=True):
    expected_version: Version
    title: Title | msgspec.UnsetType = msgspec.UNSET
    status: Status | msgspec.UnsetType = msgspec.UNSET
    sprint: str | msgspec.UnsetType | None = msgspec.UNSET
    watchers: list[str] | msgspec.UnsetType = msgspec.UNSET
    fields: Fields | msgspec.UnsetType = msgspec.UNSET


def _given(value: Any) -> Any:
    return None if value is msgspec.UNSET else value


class ProjectController(Controller):
    path = "/api/v1/projects"
    tags = ["projects"]

    @get("/", opt=READ, summary="The caller's visible projects with their engagement and portfolio")
    async def list_projects(self, request: Request[Principal, Any, Any]) -> ProjectList:
        rows = await service.list_projects(request.user)
        return typed(ProjectList, {"data": [project_resource(r) for r in rows]})


class WorkItemController(Controller):
    path = "/api/v1/work-items"
    tags = ["work items"]

    @get("/", opt=READ, summary="List work items of visible projects, newest first")
    async def list_work_items(
        self,
        request: Request[Principal, Any, Any],
        project_id: str | None = None,
        status: str | None = Parameter(default=None, schema_extra={"enum": list(STATUSES)}),
        sprint: str | None = None,
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> WorkItemList:
        items, page = await service.list_work_items(
            request.user, project_id=project_id, status=status, sprint=sprint, limit=limit, cursor=cursor
        )
        return typed(WorkItemList, {"data": [work_item_resource(i) for i in items], "page": page})

    @post("/", opt={**WRITE, "idempotent": True}, summary="Create a work item")
    async def create_work_item(
        self, request: Request[Principal, Any, Any], data: CreateWorkItemBody
    ) -> Response[WorkItemDocument]:
        item = await service.create_work_item(
            request.user,
            service.NewWorkItem(
                data.project_id, data.title, data.status, data.sprint, data.watchers, dict(data.fields)
            ),
            source="rest",
        )
        return created(typed(WorkItemDocument, {"data": work_item_resource(item)}), f"/api/v1/work-items/{item.id}")

    @get("/{work_item_id:str}", opt=READ, summary="Retrieve a work item")
    async def get_work_item(self, request: Request[Principal, Any, Any], work_item_id: str) -> WorkItemDocument:
        item = await service.get_work_item(request.user, work_item_id)
        return typed(WorkItemDocument, {"data": work_item_resource(item)})

    @patch("/{work_item_id:str}", opt=WRITE, summary="Change a work item, guarded by expected_version")
    async def update_work_item(
        self, request: Request[Principal, Any, Any], work_item_id: str, data: UpdateWorkItemBody
    ) -> WorkItemDocument:
        change = service.WorkItemChanges(
            expected_version=data.expected_version,
            title=_given(data.title),
            status=_given(data.status),
            sprint=_given(data.sprint),
            sprint_given=data.sprint is not msgspec.UNSET,
            watchers=_given(data.watchers),
            fields=dict(data.fields) if data.fields is not msgspec.UNSET else None,
        )
        item = await service.update_work_item(request.user, work_item_id, change, source="rest")
        return typed(WorkItemDocument, {"data": work_item_resource(item)})

    @get("/{work_item_id:str}/history", opt=READ, summary="The change history of a work item")
    async def work_item_history(self, request: Request[Principal, Any, Any], work_item_id: str) -> WorkItemHistory:
        rows = await service.work_item_history(request.user, work_item_id)
        return typed(WorkItemHistory, {"data": [change_resource(r) for r in rows]})

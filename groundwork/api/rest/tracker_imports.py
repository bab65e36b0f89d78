"""REST: import a GitHub Issues or Jira export into a project (workspace admins)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.openapi import ResponseSpec

from groundwork.api.documented import documented
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.work_items import ImportReportDocument, TrackerImportDocument
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN
from groundwork.domain.times import timestamp
from groundwork.persistence.repositories.work_item_imports import ImportRow
from groundwork.services.work_items import import_jobs
from groundwork.services.work_items.import_jobs import import_or_queue, report_json
from groundwork.services.work_items.tracker_import import FORMATS

StringMap = Annotated[dict[str, str], documented(additionalProperties={"type": "string"})]


class ImportBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("format", "content")
    format: Annotated[str, documented(enum=list(FORMATS))] | None = None
    content: str | None = None
    status_map: StringMap = {}
    people_map: StringMap = {}


def import_resource(row: ImportRow) -> dict[str, Any]:
    """An import running as a workflow: its status, progress and report so far."""
    return {
        "id": row.id,
        "status": row.status,
        "format": row.format,
        "progress": {"processed": row.processed, "total": row.total},
        "report": row.report,
        "createdAt": timestamp(row.created_at),
        "updatedAt": timestamp(row.updated_at),
    }


class ProjectImportController(Controller):
    path = "/api/v1/projects/{project_id:str}/imports"
    tags = ["administration"]

    @post(
        "/",
        opt={"scope": WORKSPACE_ADMIN, "idempotent": True},
        status_code=200,
        summary="Import a GitHub Issues (JSON array) or Jira (CSV, all fields) export into the project",
        description="`content` is the exported file's text. Up to 200 entries the answer is the import report (200); "
        "a larger file is queued as a workflow (202, `Location` of the import, whose `progress` and report so far "
        "`GET` shows). Re-importing the same file changes nothing; a changed entry updates its item (a new "
        "version and a history entry). Bad entries are reported by position (array index from 1, or CSV row with "
        "the header as row 1). Scope `workspace:admin`.",
        responses={
            200: ResponseSpec(ImportReportDocument, description="Imported: the report.", generate_examples=False),
            202: ResponseSpec(
                TrackerImportDocument,
                description="Queued as a workflow: `Location` is the import.",
                generate_examples=False,
            ),
        },
    )
    async def import_export(
        self, request: Request[Principal, Any, Any], project_id: str, data: ImportBody
    ) -> Response[ImportReportDocument | TrackerImportDocument]:
        outcome = await import_or_queue(
            request.user,
            project_id,
            data.format or "",
            data.content or "",
            dict(data.status_map),
            dict(data.people_map),
            temporal=request.app.state.temporal,
            task_queue=request.app.state.settings.temporal_task_queue,
        )
        if isinstance(outcome, ImportRow):
            location = f"/api/v1/projects/{project_id}/imports/{outcome.id}"
            document = typed(TrackerImportDocument, {"data": import_resource(outcome)})
            return Response(document, status_code=202, headers={"Location": location})
        return Response(typed(ImportReportDocument, {"data": report_json(outcome)}), status_code=200)

    @get(
        "/{import_id:str}",
        opt={"scope": WORKSPACE_ADMIN},
        summary="A queued import: status, progress and the report so far",
        description="Scope `workspace:admin`.",
    )
    async def get_import(
        self, request: Request[Principal, Any, Any], project_id: str, import_id: str
    ) -> TrackerImportDocument:
        row = await import_jobs.get_import(request.user, project_id, import_id)
        return typed(TrackerImportDocument, {"data": import_resource(row)})

"""REST: import a GitHub Issues or Jira export into a project (workspace admins)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, post

from groundwork.api.documented import documented
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN
from groundwork.services.work_items.tracker_import import FORMATS, TrackerImportReport, import_into_project

StringMap = Annotated[dict[str, str], documented(additionalProperties={"type": "string"})]


class ImportBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("format", "content")
    format: Annotated[str, documented(enum=list(FORMATS))] | None = None
    content: str | None = None
    status_map: StringMap = {}
    people_map: StringMap = {}


def import_report_resource(report: TrackerImportReport) -> dict[str, Any]:
    """What an import did: keys created, updated and unchanged, entries refused with their position and why."""
    return {
        "format": report.format,
        "created": report.created,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "rejected": [{"position": position, "reason": reason} for position, reason in report.rejected],
        "pullRequestsSkipped": report.pull_requests_skipped,
        "warnings": report.warnings,
        "createdPrincipals": report.created_principals,
    }


class ProjectImportController(Controller):
    path = "/api/v1/projects/{project_id:str}/imports"
    tags = ["administration"]

    @post(
        "/",
        opt={"scope": WORKSPACE_ADMIN, "idempotent": True},
        status_code=200,
        summary="Import a GitHub Issues (JSON array) or Jira (CSV, all fields) export into the project",
        description="`content` is the exported file's text. Re-importing the same file changes nothing; a changed "
        "entry updates its item (a new version and a history entry). Bad entries are reported by position (array "
        "index from 1, or CSV row with the header as row 1). Scope `workspace:admin`.",
    )
    async def import_export(
        self, request: Request[Principal, Any, Any], project_id: str, data: ImportBody
    ) -> dict[str, Any]:
        report = await import_into_project(
            request.user, project_id, data.format or "", data.content or "", data.status_map, data.people_map
        )
        return {"data": import_report_resource(report)}

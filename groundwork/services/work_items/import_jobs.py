"""Large tracker imports, run by `WorkItemImportWorkflow` in batches with their progress in PostgreSQL.

The API queues an import whose file holds more than `LARGE_IMPORT` entries (checked, parsed and refused
whole exactly as a small one) and answers at once; the workflow imports `BATCH` entries per activity and
records the report so far after each, which `GET /api/v1/projects/{id}/imports/{import_id}` shows.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio.common import WorkflowIDConflictPolicy

from groundwork.domain.errors import NotFound
from groundwork.domain.tenancy.administration import require_workspace_admin
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN
from groundwork.persistence import db
from groundwork.persistence.repositories import work_item_imports as repo
from groundwork.persistence.repositories.tenancy import administration
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.work_item_imports import ImportRow
from groundwork.platform.temporal.client import TemporalConnection
from groundwork.services.work_items.tracker_import import (
    TrackerImportReport,
    import_items,
    prepare_import,
    read_export,
)
from groundwork.workflows.search_attributes import workspace_attributes
from groundwork.workflows.work_items import ImportJob, ImportProgress, WorkItemImportWorkflow

# Up to this many entries an import answers its report in the request; beyond, it runs as a workflow.
LARGE_IMPORT = 200
BATCH = 100


def report_json(report: TrackerImportReport) -> dict[str, Any]:
    """A report as the API shows it."""
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


def _merged(so_far: dict[str, Any], batch: TrackerImportReport) -> dict[str, Any]:
    more = report_json(batch)
    merged = dict(so_far)
    for name in ("created", "updated", "unchanged", "rejected", "createdPrincipals"):
        merged[name] = [*so_far.get(name, []), *more[name]]
    merged["rejected"] = sorted(merged["rejected"], key=lambda r: r["position"])
    merged["warnings"] = sorted({*so_far.get("warnings", []), *more["warnings"]})
    return merged


async def queue_import(
    principal: Principal,
    project_id: str,
    kind: str,
    text: str,
    status_map: dict[str, str],
    people_map: dict[str, str],
    *,
    temporal: TemporalConnection,
    task_queue: str,
) -> ImportRow:
    """Record a large import and start its workflow; the file is refused whole now if it is no export."""
    require_workspace_admin(principal)
    parsed = await prepare_import(principal, project_id, kind, text, status_map)
    report = TrackerImportReport(
        format=kind, rejected=list(parsed.rejected), pull_requests_skipped=parsed.pull_requests_skipped
    )
    async with db.transaction():
        row = await repo.insert_import(
            workspace_id=principal.workspace_id,
            project_id=project_id,
            actor_id=principal.id,
            kind=kind,
            content=text,
            status_map=status_map,
            people_map=people_map,
            total=len(parsed.items),
            report=report_json(report),
        )
    client = await temporal.get()
    await client.start_workflow(
        WorkItemImportWorkflow.run,
        ImportJob(row.id),
        id=row.id,
        task_queue=task_queue,
        search_attributes=workspace_attributes(principal.workspace_id),
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        execution_timeout=timedelta(hours=6),
    )
    return row


async def import_or_queue(
    principal: Principal,
    project_id: str,
    kind: str,
    text: str,
    status_map: dict[str, str],
    people_map: dict[str, str],
    *,
    temporal: TemporalConnection,
    task_queue: str,
) -> TrackerImportReport | ImportRow:
    """The API's import (admins): the report of a small file at once, else the queued import of a large one."""
    require_workspace_admin(principal)
    if await administration.admin_project(principal.workspace_id, project_id) is None:
        raise NotFound("No such project.")
    parsed = await prepare_import(principal, project_id, kind, text, status_map)
    if len(parsed.items) > LARGE_IMPORT:
        return await queue_import(
            principal, project_id, kind, text, status_map, people_map, temporal=temporal, task_queue=task_queue
        )
    report = await import_items(principal, project_id, kind, parsed.items, status_map, people_map)
    report.rejected = sorted([*parsed.rejected, *report.rejected])
    report.pull_requests_skipped = parsed.pull_requests_skipped
    return report


async def get_import(principal: Principal, project_id: str, import_id: str) -> ImportRow:
    """An import into a project of the caller's workspace (admins)."""
    require_workspace_admin(principal)
    row = await repo.get_import(import_id)
    if row is None or row.workspace_id != principal.workspace_id or row.project_id != project_id:
        raise NotFound("No such import.")
    return row


async def _row(import_id: str) -> ImportRow:
    row = await repo.get_import(import_id)
    if row is None:
        raise NotFound(f"No import {import_id}.")
    return row


def _progress(row: ImportRow, status: str, processed: int) -> ImportProgress:
    return ImportProgress(processed=processed, total=row.total, status=status)


async def start(import_id: str) -> ImportProgress:
    """Mark the import running (a finished one stays as it is)."""
    row = await _row(import_id)
    if row.status in ("succeeded", "failed"):
        return _progress(row, row.status, row.processed)
    await repo.record_progress(import_id, "running", row.processed, row.report)
    return _progress(row, "running", row.processed)


async def run_batch(import_id: str, begin: int) -> ImportProgress:
    """Import the entries from `begin` (at most BATCH) and record the report so far with the progress."""
    row = await _row(import_id)
    if row.processed > begin:  # a retried batch whose progress was recorded: go on from there
        return _progress(row, row.status, row.processed)
    actor_row = await tenancy.get_principal(row.actor_id)
    if actor_row is None:
        raise NotFound("The import's actor no longer exists.")
    actor = Principal(
        actor_row.id, row.workspace_id, actor_row.name, actor_row.kind, True, "", frozenset({WORKSPACE_ADMIN})
    )
    parsed = read_export(row.format, row.content)
    batch = parsed.items[begin : begin + BATCH]
    report = await import_items(actor, row.project_id, row.format, batch, row.status_map, row.people_map)
    processed = begin + len(batch)
    async with db.transaction():
        current = await repo.get_import(import_id, for_update=True)
        assert current is not None
        await repo.record_progress(import_id, "running", processed, _merged(current.report, report))
    return _progress(row, "running", processed)


async def finish(import_id: str) -> ImportProgress:
    """Mark the import succeeded with its report complete."""
    row = await _row(import_id)
    await repo.record_progress(import_id, "succeeded", row.processed, row.report)
    return _progress(row, "succeeded", row.processed)

"""The work item application service: visibility, validation, the version guard, and history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groundwork.domain.errors import FieldError, NotFound, PermissionDenied, ValidationFailed, VersionConflict
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.work_items import (
    WorkItem,
    field_changes,
    format_version,
    parse_version,
    validate_attributes,
    validate_fields,
)
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as repo
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.workspaces import VisibleProjectRow
from groundwork.persistence.repositories.work_items import WorkItemChangeRow
from groundwork.platform.idempotency import request_results
from groundwork.services.enhancement import heard_runs
from groundwork.services.tenancy import project_access


@dataclass
class NewWorkItem:
    """What a caller supplies to create a work item."""

    project_id: str
    title: str
    status: str = "backlog"
    sprint: str | None = None
    watchers: list[str] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkItemChanges:
    """A partial update guarded by `expected_version`; attributes left out stay as they are."""

    expected_version: str
    title: str | None = None
    status: str | None = None
    sprint: str | None = None
    sprint_given: bool = False
    watchers: list[str] | None = None
    fields: dict[str, Any] | None = None


async def _writable_project(principal: Principal, project_id: str) -> None:
    permissions = await project_access.project_permissions(principal, project_id)
    if permissions is None or "project:read" not in permissions:
        raise ValidationFailed("Unknown project.", [FieldError("project_id", "no such project in this workspace")])
    if "work_items:write" not in permissions:
        raise PermissionDenied("Your role on this project does not allow changing work items.", "work_items:write")


async def _check_watchers(principal: Principal, watchers: list[str]) -> None:
    known = await tenancy.principal_ids_in_workspace(principal.workspace_id, watchers)
    if missing := [w for w in watchers if w not in known]:
        raise ValidationFailed(
            "Unknown watchers.",
            [FieldError("watchers", f"not principals of this workspace: {', '.join(missing)}")],
        )


async def create_work_item(principal: Principal, new: NewWorkItem, *, source: str) -> WorkItem:
    """Create a work item in a project the caller may write to."""
    errors = validate_attributes(
        title=new.title, status=new.status, sprint=new.sprint, watchers=new.watchers, title_required=True
    ) + validate_fields(new.fields)
    if errors:
        raise ValidationFailed("The work item is not valid.", errors)
    await _writable_project(principal, new.project_id)
    watchers = list(dict.fromkeys(new.watchers))
    await _check_watchers(principal, watchers)
    # The same request retried after its first attempt's answer was lost gets that attempt's item.
    earlier = await request_results.earlier_result("work_item")
    if earlier is not None and (item := await repo.get_work_item(principal.workspace_id, earlier)) is not None:
        return item
    async with db.transaction():
        item = await repo.insert_work_item(
            workspace_id=principal.workspace_id,
            project_id=new.project_id,
            title=new.title.strip(),
            status=new.status,
            sprint=new.sprint,
            watchers=watchers,
            fields=new.fields,
            actor_id=principal.id,
            source=source,
        )
        await request_results.record_result("work_item", item.id)
        return item


async def get_work_item(principal: Principal, work_item_id: str) -> WorkItem:
    """A work item the caller can see; 404 for anything else."""
    item = await repo.get_work_item(principal.workspace_id, work_item_id)
    if item is None:
        raise NotFound("No such work item.")
    permissions = await project_access.project_permissions(principal, item.project_id)
    if not permissions or "project:read" not in permissions:
        raise NotFound("No such work item.")
    return item


async def list_work_items(
    principal: Principal,
    *,
    project_id: str | None = None,
    status: str | None = None,
    sprint: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[WorkItem], dict[str, Any]]:
    """Work items of the caller's visible projects, newest first, keyset-paginated."""
    page = page_request(limit, cursor)
    errors = validate_attributes(status=status)
    if errors:
        raise ValidationFailed("Invalid filter.", errors)
    project_ids = await tenancy.visible_project_ids(principal)
    if project_id is not None:
        project_ids = [p for p in project_ids if p == project_id]
    after = page.after_text()
    items = await repo.list_work_items(
        principal.workspace_id,
        project_ids,
        status=status,
        sprint=sprint,
        after_id=after,
        limit=page.limit + 1,
    )
    return page_info(items, page.limit, lambda item: {"id": item.id})


async def update_work_item(
    principal: Principal, work_item_id: str, change: WorkItemChanges, *, source: str
) -> WorkItem:
    """Apply a partial update if `expected_version` still matches; 409 `version_conflict` otherwise."""
    try:
        expected = parse_version(change.expected_version)
    except ValueError as exc:
        raise ValidationFailed("Invalid version.", [FieldError("expected_version", str(exc))]) from None
    errors = validate_attributes(
        title=change.title,
        status=change.status,
        watchers=change.watchers,
        sprint=change.sprint if change.sprint_given else None,
    ) + validate_fields(change.fields or {})
    if errors:
        raise ValidationFailed("The change is not valid.", errors)
    visible = await get_work_item(principal, work_item_id)
    await _writable_project(principal, visible.project_id)
    if change.watchers is not None:
        await _check_watchers(principal, change.watchers)
    async with db.transaction():
        item = await repo.get_work_item(principal.workspace_id, work_item_id, for_update=True)
        assert item is not None
        if item.version != expected:
            raise VersionConflict(
                "The work item changed since you read it.", current_version=format_version(item.version)
            )
        before = {
            "title": item.title,
            "status": item.status,
            "sprint": item.sprint,
            "watchers": list(item.watchers),
            **item.fields,
        }
        title = change.title.strip() if change.title is not None else item.title
        status = change.status or item.status
        sprint = change.sprint if change.sprint_given else item.sprint
        watchers = list(dict.fromkeys(change.watchers)) if change.watchers is not None else list(item.watchers)
        fields = {**item.fields, **(change.fields or {})}
        after = {"title": title, "status": status, "sprint": sprint, "watchers": watchers, **fields}
        diff = field_changes(before, after)
        if not diff:
            return item  # nothing changed: no new version, no history entry
        updated = await repo.update_work_item(
            item,
            title=title,
            status=status,
            sprint=sprint,
            watchers=watchers,
            fields=fields,
            changes=diff,
            actor_id=principal.id,
            source=source,
        )
    # Runs targeting it show its new version in this process's next read, before the notification is heard.
    heard_runs.forget_runs_targeting(work_item_id)
    return updated


async def work_item_history(principal: Principal, work_item_id: str) -> list[WorkItemChangeRow]:
    """Who changed a visible work item, when, through which door, and what."""
    await get_work_item(principal, work_item_id)
    return await repo.list_changes(work_item_id)


async def list_projects(principal: Principal) -> list[VisibleProjectRow]:
    """The caller's visible projects with their engagement and portfolio."""
    return await tenancy.visible_projects(principal)

"""REST answers of work items, projects and tracker imports."""

from __future__ import annotations

from typing import Any

import msgspec

from groundwork.api.rest.documents.common import Named, Page, Resource, Timestamp


class WorkItem(Resource, kw_only=True):
    """The canonical work item; `version` is what `expected_version` of an update names."""

    id: str
    key: str
    title: str
    status: str
    sprint: str | None
    project_id: str
    version: Timestamp
    watchers: list[str]
    fields: dict[str, Any]
    source: dict[str, Any] | None


class WorkItemChange(Resource, kw_only=True):
    """One entry of a work item's change history."""

    actor_id: str | None
    source: str | None
    changes: Any
    version_before: Timestamp | None
    version_after: Timestamp | None
    changed_at: Timestamp | None


class Project(Resource, kw_only=True):
    """A project with the engagement and portfolio it belongs to."""

    id: str
    key: str
    name: str
    engagement: Named
    portfolio: Named


class ImportProgress(Resource, kw_only=True):
    """How many entries of an import were processed, of how many."""

    processed: int
    total: int


class TrackerImport(Resource, kw_only=True):
    """An import running as a workflow: its status, progress and report so far."""

    id: str
    status: str
    format: str
    progress: ImportProgress
    report: dict[str, Any]
    created_at: Timestamp | None
    updated_at: Timestamp | None


class RejectedEntry(Resource, kw_only=True):
    """An entry of an export that was not imported, by position, and why."""

    position: Any
    reason: str


class ImportReport(Resource, kw_only=True):
    """What an import created, updated, left unchanged and rejected."""

    format: str
    created: list[Any]
    updated: list[Any]
    unchanged: list[Any]
    rejected: list[RejectedEntry]
    pull_requests_skipped: int
    warnings: list[str]
    created_principals: list[Any]


class WorkItemDocument(msgspec.Struct):
    """One work item."""

    data: WorkItem


class WorkItemList(msgspec.Struct):
    """A page of work items."""

    data: list[WorkItem]
    page: Page


class WorkItemHistory(msgspec.Struct):
    """A work item's change history, oldest first."""

    data: list[WorkItemChange]


class ProjectList(msgspec.Struct):
    """The projects the caller can see."""

    data: list[Project]


class TrackerImportDocument(msgspec.Struct):
    """One import."""

    data: TrackerImport


class ImportReportDocument(msgspec.Struct):
    """The report of an import done within the request."""

    data: ImportReport

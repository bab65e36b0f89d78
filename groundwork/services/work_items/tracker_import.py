"""Importing a team's work items from a GitHub Issues or Jira export into one project.

Each entry becomes a canonical work item keeping `source{kind, externalId, url}`. An item is found again
by its external id, so re-importing the same file changes nothing (the entry's fingerprint is unchanged)
and a changed entry updates its item through the same versioned write as `PATCH` (a new version and a
history entry), never a duplicate. Each entry is written in its own transaction with the principals it
creates: a bad entry is reported by its position and leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from groundwork.domain.errors import FieldError, GroundworkError, InvalidRequest, ValidationFailed
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tracker_imports.github import parse_github
from groundwork.domain.tracker_imports.jira import parse_jira
from groundwork.domain.tracker_imports.records import ExternalItem, ParsedExport, UnreadableExport
from groundwork.domain.tracker_imports.statuses import canonical_status, checked_overrides
from groundwork.domain.work_items import format_version, validate_attributes, validate_fields
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as repo
from groundwork.persistence.repositories.tenancy import administration
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.work_items import items as service

FORMATS = ("github", "jira")
SOURCE = "import"


@dataclass
class TrackerImportReport:
    """What an import did, entry by entry."""

    format: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    pull_requests_skipped: int = 0
    warnings: list[str] = field(default_factory=list)
    created_principals: list[str] = field(default_factory=list)


def read_export(kind: str, text: str) -> ParsedExport:
    """The export read in its format; a file that is not one is a 422 on `content`."""
    try:
        return parse_github(text) if kind == "github" else parse_jira(text)
    except UnreadableExport as exc:
        raise ValidationFailed("The file is not an export of that format.", [FieldError("content", str(exc))]) from None


def _fingerprint(values: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class _People:
    """Logins and e-mails matched to principals: through the people map, else by name, else created (no key)."""

    def __init__(self, workspace_id: str, people_map: dict[str, str], report: TrackerImportReport) -> None:
        self.workspace_id = workspace_id
        self.people_map = {k.strip().lower(): v for k, v in people_map.items()}
        self.report = report

    async def ids(self, people: tuple[str, ...]) -> list[str]:
        found = []
        for person in people:
            name = self.people_map.get(person.strip().lower(), person.strip())
            principal = await tenancy.get_principal_by_name(self.workspace_id, name)
            if principal is None:
                principal = await tenancy.create_principal(self.workspace_id, name, kind="user")
                self.report.created_principals.append(name)
            found.append(principal.id)
        return list(dict.fromkeys(found))


async def _import_one(
    actor: Principal, project_id: str, kind: str, item: ExternalItem, status: str, people: _People
) -> tuple[str, str]:
    """Create, update or leave one entry's item; ('created'|'updated'|'unchanged', key)."""
    watchers = await people.ids(item.people)
    fields: dict[str, Any] = {"description": item.description, "estimate": item.estimate}
    values = {"title": item.title, "status": status, "sprint": item.sprint, "watchers": watchers, "fields": fields}
    source = {
        "kind": kind,
        "externalId": item.external_id,
        "url": item.url,
        "labels": list(item.labels),
        "fingerprint": _fingerprint({**values, "labels": list(item.labels), "url": item.url}),
    }
    errors = validate_attributes(title=item.title, status=status, sprint=item.sprint, watchers=watchers) + (
        validate_fields(fields)
    )
    if errors:
        raise InvalidRequest("invalid entry", errors)
    existing = await repo.find_by_source(project_id, kind, item.external_id)
    if existing is not None and existing.source and existing.source.get("fingerprint") == source["fingerprint"]:
        return "unchanged", existing.key
    if existing is None:
        created = await repo.insert_work_item(
            workspace_id=actor.workspace_id,
            project_id=project_id,
            title=item.title,
            status=status,
            sprint=item.sprint,
            watchers=watchers,
            fields={k: v for k, v in fields.items() if v is not None},
            actor_id=actor.id,
            source=SOURCE,
        )
        await repo.set_source(created.id, source)
        return "created", created.key
    change = service.WorkItemChanges(
        expected_version=format_version(existing.version),
        title=item.title,
        status=status,
        sprint=item.sprint,
        sprint_given=True,
        watchers=watchers,
        fields=fields,
    )
    updated = await service.update_work_item(actor, existing.id, change, source=SOURCE)
    await repo.set_source(existing.id, source)
    return "updated", updated.key


async def prepare_import(
    actor: Principal, project_id: str, kind: str, text: str, status_map: dict[str, str] | None
) -> ParsedExport:
    """Check an import before anything is written (format, status map, project) and read its file."""
    if kind not in FORMATS:
        raise ValidationFailed("Invalid format.", [FieldError("format", f"must be one of {', '.join(FORMATS)}")])
    try:
        checked_overrides(status_map or {})
    except ValueError as exc:
        raise ValidationFailed("Invalid status map.", [FieldError("status_map", str(exc))]) from None
    project = await administration.admin_project(actor.workspace_id, project_id)
    if project is None:
        raise ValidationFailed("Unknown project.", [FieldError("project_id", "no such project in this workspace")])
    if project.archived_at is not None:
        raise ValidationFailed("Archived project.", [FieldError("project_id", "is archived: it takes no imports")])
    return read_export(kind, text)


async def import_items(
    actor: Principal,
    project_id: str,
    kind: str,
    items: list[ExternalItem],
    status_map: dict[str, str] | None,
    people_map: dict[str, str] | None,
) -> TrackerImportReport:
    """Import entries already read, each in its own transaction; the report says what each did."""
    overrides = checked_overrides(status_map or {})
    report = TrackerImportReport(format=kind)
    people = _People(actor.workspace_id, people_map or {}, report)
    unmapped: set[str] = set()
    for item in items:
        status, known = canonical_status(kind, item.raw_status, overrides)
        if not known:
            unmapped.add(item.raw_status)
        principals_before = len(report.created_principals)
        try:
            async with db.transaction():
                outcome, key = await _import_one(actor, project_id, kind, item, status, people)
        except GroundworkError as error:
            del report.created_principals[principals_before:]  # rolled back with the entry
            report.rejected.append((item.position, error.summary()))
            continue
        getattr(report, outcome).append(key)
    report.warnings = [f"unmapped status {s!r} became 'backlog'; map it with a status map" for s in sorted(unmapped)]
    return report


async def import_export(
    actor: Principal,
    project_id: str,
    kind: str,
    text: str,
    *,
    status_map: dict[str, str] | None = None,
    people_map: dict[str, str] | None = None,
) -> TrackerImportReport:
    """Import an export into a project of the actor's workspace (the actor acts as a workspace admin)."""
    parsed = await prepare_import(actor, project_id, kind, text, status_map)
    report = await import_items(actor, project_id, kind, parsed.items, status_map, people_map)
    report.rejected = sorted([*parsed.rejected, *report.rejected])
    report.pull_requests_skipped = parsed.pull_requests_skipped
    return report


async def import_file_into(
    workspace_slug: str,
    project_key: str,
    kind: str,
    text: str,
    *,
    principal_name: str | None,
    status_map: dict[str, str] | None,
    people_map: dict[str, str] | None,
) -> TrackerImportReport:
    """The operator's import (`groundwork import --format github|jira`), acting as a workspace admin."""
    workspace = await tenancy.get_workspace_by_slug(workspace_slug)
    if workspace is None:
        raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
    project = await tenancy.project_by_key(workspace_slug, project_key)
    if project is None:
        raise GroundworkError(f"No project {project_key!r} in the workspace {workspace_slug!r}.")
    actor = await _actor(workspace.id, principal_name)
    operator = Principal(actor.id, workspace.id, actor.name, actor.kind, True, "", frozenset({"workspace:admin"}))
    return await import_export(operator, project.id, kind, text, status_map=status_map, people_map=people_map)


async def _actor(workspace_id: str, principal_name: str | None) -> Any:
    if principal_name is not None:
        found = await tenancy.get_principal_by_name(workspace_id, principal_name)
        if found is None:
            raise GroundworkError(f"No principal {principal_name!r} in this workspace.")
        return found
    admins = await administration.admins_of(workspace_id)
    if not admins:
        raise GroundworkError("The workspace has no admin; name the principal the history records with --principal.")
    return admins[0]

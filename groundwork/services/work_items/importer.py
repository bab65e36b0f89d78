"""Bulk import of work items from JSON Lines: each good line in its own transaction, bad lines reported."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.work_items import items as service

ALLOWED_KEYS = {"project", "title", "status", "sprint", "watchers", "fields"}


@dataclass
class ImportReport:
    """What an import did: keys created, and each rejected line with its reason."""

    created: list[str] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)


async def import_work_items(
    workspace_slug: str, principal_name: str, lines: Iterable[str], *, source: str = "import"
) -> ImportReport:
    """Import one JSON object a line: `project` (key), `title`, `status`, `sprint`, `watchers` (names), `fields`."""
    workspace = await tenancy.get_workspace_by_slug(workspace_slug)
    if workspace is None:
        raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
    actor = await tenancy.get_principal_by_name(workspace.id, principal_name)
    if actor is None:
        raise GroundworkError(f"No principal {principal_name!r} in workspace {workspace_slug!r}.")
    # The operator acts with admin visibility; history names the principal they chose.
    principal = Principal(actor.id, workspace.id, actor.name, actor.kind, True, "", frozenset())
    projects = {p.key: p.id for p in await tenancy.visible_projects(principal)}
    names: dict[str, str | None] = {}
    report = ImportReport()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = _parse_line(line)
            project_id = projects.get(str(record.get("project")))
            if project_id is None:
                raise GroundworkError(f"unknown project {record.get('project')!r}")
            watchers = []
            for name in record.get("watchers", []):
                if name not in names:
                    found = await tenancy.get_principal_by_name(workspace.id, str(name))
                    names[name] = found.id if found else None
                if names[name] is None:
                    raise GroundworkError(f"unknown watcher {name!r}")
                watchers.append(names[name])
            item = await service.create_work_item(
                principal,
                service.NewWorkItem(
                    project_id=project_id,
                    title=record.get("title"),  # type: ignore[arg-type]
                    status=record.get("status", "backlog"),
                    sprint=record.get("sprint"),
                    watchers=watchers,  # type: ignore[arg-type]
                    fields=record.get("fields", {}),
                ),
                source=source,
            )
            report.created.append(item.key)
        except GroundworkError as error:
            report.rejected.append((number, error.summary()))
    return report


def _parse_line(line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise GroundworkError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(record, dict):
        raise GroundworkError("a line must be a JSON object")
    if unknown := sorted(set(record) - ALLOWED_KEYS):
        raise GroundworkError(f"unknown keys: {', '.join(unknown)}; allowed: {', '.join(sorted(ALLOWED_KEYS))}")
    if not isinstance(record.get("fields", {}), dict):
        raise GroundworkError("fields must be an object")
    if not isinstance(record.get("watchers", []), list):
        raise GroundworkError("watchers must be a list of principal names")
    return record

"""JSON shapes of resources (the specs' camelCase names), shared by REST and MCP."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from groundwork.domain.work_items import WorkItem, format_version, full_fields


def timestamp(value: datetime | None) -> str | None:
    """ISO 8601 UTC with microseconds and `Z`."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if value else None


def work_item_resource(item: WorkItem) -> dict[str, Any]:
    """The canonical work item resource."""
    return {
        "id": item.id,
        "key": item.key,
        "title": item.title,
        "status": item.status,
        "sprint": item.sprint,
        "projectId": item.project_id,
        "version": format_version(item.version),
        "watchers": list(item.watchers),
        "fields": full_fields(item.fields),
    }


def project_resource(row: dict[str, Any]) -> dict[str, Any]:
    """A project with the engagement and portfolio it belongs to."""
    return {
        "id": row["id"],
        "key": row["key"],
        "name": row["name"],
        "engagement": {"id": row["engagement_id"], "name": row["engagement_name"]},
        "portfolio": {"id": row["portfolio_id"], "name": row["portfolio_name"]},
    }


def change_resource(row: dict[str, Any]) -> dict[str, Any]:
    """One entry of a work item's change history."""
    return {
        "actorId": row["actor_id"],
        "source": row["source"],
        "changes": row["changes"],
        "versionBefore": timestamp(row["version_before"]),
        "versionAfter": timestamp(row["version_after"]),
        "changedAt": timestamp(row["changed_at"]),
    }

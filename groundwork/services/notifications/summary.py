"""Scoped recent-change summaries: what changed since a time in what the caller requested, watches or is in.

Read from the domain tables (not from the caller's notifications, which it may have dismissed),
through one function per source kind, each limited to what the caller can see now: runs it
requested in projects it still sees, applies to work items it watches there, messages by others
in threads it takes part in. Deterministic: the same `since` over the same data answers the same
bytes (items in a total order; `asOf` is the newest item's time, or `since` when nothing changed).
Adding a source kind is one function and one entry in `SUMMARY_SOURCES`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from groundwork.domain.context_engine.model import allowed_classes
from groundwork.domain.notifications.inbox import parse_time
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.notifications import sources as read
from groundwork.persistence.repositories.tenancy import workspaces as tenancy

MAX_ITEMS = 200
DEFAULT_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class SummaryItem:
    """One change: its source kind, the resource to fetch, when, and a one-line title."""

    kind: str
    resource_type: str
    resource_id: str
    occurred_at: datetime
    title: str

    def resource(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "resourceType": self.resource_type,
            "resourceId": self.resource_id,
            "occurredAt": format_timestamp(self.occurred_at),
            "title": self.title,
        }


SummarySource = Callable[[Principal, datetime], Awaitable[list[SummaryItem]]]


async def enhancement_changes(principal: Principal, since: datetime) -> list[SummaryItem]:
    """Runs the caller requested that finished, and drafts applied to work items it watches."""
    projects = await tenancy.visible_project_ids(principal)
    items = [
        SummaryItem(
            "work_item_enhancement",
            "work_item_enhancement_run",
            r.id,
            r.completed_at,
            f"Run {'failed' if r.state == 'failed' else 'ready for review'}: {r.key} {r.title}",
        )
        for r in await read.runs_finished(principal.id, projects, since)
    ]
    items += [
        SummaryItem(
            "work_item_enhancement",
            "work_item",
            a.work_item_id,
            a.applied_at,
            f"{a.draft_count or 0} draft(s) applied to {a.key} {a.title} (run {a.run_id})",
        )
        for a in await read.applies_to_watched(principal.id, projects, since)
    ]
    return items


async def message_changes(principal: Principal, since: datetime) -> list[SummaryItem]:
    """Messages others posted in threads the caller takes part in."""
    return [
        SummaryItem("messages", "message_thread", m.thread_id, m.created_at, f"{m.sender_name} in {m.thread_title}")
        for m in await read.messages_to(principal.id, since)
    ]


async def context_changes(principal: Principal, since: datetime) -> list[SummaryItem]:
    """Context entries superseded in projects whose context the caller reads, of classes its key may see."""
    if not principal.has_scope("context-engine:read"):
        return []
    projects = await tenancy.visible_project_ids(principal, "context:read")
    return [
        SummaryItem(
            "context_engine",
            "context_package",
            e.id,
            e.superseded_at,
            f"{e.contribution_type.capitalize()} superseded in {e.project_key}: {e.term}",
        )
        for e in await read.entries_superseded(projects, list(allowed_classes(principal.scopes)), since)
    ]


# Source kind -> what changed there for the caller.
SUMMARY_SOURCES: dict[str, SummarySource] = {
    "work_item_enhancement": enhancement_changes,
    "messages": message_changes,
    "context_engine": context_changes,
}


async def summary(principal: Principal, since: str | None, *, now: datetime | None = None) -> dict[str, Any]:
    """`{since, asOf, counts, items, truncated}` for the caller since a time (default: the last 24 hours)."""
    start = parse_time(since, "since") if since is not None else (now or datetime.now(UTC)) - DEFAULT_WINDOW
    items: list[SummaryItem] = []
    counts: dict[str, int] = {}
    for kind, source in SUMMARY_SOURCES.items():
        found = await source(principal, start)
        counts[kind] = len(found)
        items += found
    items.sort(key=lambda i: (i.occurred_at, i.kind, i.resource_type, i.resource_id, i.title), reverse=True)
    return {
        "since": format_timestamp(start),
        "asOf": format_timestamp(items[0].occurred_at if items else start),
        "counts": counts,
        "items": [i.resource() for i in items[:MAX_ITEMS]],
        "truncated": len(items) > MAX_ITEMS,
    }

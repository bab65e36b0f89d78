"""Who is told about what: one recipient resolver per source event type.

A resolver reads what an outbox event is about and answers the recipients with what each is told.
It only ever names principals who may see the thing (a project member holding `project:read`, a
workspace admin, a thread participant), and never tells anyone about their own apply or message
(a finished run does go to its requester: the run ran on its own).
Adding a source is one function and one entry in `SOURCES`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.notifications import inbox as rules
from groundwork.persistence.repositories.notifications import sources as read


@dataclass(frozen=True)
class SourceEvent:
    """An outbox event as the resolvers see it."""

    event_id: str
    type: str
    workspace_id: str
    resource_type: str
    resource_id: str
    actor_id: str | None
    payload: dict[str, Any]
    occurred_at: datetime


@dataclass(frozen=True)
class Recipient:
    """One principal to notify, and what the notification says to them."""

    principal_id: str
    content: rules.Content


Resolver = Callable[[SourceEvent], Awaitable[list[Recipient]]]


async def run_finished(event: SourceEvent) -> list[Recipient]:
    """A run completed or failed: its requester, while it can still see the project."""
    run = await read.run_with_target(event.resource_id)
    if run is None or run.workspace_id != event.workspace_id:
        return []
    content = rules.run_finished(
        run_id=run.id,
        outcome="completed" if event.type.endswith(".completed") else "failed",
        work_item_id=run.work_item_id,
        work_item_key=run.work_item_key,
        work_item_title=run.work_item_title,
        draft_count=event.payload.get("draft_count"),
        artifact_count=event.payload.get("artifact_count"),
        action=event.payload.get("action"),
        error_code=event.payload.get("error_code"),
    )
    visible = await read.holding([run.requested_by], run.project_id, "project:read")
    return [Recipient(p, content) for p in sorted(visible)]


async def drafts_applied(event: SourceEvent) -> list[Recipient]:
    """Drafts were applied: the run's requester and the work item's watchers who can see the project."""
    run = await read.run_with_target(event.resource_id)
    if run is None or run.workspace_id != event.workspace_id:
        return []
    requester = run.requested_by
    candidates = [p for p in dict.fromkeys([requester, *run.watchers]) if p != event.actor_id]
    visible = await read.holding(candidates, run.project_id, "project:read")
    applied = event.payload.get("applied_draft_ids") or []
    return [
        Recipient(
            p,
            rules.drafts_applied(
                run_id=run.id,
                work_item_id=run.work_item_id,
                work_item_key=run.work_item_key,
                work_item_title=run.work_item_title,
                applied_count=len(applied) if isinstance(applied, list) else 0,
                requester=p == requester,
            ),
        )
        for p in candidates
        if p in visible
    ]


async def endpoint_disabled(event: SourceEvent) -> list[Recipient]:
    """A webhook endpoint was disabled: every workspace admin."""
    content = rules.endpoint_disabled(
        endpoint_id=event.resource_id,
        url=str(event.payload.get("url", "")),
        reason=str(event.payload.get("reason", "")),
    )
    return [Recipient(p, content) for p in await read.workspace_admins(event.workspace_id) if p != event.actor_id]


async def message_posted(event: SourceEvent) -> list[Recipient]:
    """A message was posted: the thread's other participants."""
    message = await read.message_with_thread(str(event.payload.get("message_id", "")))
    if message is None or message.workspace_id != event.workspace_id:
        return []
    content = rules.message_posted(
        thread_id=message.thread_id,
        thread_title=message.thread_title,
        message_id=message.id,
        sender_name=message.sender_name,
        body=message.body,
    )
    return [Recipient(p, content) for p in message.participant_ids if p != message.sender_id]


async def entry_superseded(event: SourceEvent) -> list[Recipient]:
    """A context entry was superseded: the leads of its project who may still read its context."""
    entry = await read.superseded_entry(event.resource_id)
    if entry is None or entry.workspace_id != event.workspace_id:
        return []
    content = rules.entry_superseded(
        entry_id=entry.id,
        successor_id=entry.superseded_by or event.payload.get("related_entry_id"),
        project_key=entry.project_key,
        term=entry.term,
        contribution_type=entry.contribution_type,
        restricted=entry.classification != "general",
    )
    leads = await read.project_leads(entry.project_id)
    visible = await read.holding(leads, entry.project_id, "context:read")
    return [Recipient(p, content) for p in leads if p in visible]


# Event type -> who is told.
SOURCES: dict[str, Resolver] = {
    "work_item_enhancement.completed": run_finished,
    "work_item_enhancement.failed": run_finished,
    "work_item_enhancement.applied": drafts_applied,
    rules.ENDPOINT_DISABLED: endpoint_disabled,
    rules.MESSAGE_POSTED: message_posted,
    "context_engine.entry_superseded": entry_superseded,
}

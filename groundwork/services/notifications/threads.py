"""The participant messaging service: threads only their participants can see, and their messages.

A thread that the caller is not in does not exist for it (404), whoever it is (a workspace admin
included). Participants must share a project with the creator; a thread about a subject (a project
or a work item) needs every participant to see that subject. Each message writes the internal
`message.posted` event in its transaction, from which the other participants are notified.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from groundwork.domain.errors import FieldError, NotFound, ValidationFailed
from groundwork.domain.notifications.inbox import MESSAGE_POSTED
from groundwork.domain.notifications.threads import NewThread, validate_body, validate_new_thread
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.persistence.repositories.notifications import sources as notification_sources
from groundwork.persistence.repositories.notifications import threads as repo
from groundwork.persistence.repositories.notifications.threads import MessageRow, ThreadRow
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.idempotency import request_results
from groundwork.services.tenancy import project_access


async def _subject_project(principal: Principal, thread: NewThread) -> str | None:
    """The project a thread's subject lives in, if the creator can see it (404 otherwise)."""
    if thread.subject_type is None or thread.subject_id is None:
        return None
    project_id = thread.subject_id
    if thread.subject_type == "work_item":
        item = await work_item_repo.get_work_item(principal.workspace_id, thread.subject_id)
        project_id = item.project_id if item else ""
    permissions = await project_access.project_permissions(principal, project_id) if project_id else None
    if not permissions or "project:read" not in permissions:
        raise NotFound(f"No such {thread.subject_type.replace('_', ' ')}.")
    return project_id


async def _check_participants(principal: Principal, thread: NewThread, project_id: str | None) -> None:
    others = list(thread.participant_ids)
    known = await tenancy.principal_ids_in_workspace(principal.workspace_id, others)
    sharing = await repo.share_a_project(principal.id, [p for p in others if p in known])
    seeing = await notification_sources.holding(others, project_id, "project:read") if project_id else set(others)
    errors = []
    for index, participant in enumerate(others):
        if participant not in sharing:
            # Unknown and unrelated principals get the same answer: ids are not probed through this.
            errors.append(FieldError(f"participant_ids[{index}]", "is not a principal you share a project with"))
        elif participant not in seeing:
            errors.append(FieldError(f"participant_ids[{index}]", "cannot see the thread's subject"))
    if errors:
        raise ValidationFailed("Invalid participants.", errors)


async def _post(principal: Principal, thread_id: str, body: str) -> MessageRow:
    message = await repo.insert_message(thread_id, principal.id, body)
    await outbox.append_event(
        type=MESSAGE_POSTED,
        workspace_id=principal.workspace_id,
        resource_type="message_thread",
        resource_id=thread_id,
        actor_id=principal.id,
        payload={
            "thread_id": thread_id,
            "message_id": message.id,
            "sender_id": principal.id,
            "posted_at": format_timestamp(message.created_at),
        },
        occurred_at=message.created_at,
        # Internal (not subscribable): its notifications go to the thread's participants only.
        project_id=None,
    )
    return message


async def create_thread(
    principal: Principal, title: Any, participant_ids: Any, subject_ref: Any, body: Any
) -> ThreadRow:
    """Start a thread with its first message; answers the thread as the creator sees it."""
    thread = validate_new_thread(principal.id, title, participant_ids, subject_ref, body)
    project_id = await _subject_project(principal, thread)
    await _check_participants(principal, thread, project_id)
    # The same request retried after its first attempt's answer was lost gets that thread.
    if (earlier := await request_results.earlier_result("message_thread")) is not None:
        return await _thread(principal, earlier)
    async with db.transaction():
        thread_id = await repo.insert_thread(
            workspace_id=principal.workspace_id,
            title=thread.title,
            created_by=principal.id,
            subject_type=thread.subject_type,
            subject_id=thread.subject_id,
            participant_ids=[principal.id, *thread.participant_ids],
        )
        await _post(principal, thread_id, thread.body)
        await request_results.record_result("message_thread", thread_id)
    return await _thread(principal, thread_id)


async def _thread(principal: Principal, thread_id: str, *, for_update: bool = False) -> ThreadRow:
    thread = await repo.thread_for(principal.id, thread_id, for_update=for_update)
    if thread is None or thread.workspace_id != principal.workspace_id:
        raise NotFound("No such thread.")
    return thread


async def list_threads(
    principal: Principal, *, limit: int | None = None, cursor: str | None = None
) -> tuple[list[ThreadRow], dict[str, Any]]:
    """The caller's threads with their unread counts, most recent activity first."""
    page = page_request(limit, cursor)
    after: tuple[datetime, str] | None = None
    at, thread_id = page.after_text("at"), page.after_text("id")
    if at is not None and thread_id is not None:
        try:
            moment = datetime.fromisoformat(at)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            raise ValidationFailed("Invalid cursor.", [FieldError("cursor", "is not a cursor this API issued")])
        after = (moment, thread_id)
    rows = await repo.threads_of(principal.id, after=after, limit=page.limit + 1)
    return page_info(rows, page.limit, lambda t: {"at": t.last_message_at.isoformat(), "id": t.id})


async def get_thread(
    principal: Principal, thread_id: str, *, limit: int | None = None, cursor: str | None = None
) -> tuple[ThreadRow, list[MessageRow], dict[str, Any]]:
    """A thread the caller takes part in, with a page of its messages, newest first."""
    page = page_request(limit, cursor)
    thread = await _thread(principal, thread_id)
    rows = await repo.messages_of(thread_id, after_id=page.after_text(), limit=page.limit + 1)
    messages, info = page_info(rows, page.limit, lambda m: {"id": m.id})
    return thread, messages, info


async def post_message(principal: Principal, thread_id: str, body: Any) -> MessageRow:
    """Add a message to a thread the caller takes part in; the other participants are notified."""
    text = validate_body(body)
    async with db.transaction():
        await _thread(principal, thread_id, for_update=True)
        # The same request retried after its first attempt's answer was lost gets that message.
        earlier = await request_results.earlier_result("message")
        message = await repo.get_message(thread_id, earlier) if earlier is not None else None
        if message is None:
            message = await _post(principal, thread_id, text)
            await request_results.record_result("message", message.id)
    sender = await tenancy.get_principal(principal.id)
    return replace(message, sender_name=sender.display_name if sender else principal.name)


async def mark_thread_read(principal: Principal, thread_id: str) -> ThreadRow:
    """Mark every message of a thread the caller takes part in as read by it."""
    thread = await _thread(principal, thread_id)
    await repo.mark_read(thread_id, principal.id, thread.last_message_id)
    return await _thread(principal, thread_id)

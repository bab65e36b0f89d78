"""JSON shapes of notifications, threads, proposals and connected apps (the spec's camelCase), for every transport."""

from __future__ import annotations

from typing import Any

from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import timestamp
from groundwork.persistence.repositories.notifications.inbox import NotificationAuditRow, NotificationRow
from groundwork.persistence.repositories.notifications.proposals import ProposalRow
from groundwork.persistence.repositories.notifications.threads import MessageRow, ThreadRow
from groundwork.persistence.repositories.tenancy.connected_apps import ConnectedAppRow
from groundwork.services.notifications.inbox import allowed_for
from groundwork.services.notifications.proposals import exact_command


def notification_resource(row: NotificationRow, principal: Principal) -> dict[str, Any]:
    """A notification with exactly the actions this caller may take next."""
    return {
        "id": row.id,
        "status": row.status,
        "version": row.version,
        "updatedAt": timestamp(row.updated_at),
        "allowedActions": [
            {"id": c.id, "label": c.label, "requiresConfirmation": c.requires_confirmation}
            for c in allowed_for(principal, row.status)
        ],
        "source": {"kind": row.source_kind, "externalId": row.source_external_id},
        "title": row.title,
        "body": row.body,
        "resource": {"type": row.resource_type, "id": row.resource_id},
        "eventType": row.event_type,
        "createdAt": timestamp(row.created_at),
    }


def history_entry(row: NotificationAuditRow) -> dict[str, Any]:
    """One audited move: who, through which door, from and to, why, as which operation."""
    return {
        "auditReference": row.id,
        "actorId": row.actor_id,
        "via": row.via,
        "appId": row.app_id,
        "provenance": row.provenance,
        "from": row.from_status,
        "to": row.to_status,
        "version": row.version_after,
        "reason": row.reason,
        "operationId": row.operation_id,
        "occurredAt": timestamp(row.occurred_at),
    }


def notification_detail(
    row: NotificationRow, history: list[NotificationAuditRow], principal: Principal
) -> dict[str, Any]:
    """A notification with its audit history (its owner is the only one who ever sees it)."""
    return {**notification_resource(row, principal), "history": [history_entry(h) for h in history]}


def thread_resource(thread: ThreadRow) -> dict[str, Any]:
    """A thread as one participant sees it, with that participant's unread count."""
    subject = {"type": thread.subject_type, "id": thread.subject_id} if thread.subject_type is not None else None
    return {
        "id": thread.id,
        "title": thread.title,
        "subjectRef": subject,
        "createdBy": thread.created_by,
        "participants": [
            {"id": p.id, "name": p.name, "displayName": p.display_name, "kind": p.kind} for p in thread.participants
        ],
        "messageCount": thread.message_count,
        "unreadCount": thread.unread_count,
        "lastMessageAt": timestamp(thread.last_message_at),
        "createdAt": timestamp(thread.created_at),
    }


def message_resource(message: MessageRow) -> dict[str, Any]:
    """One message of a thread."""
    return {
        "id": message.id,
        "threadId": message.thread_id,
        "senderId": message.sender_id,
        "senderName": message.sender_name,
        "body": message.body,
        "createdAt": timestamp(message.created_at),
    }


def proposal_resource(proposal: ProposalRow) -> dict[str, Any]:
    """A change proposal: what it would do, whether it is valid now, what conflicts, the exact command."""
    return {
        "id": proposal.id,
        "notificationId": proposal.notification_id,
        "requestedOutcome": proposal.requested_outcome,
        "command": proposal.command,
        "fromStatus": proposal.from_status,
        "toStatus": proposal.to_status,
        "expectedVersion": proposal.expected_version,
        "reason": proposal.reason,
        "evidenceRefs": proposal.evidence_refs,
        "valid": not proposal.validation_errors and not proposal.conflicts,
        "validationErrors": proposal.validation_errors,
        "conflicts": proposal.conflicts,
        "exactCommand": exact_command(proposal),
        "provenance": {"appId": proposal.app_id, "label": proposal.provenance} if proposal.app_id else None,
        "createdAt": timestamp(proposal.created_at),
        "expiresAt": timestamp(proposal.expires_at),
        "appliedAt": timestamp(proposal.applied_at),
        "operationId": proposal.operation_id,
    }


def app_resource(app: ConnectedAppRow) -> dict[str, Any]:
    """A connected app with its declaration and lifecycle."""
    return {
        "id": app.id,
        "name": app.name,
        "kind": app.kind,
        "direction": app.direction,
        "fieldAuthority": list(app.field_authority),
        "provenance": app.provenance,
        "conflict": app.conflict,
        "status": app.status,
        "keyCount": app.key_count,
        "activatedAt": timestamp(app.activated_at),
        "createdAt": timestamp(app.created_at),
        "updatedAt": timestamp(app.updated_at),
    }

"""Output schemas of the notifications and messaging tools (groundwork.api.resources.notifications)."""

from __future__ import annotations

from groundwork.api.mcp.schemas.shapes import (
    ANY,
    BOOLEAN,
    INTEGER,
    OPEN_OBJECT,
    OPTIONAL_TIME,
    PAGE,
    STRING,
    SUBJECT,
    TEXT,
    TIME,
    Schema,
    array,
    described,
    enum,
    nullable,
    obj,
)
from groundwork.api.mcp.schemas.work import OPERATION
from groundwork.domain.notifications.inbox import STATUSES

ALLOWED_ACTIONS = described(
    array(obj({"id": STRING, "label": STRING, "requiresConfirmation": BOOLEAN})),
    "Exactly the actions this caller may take next.",
)
NOTIFICATION_MEMBERS: dict[str, Schema] = {
    "id": STRING,
    "status": enum(STATUSES),
    "version": described(INTEGER, "Send back as `expected_version` when proposing a change."),
    "updatedAt": OPTIONAL_TIME,
    "allowedActions": ALLOWED_ACTIONS,
    "source": obj({"kind": STRING, "externalId": TEXT}),
    "title": STRING,
    "body": TEXT,
    "resource": obj({"type": TEXT, "id": TEXT}, "What the notification is about."),
    "eventType": STRING,
    "createdAt": TIME,
    "snoozedUntil": described(OPTIONAL_TIME, "While set, the notification stays out of the inbox until then."),
}
NOTIFICATION = obj(NOTIFICATION_MEMBERS, "A notification with exactly the actions this caller may take next.")
HISTORY_ENTRY = obj(
    {
        "auditReference": STRING,
        "command": STRING,
        "actorId": TEXT,
        "via": STRING,
        "appId": TEXT,
        "provenance": ANY,
        "from": TEXT,
        "to": TEXT,
        "version": INTEGER,
        "snoozedUntil": OPTIONAL_TIME,
        "reason": TEXT,
        "operationId": TEXT,
        "occurredAt": TIME,
    },
    "One audited move: who, through which door, from and to, why, as which operation.",
)
NOTIFICATION_DETAIL = obj(
    {**NOTIFICATION_MEMBERS, "history": array(HISTORY_ENTRY)}, "A notification with its audit history."
)
THREAD_MEMBERS: dict[str, Schema] = {
    "id": STRING,
    "title": TEXT,
    "subjectRef": nullable(SUBJECT),
    "createdBy": TEXT,
    "participants": array(obj({"id": STRING, "name": STRING, "displayName": TEXT, "kind": STRING})),
    "messageCount": INTEGER,
    "unreadCount": INTEGER,
    "lastMessageAt": OPTIONAL_TIME,
    "createdAt": TIME,
}
THREAD = obj(THREAD_MEMBERS, "A thread as one participant sees it.")
MESSAGE = obj(
    {"id": STRING, "threadId": STRING, "senderId": TEXT, "senderName": TEXT, "body": STRING, "createdAt": TIME},
    "One message of a thread.",
)
PROPOSAL = obj(
    {
        "id": STRING,
        "notificationId": STRING,
        "requestedOutcome": STRING,
        "command": TEXT,
        "fromStatus": TEXT,
        "toStatus": TEXT,
        "expectedVersion": INTEGER,
        "snoozeUntil": OPTIONAL_TIME,
        "snoozeFor": TEXT,
        "reason": TEXT,
        "evidenceRefs": ANY,
        "valid": described(BOOLEAN, "No validation errors and no conflicts: it can be applied as it stands."),
        "validationErrors": ANY,
        "conflicts": ANY,
        "exactCommand": described(ANY, "The exact REST request, GraphQL mutation and MCP call that apply it."),
        "provenance": ANY,
        "createdAt": TIME,
        "expiresAt": OPTIONAL_TIME,
        "appliedAt": OPTIONAL_TIME,
        "operationId": TEXT,
    },
    "A change proposal: what it would do, whether it is valid now, what conflicts, the exact command.",
)
READ_ANSWER = obj(
    {
        "data": {
            "anyOf": [
                NOTIFICATION_DETAIL,
                obj({**THREAD_MEMBERS, "messages": array(MESSAGE)}, "A thread with a page of its messages."),
                OPERATION,
                PROPOSAL,
                array(NOTIFICATION),
                array(THREAD),
                described(OPEN_OBJECT, "Your preferences (`view: preferences`), or what changed (`view: summary`)."),
            ]
        },
        "page": PAGE,
        "unreadCount": described(INTEGER, "With `view: inbox`: how many notifications are unread."),
        "provenance": obj({"source": ANY, "eventType": STRING, "createdAt": TIME}),
        "allowedActions": ALLOWED_ACTIONS,
    },
    "A resource by id (a notification with provenance and allowed actions, a thread, an operation or a proposal), "
    "or a bounded view.",
    optional=("page", "unreadCount", "provenance", "allowedActions"),
)

OUTPUTS: dict[str, Schema] = {
    "get_notifications_messaging": READ_ANSWER,
    "draft_notifications_messaging_change": obj({"data": PROPOSAL}, "The persisted proposal; nothing changed."),
    "apply_notifications_messaging_change": obj(
        {
            "data": NOTIFICATION_DETAIL,
            "operation": OPERATION,
            "auditReference": STRING,
            "idempotencyReplayed": BOOLEAN,
        },
        "The updated notification, its operation and the audit reference.",
    ),
}

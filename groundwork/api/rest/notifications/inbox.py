"""REST: the caller's notifications, their lifecycle and snooze commands, bulk moves, read-all, the summary and
preferences (the live feed is `stream.py`).

Contract v0.2 (preview). Every read is self-scoped: another principal's notification is 404.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, get, post, put
from litestar.params import Body, Parameter

from groundwork.api.documented import HTTP_URL, LIMIT, documented
from groundwork.api.resources.notifications import notification_detail, notification_resource
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.notifications import (
    BulkDocument,
    CommandDocument,
    NotificationDocument,
    NotificationList,
    PreferencesDocument,
    ReadAllDocument,
    SummaryDocument,
    with_camel_names,
)
from groundwork.domain.notifications.feed import BULK_COMMANDS, MAX_BULK_ITEMS
from groundwork.domain.notifications.inbox import (
    MAX_EXPECTED_VERSION,
    MAX_REASON,
    NOTIFYING_EVENT_TYPES,
    SCOPE_OPERATE,
    SCOPE_READ,
    SCOPE_WRITE,
    SOURCE_KINDS,
    STATUSES,
)
from groundwork.domain.notifications.preferences import CHANNELS, DIGESTS, MAX_ADDRESS
from groundwork.domain.notifications.snooze import DURATION_ACCEPTED, MAX_DURATION_TEXT
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.webhooks import MAX_URL_LENGTH
from groundwork.services.notifications import inbox as service
from groundwork.services.notifications import preferences, snoozing
from groundwork.services.notifications.bulk import bulk_move
from groundwork.services.notifications.summary import summary

PREVIEW = "Contract v0.2 (preview). "
READ = {"scope": SCOPE_READ}
OPERATE = {"scope": SCOPE_OPERATE, "idempotent": True}


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False}


# The preferences document PUT replaces (validated by the service, which names every wrong path).
PREFERENCES_SCHEMA: dict[str, Any] = {
    "properties": {
        "channels": _closed(
            {
                "in_app": _closed({"enabled": {"type": "boolean", "enum": [True]}}),
                "email": _closed(
                    {
                        "enabled": {"type": "boolean", "description": "needs `address`"},
                        "address": {"type": ["string", "null"], "format": "email", "maxLength": MAX_ADDRESS},
                        "digest": {"type": "string", "enum": list(DIGESTS)},
                    }
                ),
                "chat": _closed(
                    {
                        "enabled": {"type": "boolean", "description": "needs `webhook_url`"},
                        "webhook_url": {"type": ["string", "null"], "pattern": HTTP_URL, "maxLength": MAX_URL_LENGTH},
                    }
                ),
            }
        ),
        "events": _closed(
            {name: _closed({c: {"type": "boolean"} for c in CHANNELS}) for name in NOTIFYING_EVENT_TYPES}
        ),
    },
    "additionalProperties": False,
}


ExpectedVersion = Annotated[int, documented(minimum=1, maximum=MAX_EXPECTED_VERSION)]
# A move that needs confirmation changes nothing unless `confirm` is exactly true (422 `confirmation_required`).
Confirm = Annotated[bool, documented(enum=[True])]


class CommandBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("expected_version",)
    expected_version: ExpectedVersion | None = None
    reason: str | None = None
    confirm: bool | None = None


class ConfirmedCommandBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("expected_version", "confirm")
    expected_version: ExpectedVersion | None = None
    reason: str | None = None
    confirm: Confirm | None = None


class ReadAllBody(msgspec.Struct, forbid_unknown_fields=True):
    up_to: str | None = None


Until = Annotated[str, documented(format="date-time")]
Duration = Annotated[str, documented(description=DURATION_ACCEPTED, maxLength=MAX_DURATION_TEXT)]
Reason = Annotated[str, documented(maxLength=MAX_REASON)]


class SnoozeBody(msgspec.Struct, forbid_unknown_fields=True):
    """`until` (a time) or `for` (an ISO 8601 duration): exactly one."""

    __documented_required__: ClassVar[tuple[str, ...]] = ("expected_version", "confirm")
    expected_version: ExpectedVersion | None = None
    until: Until | None = None
    for_: Duration | None = msgspec.field(default=None, name="for")
    reason: Reason | None = None
    confirm: Confirm | None = None


class UnsnoozeBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("expected_version",)
    expected_version: ExpectedVersion | None = None
    reason: Reason | None = None


class BulkItemBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("id", "expected_version")
    id: str | None = None
    expected_version: ExpectedVersion | None = None


class BulkBody(msgspec.Struct, forbid_unknown_fields=True):
    """One command on up to 100 notifications; `until` or `for` with `snooze` only."""

    __documented_required__: ClassVar[tuple[str, ...]] = ("command", "items")
    command: Annotated[str, documented(enum=list(BULK_COMMANDS))] | None = None
    items: Annotated[list[BulkItemBody], documented(minItems=1, maxItems=MAX_BULK_ITEMS)] | None = None
    confirm: Confirm | None = None
    reason: Reason | None = None
    until: Until | None = None
    for_: Duration | None = msgspec.field(default=None, name="for")


def command_document(answer: dict[str, Any]) -> CommandDocument:
    """A command's answer with the camelCase names (and the spec's snake_case ones beside them)."""
    return typed(CommandDocument, {"data": with_camel_names(answer)})


async def _command(
    request: Request[Principal, Any, Any], notification_id: str, command: str, data: CommandBody | ConfirmedCommandBody
) -> CommandDocument:
    result = await service.change_notification(
        request.user,
        notification_id,
        command,
        expected_version=data.expected_version,
        reason=data.reason,
        confirm=data.confirm,
        via="rest",
    )
    return command_document(result.answer())


class NotificationController(Controller):
    path = "/api/v1/notifications"
    tags = ["notifications"]

    @get("/", opt=READ, summary="List the caller's notifications", description=PREVIEW + "Newest first.")
    async def list_notifications(
        self,
        request: Request[Principal, Any, Any],
        status: str | None = Parameter(default=None, schema_extra={"enum": list(STATUSES)}),
        source_kind: str | None = Parameter(default=None, schema_extra={"enum": list(SOURCE_KINDS)}),
        since: str | None = Parameter(default=None, schema_extra={"format": "date-time"}),
        snoozed: bool | None = Parameter(
            default=None, description="true: only snoozed notifications (left out otherwise)"
        ),
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> NotificationList:
        rows, page, unread = await service.list_notifications(
            request.user,
            status=status,
            source_kind=source_kind,
            since=since,
            limit=limit,
            cursor=cursor,
            snoozed=snoozed,
        )
        data = [notification_resource(r, request.user) for r in rows]
        return typed(NotificationList, {"data": data, "page": page, "unreadCount": unread})

    @get(
        "/summary",
        opt=READ,
        summary="What changed since a time in what the caller requested, watches or takes part in",
        description=PREVIEW + "Deterministic; `since` defaults to 24 hours ago.",
    )
    async def get_summary(
        self,
        request: Request[Principal, Any, Any],
        since: str | None = Parameter(default=None, schema_extra={"format": "date-time"}),
    ) -> SummaryDocument:
        return typed(SummaryDocument, {"data": await summary(request.user, since)})

    @get("/preferences", opt=READ, summary="The caller's channel and delivery preferences", description=PREVIEW)
    async def get_preferences(self, request: Request[Principal, Any, Any]) -> PreferencesDocument:
        document = (await preferences.get_preferences(request.user)).document()
        return typed(PreferencesDocument, {"data": document})

    @put(
        "/preferences",
        opt={"scope": SCOPE_WRITE},
        summary="Replace the caller's channel and delivery preferences",
        description=PREVIEW + "In-app notifications cannot be turned off.",
    )
    async def put_preferences(
        self,
        request: Request[Principal, Any, Any],
        data: Annotated[dict[str, Any], Body(schema_extra=PREFERENCES_SCHEMA)],
    ) -> PreferencesDocument:
        document = (await preferences.put_preferences(request.user, data)).document()
        return typed(PreferencesDocument, {"data": document})

    @post(
        "/read-all",
        opt=OPERATE,
        summary="Read unread notifications up to a time, an id or a list cursor (one audited move each)",
        description=PREVIEW + "At most 1,000 a call; `hasMore` says whether to call again.",
        status_code=200,
    )
    async def read_all(self, request: Request[Principal, Any, Any], data: ReadAllBody) -> ReadAllDocument:
        result = await service.read_all(request.user, data.up_to, via="rest")
        answer = {"read": result.read, "operation_id": result.operation_id, "has_more": result.has_more}
        return typed(ReadAllDocument, {"data": with_camel_names(answer)})

    @post(
        "/bulk",
        opt=OPERATE,
        summary="Run one command (read, acknowledge, dismiss, snooze) on up to 100 notifications",
        description=PREVIEW + "One operation; each item moves or fails on its own (`data.items[]`: `moved` with "
        "its new status and version, or its `error` with the code the single command would answer). "
        "`confirm: true` for acknowledge, dismiss and snooze; `until` or `for` with snooze.",
        status_code=200,
    )
    async def bulk(self, request: Request[Principal, Any, Any], data: BulkBody) -> BulkDocument:
        result = await bulk_move(
            request.user,
            data.command,
            None if data.items is None else [{"id": i.id, "expected_version": i.expected_version} for i in data.items],
            confirm=data.confirm,
            reason=data.reason,
            until=data.until,
            for_=data.for_,
            via="rest",
        )
        answer = result.answer()
        items = [with_camel_names(item) for item in answer["items"]]
        return typed(BulkDocument, {"data": {**with_camel_names(answer), "items": items}})

    @get("/{notification_id:str}", opt=READ, summary="One notification with its history", description=PREVIEW)
    async def get_notification(
        self, request: Request[Principal, Any, Any], notification_id: str
    ) -> NotificationDocument:
        row, history = await service.get_notification(request.user, notification_id)
        return typed(NotificationDocument, {"data": notification_detail(row, history, request.user)})

    @post(
        "/{notification_id:str}/read",
        opt=OPERATE,
        summary="Read a notification (unread -> read)",
        description=PREVIEW,
        status_code=200,
    )
    async def read(
        self, request: Request[Principal, Any, Any], notification_id: str, data: CommandBody
    ) -> CommandDocument:
        return await _command(request, notification_id, "read", data)

    @post(
        "/{notification_id:str}/acknowledge",
        opt=OPERATE,
        summary="Acknowledge a notification (read -> acknowledged); needs confirm: true",
        description=PREVIEW,
        status_code=200,
    )
    async def acknowledge(
        self, request: Request[Principal, Any, Any], notification_id: str, data: ConfirmedCommandBody
    ) -> CommandDocument:
        return await _command(request, notification_id, "acknowledge", data)

    @post(
        "/{notification_id:str}/dismiss",
        opt=OPERATE,
        summary="Dismiss a notification (acknowledged -> dismissed); needs confirm: true",
        description=PREVIEW,
        status_code=200,
    )
    async def dismiss(
        self, request: Request[Principal, Any, Any], notification_id: str, data: ConfirmedCommandBody
    ) -> CommandDocument:
        return await _command(request, notification_id, "dismiss", data)

    @post(
        "/{notification_id:str}/snooze",
        opt=OPERATE,
        summary="Snooze a notification until a time (`until`) or for a duration (`for`); needs confirm: true",
        description=PREVIEW + "It leaves the default list (`?snoozed=true` shows it) and comes back at its end "
        '(`notification.updated` with `changed_fields: ["snoozedUntil"]`); its status does not change.',
        status_code=200,
    )
    async def snooze(
        self, request: Request[Principal, Any, Any], notification_id: str, data: SnoozeBody
    ) -> CommandDocument:
        result = await snoozing.snooze_notification(
            request.user,
            notification_id,
            expected_version=data.expected_version,
            until=data.until,
            for_=data.for_,
            reason=data.reason,
            confirm=data.confirm,
            via="rest",
        )
        return command_document(result.answer())

    @post(
        "/{notification_id:str}/unsnooze",
        opt=OPERATE,
        summary="Bring a snoozed notification back now",
        description=PREVIEW,
        status_code=200,
    )
    async def unsnooze(
        self, request: Request[Principal, Any, Any], notification_id: str, data: UnsnoozeBody
    ) -> CommandDocument:
        result = await snoozing.unsnooze_notification(
            request.user, notification_id, expected_version=data.expected_version, reason=data.reason, via="rest"
        )
        return command_document(result.answer())

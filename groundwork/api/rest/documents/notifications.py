"""REST answers of notifications and messaging: notifications, their commands, bulk moves, read-all, the summary,
preferences, threads and messages."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from groundwork.api.rest.documents.common import DEPRECATED, Page, Reference, Resource, Timestamp

# The spec's snake_case names of command answers, served beside the camelCase ones (docs/decisions.md).
_LEGACY = {"operation_id": "operationId", "snoozed_until": "snoozedUntil", "has_more": "hasMore"}


def with_camel_names(answer: dict[str, Any]) -> dict[str, Any]:
    """A service's answer with each snake_case name of `_LEGACY` also under its camelCase name."""
    return {**{_LEGACY.get(name, name): value for name, value in answer.items()}, **answer}


class NotificationAction(Resource, kw_only=True):
    """A command this caller may run on the notification next."""

    id: str
    label: str
    requires_confirmation: bool


class NotificationSource(Resource, kw_only=True):
    """What produced the notification."""

    kind: str
    external_id: str | None


class NotificationResourceRef(Resource, kw_only=True):
    """The resource a notification is about."""

    type: str | None
    id: str | None


class HistoryEntry(Resource, kw_only=True):
    """One audited move: who, through which door, from and to, why, as which operation."""

    audit_reference: str
    command: str
    actor_id: str | None
    via: str | None
    app_id: str | None
    provenance: Any
    from_: str | None = msgspec.field(name="from")
    to: str | None
    version: int | None
    snoozed_until: Timestamp | None
    reason: str | None
    operation_id: str | None
    occurred_at: Timestamp | None


class Notification(Resource, kw_only=True):
    """A notification with exactly the actions this caller may take next."""

    id: str
    status: str
    version: int
    updated_at: Timestamp | None
    allowed_actions: list[NotificationAction]
    source: NotificationSource
    title: str
    body: str | None
    resource: NotificationResourceRef
    event_type: str | None
    created_at: Timestamp | None
    snoozed_until: Timestamp | None
    history: list[HistoryEntry] | UnsetType = UNSET


class CommandAnswer(Resource, kw_only=True):
    """What a command did: the notification's status and version after it, as which operation."""

    id: str
    status: str
    version: int
    operation_id: str
    snoozed_until: Timestamp | UnsetType | None = UNSET
    legacy_operation_id: Annotated[str, DEPRECATED] = msgspec.field(name="operation_id")
    legacy_snoozed_until: Annotated[str | None, DEPRECATED] | UnsetType = msgspec.field(
        default=UNSET, name="snoozed_until"
    )


class BulkItem(Resource, kw_only=True):
    """One item of a bulk move: moved (its status and version after) or not (why)."""

    id: str
    moved: bool
    status: str | UnsetType = UNSET
    version: int | UnsetType = UNSET
    snoozed_until: Timestamp | UnsetType | None = UNSET
    error: dict[str, Any] | UnsetType = UNSET
    legacy_snoozed_until: Annotated[str | None, DEPRECATED] | UnsetType = msgspec.field(
        default=UNSET, name="snoozed_until"
    )


class BulkAnswer(Resource, kw_only=True):
    """A bulk move's operation and one entry per item, in the order the items were given."""

    operation_id: str
    command: str
    items: list[BulkItem]
    legacy_operation_id: Annotated[str, DEPRECATED] = msgspec.field(name="operation_id")


class ReadAllAnswer(Resource, kw_only=True):
    """How many notifications read-all read (one audited move each), as which operation, and whether more remain."""

    read: int
    operation_id: str | None
    has_more: bool
    legacy_operation_id: Annotated[str | None, DEPRECATED] = msgspec.field(name="operation_id")
    legacy_has_more: Annotated[bool, DEPRECATED] = msgspec.field(name="has_more")


class SummaryItem(Resource, kw_only=True):
    """One change since the given time: its kind, the resource to fetch, when, and a one-line title."""

    kind: str
    resource_type: str
    resource_id: str
    occurred_at: Timestamp
    title: str


class Summary(Resource, kw_only=True):
    """What changed for the caller since a time."""

    since: Timestamp
    as_of: Timestamp
    counts: dict[str, int]
    items: list[SummaryItem]
    truncated: bool


class _Body(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The preferences document is what PUT takes back: it keeps the request body's snake_case names."""


class InAppChannel(_Body, kw_only=True):
    """The in-app channel: always on."""

    enabled: bool


class EmailChannel(_Body, kw_only=True):
    """E-mail: on or off, where, and how often."""

    enabled: bool
    address: str | None
    digest: str


class ChatChannel(_Body, kw_only=True):
    """Chat: on or off, and the incoming-webhook URL it posts to."""

    enabled: bool
    webhook_url: str | None


class Channels(_Body, kw_only=True):
    """Each channel's preferences."""

    in_app: InAppChannel
    email: EmailChannel
    chat: ChatChannel


class NotificationPreferences(_Body, kw_only=True):
    """The caller's channel preferences and, per event type, each channel's effective choice."""

    channels: Channels
    events: dict[str, dict[str, bool]]


class Participant(Resource, kw_only=True):
    """A participant of a thread."""

    id: str
    name: str
    display_name: str | None
    kind: str


class Message(Resource, kw_only=True):
    """One message of a thread."""

    id: str
    thread_id: str
    sender_id: str
    sender_name: str | None
    body: str
    created_at: Timestamp | None


class Thread(Resource, kw_only=True):
    """A thread as one participant sees it, with that participant's unread count."""

    id: str
    title: str | None
    subject_ref: Reference | None
    created_by: str | None
    participants: list[Participant]
    message_count: int
    unread_count: int
    last_message_at: Timestamp | None
    created_at: Timestamp | None
    messages: list[Message] | UnsetType = UNSET


class ActionLink(Resource, kw_only=True):
    """What an action link would act on."""

    id: str
    status: str
    version: int
    title: str


class NotificationDocument(msgspec.Struct):
    """One notification with its history."""

    data: Notification


class NotificationList(msgspec.Struct):
    """A page of the caller's notifications, newest first, and how many are unread."""

    data: list[Notification]
    page: Page
    unread_count: int = msgspec.field(name="unreadCount")


class CommandDocument(msgspec.Struct):
    """The answer of a notification command."""

    data: CommandAnswer


class BulkDocument(msgspec.Struct):
    """The answer of a bulk move."""

    data: BulkAnswer


class ReadAllDocument(msgspec.Struct):
    """The answer of read-all."""

    data: ReadAllAnswer


class SummaryDocument(msgspec.Struct):
    """The caller's summary of changes."""

    data: Summary


class PreferencesDocument(msgspec.Struct):
    """The caller's notification preferences."""

    data: NotificationPreferences


class ThreadDocument(msgspec.Struct):
    """One thread."""

    data: Thread


class ThreadWithMessages(msgspec.Struct):
    """A thread with a page of its messages, newest first."""

    data: Thread
    page: Page


class ThreadList(msgspec.Struct):
    """A page of the caller's threads."""

    data: list[Thread]
    page: Page


class MessageDocument(msgspec.Struct):
    """One message."""

    data: Message


class ActionLinkDocument(msgspec.Struct):
    """The notification an action link acts on."""

    data: ActionLink

"""Notifications from the outbox: created in the relay's claim transaction, then their sends started.

The relay claims undispatched outbox events with `FOR UPDATE SKIP LOCKED`; `NotificationFanout.consume`
runs inside that same transaction and, for each event a source resolves, inserts one notification
per recipient (unique on event and recipient), grows the unread counters, appends
`notification.created`, and inserts the e-mail and chat deliveries the recipients' preferences ask
for (or attaches them to the recipient's open digest). All of it commits with the event's
`dispatched_at`, or none of it does: a relay that dies before the commit leaves the event
undispatched and the next pass does the whole job; a relay that dies after the commit but before
starting the send workflows leaves delivery rows without `workflow_started_at`, which any relay's
sweep starts after a grace period (Temporal's id policies make a repeated start a no-op).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import Client
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from groundwork.config import Settings
from groundwork.domain.notifications.inbox import digest_window
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import deliveries, preferences
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications.deliveries import DigestRow, NotificationDeliveryStartRow
from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow, OutboxEventRow
from groundwork.services.notifications.preferences import preferences_for_sending
from groundwork.services.notifications.sources import SOURCES, SourceEvent
from groundwork.workflows.notifications import (
    DeliveryRequest,
    DigestRequest,
    NotificationDeliveryWorkflow,
    NotificationDigestWorkflow,
    SendPolicy,
    delivery_workflow_id,
    digest_workflow_id,
)
from groundwork.workflows.search_attributes import CHANNEL, DELIVERY_STATUS, RECIPIENT, WORKSPACE

log = logging.getLogger("groundwork.services.notifications.inbox.fanout")


@dataclass
class Fanned:
    """What notifying produced that needs a workflow: deliveries with their own, and new digests."""

    notifications: list[NotificationRow] = field(default_factory=list)
    deliveries: list[NotificationDeliveryStartRow] = field(default_factory=list)
    digests: list[DigestRow] = field(default_factory=list)

    def extend(self, other: Fanned) -> None:
        self.notifications += other.notifications
        self.deliveries += other.deliveries
        self.digests += other.digests


def source_event(row: ClaimedEventRow | OutboxEventRow) -> SourceEvent:
    """An outbox row as the resolvers see it."""
    return SourceEvent(
        event_id=row.event_id,
        type=row.type,
        workspace_id=row.workspace_id,
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        actor_id=row.actor_id,
        payload=row.payload if isinstance(row.payload, dict) else {},
        occurred_at=row.occurred_at,
    )


async def notify(event: SourceEvent, settings: Settings) -> Fanned:
    """Create the notifications of one event (call inside the event's dispatch transaction)."""
    resolver = SOURCES.get(event.type)
    if resolver is None:
        return Fanned()
    recipients = await resolver(event)
    if not recipients:
        return Fanned()
    created = await repo.insert_notifications(
        [
            repo.NewNotification(
                workspace_id=event.workspace_id,
                recipient_id=r.principal_id,
                event_id=event.event_id,
                event_type=event.type,
                source_kind=r.content.source_kind,
                source_external_id=r.content.source_external_id,
                resource_type=r.content.resource_type,
                resource_id=r.content.resource_id,
                title=r.content.title,
                body=r.content.body,
            )
            for r in recipients
        ]
    )
    if not created:
        return Fanned()  # this event was notified before (an earlier pass got this far)
    await outbox.append_events(
        [
            {
                "type": "notification.created",
                "workspace_id": n.workspace_id,
                "resource_type": "notification",
                "resource_id": n.id,
                "actor_id": None,
                "payload": {
                    "notification_id": n.id,
                    "status": n.status,
                    "created_at": format_timestamp(n.created_at),
                },
                "source": {"event_id": event.event_id, "event_type": event.type},
                "occurred_at": n.created_at,
                # A notification is its recipient's alone: only the recipient's endpoints hear of it.
                "project_id": None,
                "private_to": n.recipient_id,
            }
            for n in created
        ]
    )
    fanned = await _plan_sends(created, event.type, settings)
    fanned.notifications = created
    return fanned


async def _plan_sends(created: list[NotificationRow], event_type: str, settings: Settings) -> Fanned:
    stored = await preferences.preferences_of(sorted({n.recipient_id for n in created}))
    planned: list[deliveries.NewDelivery] = []
    fanned = Fanned()
    for n in created:
        prefs, unavailable = preferences_for_sending(stored.get(n.recipient_id), settings.keyring)
        if unavailable:
            log.error("chat is unavailable for %s: %s", n.recipient_id, unavailable)
        if prefs.wants(event_type, "email"):
            digest_id = None
            if prefs.email_digest != "immediate":
                digest, created_now = await _open_digest(n, prefs.email_digest, settings)
                digest_id = digest.id
                if created_now:
                    fanned.digests.append(digest)
            planned.append(
                deliveries.NewDelivery(
                    workspace_id=n.workspace_id,
                    notification_id=n.id,
                    recipient_id=n.recipient_id,
                    channel="email",
                    workflow_id=None if digest_id else delivery_workflow_id(n.id, "email"),
                    digest_id=digest_id,
                )
            )
        if prefs.wants(event_type, "chat"):
            planned.append(
                deliveries.NewDelivery(
                    workspace_id=n.workspace_id,
                    notification_id=n.id,
                    recipient_id=n.recipient_id,
                    channel="chat",
                    workflow_id=delivery_workflow_id(n.id, "chat"),
                    digest_id=None,
                )
            )
    fanned.deliveries = [d for d in await deliveries.insert_deliveries(planned) if d.workflow_id]
    return fanned


async def _open_digest(notification: NotificationRow, cadence: str, settings: Settings) -> tuple[DigestRow, bool]:
    """The recipient's open digest for the window holding the notification's creation (the next one if closed),
    and whether it was created now."""
    seconds = settings.digest_hourly_seconds if cadence == "hourly" else settings.digest_daily_seconds
    start, end = digest_window(notification.created_at, seconds)
    for _ in range(3):
        digest, created = await deliveries.open_digest(
            workspace_id=notification.workspace_id,
            recipient_id=notification.recipient_id,
            cadence=cadence,
            window_start=start,
            window_end=end,
            workflow_id=digest_workflow_id(notification.recipient_id, cadence, start),
        )
        if digest.status == "open":
            return digest, created
        # Its workflow closed this window a moment ago: the notification joins the next one.
        start, end = end, end + (end - start)
    raise RuntimeError("no open digest window")


def send_policy(settings: Settings) -> SendPolicy:
    """The retry policy of sends a process's settings describe."""
    return SendPolicy(
        retry_seconds=settings.notification_retry_seconds,
        max_attempts=settings.notification_max_attempts,
        heartbeat_seconds=settings.notification_heartbeat_seconds,
        allow_private=settings.webhook_allow_private,
    )


class NotificationFanout:
    """The relay's notification step: `consume` in the claim transaction, then start what it produced."""

    def __init__(self, client: Callable[[], Awaitable[Client]], settings: Settings, *, concurrency: int = 32) -> None:
        self._client = client
        self.settings = settings
        self._limit = asyncio.Semaphore(concurrency)
        self._pending = Fanned()

    async def consume(self, events: list[ClaimedEventRow]) -> None:
        """Notify for each claimed event that a source resolves (inside the relay's transaction)."""
        self._pending = Fanned()
        for row in events:
            if row.type not in SOURCES:
                continue
            try:
                # A source that fails on one event (a bug) must not hold back the whole outbox.
                async with db.savepoint():
                    self._pending.extend(await notify(source_event(row), self.settings))
            except Exception:
                log.exception("could not create the notifications of %s (%s)", row.event_id, row.type)

    async def start_consumed(self) -> int:
        """Start the workflows of what the last committed `consume` produced."""
        pending, self._pending = self._pending, Fanned()
        return await self.start(pending.deliveries, pending.digests)

    async def restart_stranded(self, grace_seconds: float, batch_size: int = 200) -> int:
        """Start deliveries and digests whose workflow start was asked for but is not known to have happened."""
        started = 0
        while True:
            stranded = await deliveries.claim_unstarted_deliveries(grace_seconds, batch_size)
            digests = await deliveries.claim_unstarted_digests(grace_seconds, batch_size)
            started += await self.start(stranded, digests)
            if len(stranded) < batch_size and len(digests) < batch_size:
                return started

    async def start(self, to_deliver: list[NotificationDeliveryStartRow], digests: list[DigestRow]) -> int:
        """Start (or find started) the workflow of each delivery and digest; returns how many are known started."""
        if not to_deliver and not digests:
            return 0
        try:
            client = await self._client()
        except Exception as exc:
            log.warning("Temporal unreachable; %d notification sends wait for the sweep: %s", len(to_deliver), exc)
            return 0
        policy = send_policy(self.settings)
        sent = await asyncio.gather(*(self._start_delivery(client, d, policy) for d in to_deliver))
        opened = await asyncio.gather(*(self._start_digest(client, d, policy) for d in digests))
        started_deliveries = [i for i in sent if i is not None]
        started_digests = [i for i in opened if i is not None]
        await deliveries.mark_started("notification_deliveries", started_deliveries)
        await deliveries.mark_started("notification_digests", started_digests)
        return len(started_deliveries) + len(started_digests)

    async def _start(
        self, client: Client, workflow: Any, request: Any, workflow_id: str, attributes: list[Any]
    ) -> bool:
        async with self._limit:
            try:
                await client.start_workflow(
                    workflow,
                    request,
                    id=workflow_id,
                    task_queue=self.settings.temporal_task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    search_attributes=TypedSearchAttributes(attributes),
                    request_eager_start=True,
                )
            except WorkflowAlreadyStartedError:
                return True  # it ran and closed: nothing to start
            except Exception as exc:
                log.warning("could not start %s, the sweep retries: %s", workflow_id, exc)
                return False
        return True

    async def _start_delivery(
        self, client: Client, row: NotificationDeliveryStartRow, policy: SendPolicy
    ) -> int | None:
        assert row.workflow_id is not None  # only deliveries with a workflow of their own are started
        request = DeliveryRequest(
            delivery_id=row.id,
            notification_id=row.notification_id,
            workspace_id=row.workspace_id,
            recipient_id=row.recipient_id,
            channel=row.channel,
            policy=policy,
        )
        attributes = [
            SearchAttributePair(WORKSPACE, row.workspace_id),
            SearchAttributePair(RECIPIENT, row.recipient_id),
            SearchAttributePair(CHANNEL, row.channel),
            SearchAttributePair(DELIVERY_STATUS, "pending"),
        ]
        started = await self._start(client, NotificationDeliveryWorkflow.run, request, row.workflow_id, attributes)
        return row.id if started else None

    async def _start_digest(self, client: Client, row: DigestRow, policy: SendPolicy) -> int | None:
        request = DigestRequest(
            digest_id=row.id,
            workspace_id=row.workspace_id,
            recipient_id=row.recipient_id,
            cadence=row.cadence,
            window_end=row.window_end.isoformat(),
            policy=policy,
        )
        attributes = [
            SearchAttributePair(WORKSPACE, row.workspace_id),
            SearchAttributePair(RECIPIENT, row.recipient_id),
            SearchAttributePair(CHANNEL, "email"),
            SearchAttributePair(DELIVERY_STATUS, "pending"),
        ]
        started = await self._start(client, NotificationDigestWorkflow.run, request, row.workflow_id, attributes)
        return row.id if started else None

"""Snooze timers from the outbox: each snooze's `NotificationSnoozeWorkflow` started after its commit.

A snooze commits its row (`notification_snoozes`) with its `notification.updated` event. The relay hands
that event to `SnoozeTimers.consume` in its claim transaction, which finds the snoozes whose timer is not
started yet; after the commit `start_consumed` starts them (workflow id `ntsz_<snooze id>`, so a repeated
start is a no-op) and marks them started. A relay that dies before marking them leaves rows that any
relay's sweep starts after a grace period, so a timer is never lost, and never started twice. A snooze
still running a minute after its end (its workflow was terminated by hand, or its history lost) is ended
by the sweep itself, through the same `wake` as its timer's (whichever comes first wins; the other
finds nothing to do).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from temporalio.client import Client
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from groundwork.config import Settings
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.notifications import snoozes
from groundwork.persistence.repositories.notifications.snoozes import SnoozeRow
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow
from groundwork.platform.observability import metrics
from groundwork.services.notifications.snoozing import wake
from groundwork.workflows.notifications import NotificationSnoozeWorkflow, SnoozeTimer
from groundwork.workflows.search_attributes import RECIPIENT, WORKSPACE

log = logging.getLogger("groundwork.services.notifications.snooze_timers")
# A snooze that its timer has not ended this long after its end is ended by the sweep.
OVERDUE_SECONDS = 60.0


def _snoozed(event: ClaimedEventRow) -> str | None:
    """The notification a claimed event says was snoozed (or brought back), if it says so."""
    if event.type != "notification.updated" or not isinstance(event.payload, dict):
        return None
    fields = event.payload.get("changed_fields")
    return event.resource_id if isinstance(fields, list) and "snoozedUntil" in fields else None


class SnoozeTimers:
    """The relay's snooze step: find unstarted timers in the claim transaction, start them after its commit."""

    def __init__(
        self,
        client: Callable[[], Awaitable[Client]],
        settings: Settings,
        *,
        concurrency: int = 32,
        overdue_seconds: float = OVERDUE_SECONDS,
    ) -> None:
        self._client = client
        self.settings = settings
        self.overdue_seconds = overdue_seconds
        self._limit = asyncio.Semaphore(concurrency)
        self._pending: list[SnoozeRow] = []

    async def consume(self, events: list[ClaimedEventRow]) -> None:
        """Note the unstarted timers of the snoozes these events announce (inside the relay's transaction)."""
        snoozed = sorted({n for n in (_snoozed(e) for e in events) if n is not None})
        self._pending = await snoozes.unstarted_snoozes_of(snoozed) if snoozed else []

    async def start_consumed(self) -> int:
        """Start the timers the last committed `consume` found."""
        pending, self._pending = self._pending, []
        return await self.start(pending)

    async def restart_stranded(self, grace_seconds: float, batch_size: int = 200) -> int:
        """Start timers whose start was asked for `grace_seconds` ago and is not known to have happened."""
        started = 0
        while True:
            stranded = await snoozes.claim_unstarted_snoozes(grace_seconds, batch_size)
            started += await self.start(stranded)
            if len(stranded) < batch_size:
                break
        for snooze_id in await snoozes.overdue_snoozes(self.overdue_seconds, batch_size):
            outcome = await wake(snooze_id)
            log.warning("snooze %s was still running past its end; the sweep %s it", snooze_id, outcome)
            metrics.NOTIFICATION_SNOOZES_ENDED.labels(outcome).inc()
        return started

    async def start(self, rows: list[SnoozeRow]) -> int:
        """Start (or find started) each snooze's timer workflow; returns how many are known started."""
        if not rows:
            return 0
        try:
            client = await self._client()
        except Exception as exc:
            log.warning("Temporal unreachable; %d snooze timers wait for the sweep: %s", len(rows), exc)
            return 0
        started = [s for s in await asyncio.gather(*(self._start(client, row) for row in rows)) if s]
        await snoozes.mark_snoozes_started(started)
        return len(started)

    async def _start(self, client: Client, row: SnoozeRow) -> str | None:
        timer = SnoozeTimer(snooze_id=row.id, notification_id=row.notification_id, until=format_timestamp(row.until))
        async with self._limit:
            try:
                await client.start_workflow(
                    NotificationSnoozeWorkflow.run,
                    timer,
                    id=row.workflow_id,
                    task_queue=self.settings.temporal_task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    search_attributes=TypedSearchAttributes(
                        [
                            SearchAttributePair(WORKSPACE, row.workspace_id),
                            SearchAttributePair(RECIPIENT, row.recipient_id),
                        ]
                    ),
                )
            except WorkflowAlreadyStartedError:
                return row.id  # it ran and closed: nothing to start
            except Exception as exc:
                log.warning("could not start %s, the sweep retries: %s", row.workflow_id, exc)
                return None
        return row.id

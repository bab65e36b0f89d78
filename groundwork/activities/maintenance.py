"""Housekeeping activities: retention of idempotency records and of webhook history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from groundwork.config import Settings
from groundwork.persistence.repositories.platform import idempotency
from groundwork.persistence.repositories.webhooks import retention as webhook_retention
from groundwork.workflows.maintenance import WebhookHistoryPurged

# Rows per statement: short transactions, so the relay and deliveries never wait long on a purge.
PURGE_BATCH = 5000


@activity.defn(name="purge_expired_idempotency_keys")
async def purge_expired_idempotency_keys() -> int:
    """Delete idempotency records past their 24 h retention; returns how many went."""
    removed = await idempotency.purge_expired()
    activity.logger.info("purged %d expired idempotency records", removed)
    return removed


class RetentionActivities:
    """Retention of webhook history, with the windows of the worker's settings."""

    def __init__(self, settings: Settings | None = None) -> None:
        # Without settings (a worker built for tests) the windows come from the environment.
        settings = settings or Settings(database_url="")
        self.attempt_days = settings.attempt_retention_days
        self.delivery_days = settings.delivery_retention_days
        self.outbox_days = settings.outbox_retention_days

    def all(self) -> list[Callable[..., Any]]:
        """Every activity this class provides, for the worker."""
        return [self.purge_webhook_history]

    @activity.defn(name="purge_webhook_history")
    async def purge_webhook_history(self) -> WebhookHistoryPurged:
        """Delete old attempts, then finished deliveries, then dispatched events no delivery needs, in batches."""
        purged = WebhookHistoryPurged()
        purged.attempts = await _in_batches(webhook_retention.purge_attempts, self.attempt_days)
        purged.deliveries = await _in_batches(webhook_retention.purge_deliveries, self.delivery_days)
        purged.outbox_events = await _in_batches(webhook_retention.purge_outbox, self.outbox_days)
        activity.logger.info(
            "purged %d attempts, %d deliveries, %d outbox events",
            purged.attempts,
            purged.deliveries,
            purged.outbox_events,
        )
        return purged


async def _in_batches(purge: Callable[[float, int], Any], days: float) -> int:
    total = 0
    while True:
        removed = int(await purge(days, PURGE_BATCH))
        total += removed
        activity.heartbeat(total)
        if removed < PURGE_BATCH:
            return total

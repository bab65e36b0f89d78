"""Housekeeping workflows, started on a Temporal schedule so operators see every run in the UI."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

PURGE_SCHEDULE_ID = "groundwork-purge-idempotency-keys"


@workflow.defn(name="PurgeIdempotencyKeysWorkflow")
class PurgeIdempotencyKeysWorkflow:
    """Drops idempotency records older than their retention; safe to run any number of times."""

    @workflow.run
    async def run(self) -> int:
        return await workflow.execute_activity(
            "purge_expired_idempotency_keys",
            result_type=int,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=RetryPolicy(maximum_attempts=5),
        )


WEBHOOK_HISTORY_SCHEDULE_ID = "groundwork-purge-webhook-history"


@dataclass
class WebhookHistoryPurged:
    """How many rows one purge deleted, by kind."""

    attempts: int = 0
    deliveries: int = 0
    outbox_events: int = 0


@workflow.defn(name="PurgeWebhookHistoryWorkflow")
class PurgeWebhookHistoryWorkflow:
    """Deletes delivery attempts, finished deliveries and dispatched outbox events past their retention.

    The windows are the worker's settings (`GROUNDWORK_WEBHOOK_ATTEMPT_RETENTION_DAYS`,
    `..._DELIVERY_RETENTION_DAYS`, `GROUNDWORK_OUTBOX_RETENTION_DAYS`), read by the activity when it runs.
    """

    @workflow.run
    async def run(self) -> WebhookHistoryPurged:
        return await workflow.execute_activity(
            "purge_webhook_history",
            result_type=WebhookHistoryPurged,
            start_to_close_timeout=timedelta(minutes=30),
            heartbeat_timeout=timedelta(minutes=2),
            retry_policy=RetryPolicy(maximum_attempts=5),
        )

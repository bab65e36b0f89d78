"""Housekeeping workflows, started on a Temporal schedule so operators see every run in the UI."""

from __future__ import annotations

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

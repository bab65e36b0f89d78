"""Housekeeping runs as Temporal workflows on a schedule."""

from __future__ import annotations

import uuid
from typing import Any

from groundwork.persistence.repositories import idempotency
from groundwork.worker import ensure_schedules
from groundwork.workflows.context_engine import PROVIDERS_SCHEDULE_ID
from groundwork.workflows.maintenance import PURGE_SCHEDULE_ID, PurgeIdempotencyKeysWorkflow
from tests.conftest import Workspace


async def test_purge_workflow_removes_expired_records_only(
    worker: Any, temporal_client: Any, settings: Any, workspace: Workspace
) -> None:
    from groundwork.services.api_keys import list_keys

    await workspace.key(admin=True)
    [record] = await list_keys(workspace.slug)
    assert (await idempotency.claim(record["id"], "fresh", "fp")).claimed
    assert (await idempotency.claim(record["id"], "stale", "fp")).claimed
    from groundwork.persistence import db

    await db.execute("UPDATE idempotency_keys SET expires_at = now() - interval '1 hour' WHERE key = 'stale'")
    removed = await temporal_client.execute_workflow(
        PurgeIdempotencyKeysWorkflow.run,
        id=f"purge-test-{uuid.uuid4().hex}",
        task_queue=settings.temporal_task_queue,
    )
    assert removed >= 1
    assert not (await idempotency.claim(record["id"], "fresh", "other")).claimed  # still held
    assert (await idempotency.claim(record["id"], "stale", "fp")).claimed  # gone, so claimable again


async def test_schedules_are_created_once(temporal_client: Any, settings: Any) -> None:
    try:
        await ensure_schedules(temporal_client, settings.temporal_task_queue)
        await ensure_schedules(temporal_client, settings.temporal_task_queue)
        handle = temporal_client.get_schedule_handle(PURGE_SCHEDULE_ID)
        description = await handle.describe()
        assert description.schedule.spec.intervals[0].every.total_seconds() == 3600
    finally:
        # The providers' schedule would contribute to every test's workspace at the next quarter hour.
        await temporal_client.get_schedule_handle(PROVIDERS_SCHEDULE_ID).delete()

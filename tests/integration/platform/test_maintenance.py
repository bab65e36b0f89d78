"""Housekeeping runs as Temporal workflows on a schedule."""

from __future__ import annotations

import uuid
from typing import Any

from groundwork.persistence.repositories.platform import idempotency
from groundwork.worker import ensure_schedules
from groundwork.workflows.context_engine import PROVIDERS_SCHEDULE_ID
from groundwork.workflows.maintenance import PURGE_SCHEDULE_ID, PurgeIdempotencyKeysWorkflow
from tests.conftest import Workspace


async def test_purge_workflow_removes_expired_records_only(
    worker: Any, temporal_client: Any, settings: Any, workspace: Workspace
) -> None:
    from groundwork.services.tenancy.api_keys import list_keys

    await workspace.key(admin=True)
    [record] = await list_keys(workspace.slug)
    assert (await idempotency.claim(record.id, "fresh", "fp")).claimed
    assert (await idempotency.claim(record.id, "stale", "fp")).claimed
    from groundwork.persistence import db

    await db.execute("UPDATE idempotency_keys SET expires_at = now() - interval '1 hour' WHERE key = 'stale'")
    removed = await temporal_client.execute_workflow(
        PurgeIdempotencyKeysWorkflow.run,
        id=f"purge-test-{uuid.uuid4().hex}",
        task_queue=settings.temporal_task_queue,
    )
    assert removed >= 1
    assert not (await idempotency.claim(record.id, "fresh", "other")).claimed  # still held
    assert (await idempotency.claim(record.id, "stale", "fp")).claimed  # gone, so claimable again


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


async def _old_history(workspace: Workspace, endpoint_id: str, *, status: str, age_days: int) -> tuple[str, str]:
    """An event dispatched `age_days` ago with one delivery (in `status`) and one attempt of that age."""
    from datetime import UTC, datetime, timedelta

    from groundwork.domain.ids import new_id
    from groundwork.persistence import db
    from groundwork.persistence.repositories.platform import outbox

    async with db.transaction():
        event_id = await outbox.append_event(
            type="notification.created",
            workspace_id=workspace.id,
            resource_type="notification",
            resource_id="notification_x",
            actor_id=None,
            payload={},
            occurred_at=datetime.now(UTC),
            project_id=None,
        )
    delivery_id = new_id("whd")
    age = timedelta(days=age_days)
    await db.execute("UPDATE outbox SET dispatched_at = now() - $2::interval WHERE event_id = $1", event_id, age)
    await db.execute(
        "INSERT INTO webhook_deliveries (id, workflow_id, workspace_id, endpoint_id, event_id, event_type, status,"
        " completed_at) VALUES ($1, $1, $2, $3, $4, 'notification.created', $5,"
        " CASE WHEN $5 = 'pending' THEN NULL ELSE now() - $6::interval END)",
        delivery_id,
        workspace.id,
        endpoint_id,
        event_id,
        status,
        age,
    )
    await db.execute(
        "INSERT INTO webhook_delivery_attempts (delivery_id, generation, slot, number, attempted_at, latency_ms,"
        " outcome) VALUES ($1, 0, 0, 1, now() - $2::interval, 1.0, 'failed')",
        delivery_id,
        age,
    )
    return event_id, delivery_id


async def test_webhook_history_is_purged_after_its_windows_and_nothing_still_needed_goes(
    worker: Any, temporal_client: Any, settings: Any, workspace: Workspace
) -> None:
    from datetime import UTC, datetime

    from groundwork.persistence import db
    from groundwork.persistence.repositories.platform import outbox
    from groundwork.workflows.maintenance import PurgeWebhookHistoryWorkflow

    await workspace.key(admin=True)
    endpoint = await db.fetchrow(
        "INSERT INTO webhook_endpoints (id, workspace_id, url, event_types, secret, created_by)"
        " VALUES ($1, $2, 'https://hooks.example.com/x', '{notification.*}', 'gwsealed1:x', $3) RETURNING id",
        f"whe_{uuid.uuid4().hex}",
        workspace.id,
        workspace.principals["admin"],
    )
    assert endpoint is not None
    old_event, old_delivery = await _old_history(workspace, endpoint["id"], status="succeeded", age_days=40)
    kept_event, kept_delivery = await _old_history(workspace, endpoint["id"], status="succeeded", age_days=2)
    retrying_event, retrying_delivery = await _old_history(workspace, endpoint["id"], status="pending", age_days=40)
    async with db.transaction():  # an old event that no endpoint received
        lone = await outbox.append_event(
            type="work_item_enhancement.queued",
            workspace_id=workspace.id,
            resource_type="work_item_enhancement_run",
            resource_id="wie_x",
            actor_id=None,
            payload={},
            occurred_at=datetime.now(UTC),
            project_id=workspace.projects["ALPHA"],
        )
    await db.execute("UPDATE outbox SET dispatched_at = now() - interval '40 days' WHERE event_id = $1", lone)

    purged = await temporal_client.execute_workflow(
        PurgeWebhookHistoryWorkflow.run,
        id=f"purge-webhooks-test-{uuid.uuid4().hex}",
        task_queue=settings.temporal_task_queue,
    )
    assert purged.attempts >= 1 and purged.deliveries >= 1 and purged.outbox_events >= 2

    events = {e.event_id for e in await outbox.events_for_workspace(workspace.id)}
    assert old_event not in events and lone not in events  # past the window, needed by no delivery
    assert kept_event in events and retrying_event in events  # recent, or still being delivered
    deliveries = {
        r["id"] for r in await db.fetch("SELECT id FROM webhook_deliveries WHERE workspace_id = $1", workspace.id)
    }
    assert deliveries == {kept_delivery, retrying_delivery}
    attempts = await db.fetch(
        "SELECT delivery_id FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::text[])",
        [old_delivery, kept_delivery, retrying_delivery],
    )
    assert {a["delivery_id"] for a in attempts} == {kept_delivery, retrying_delivery}
    # The seeded "retrying" delivery has no workflow and its endpoint a placeholder secret: a later test's
    # relay would adopt it and retry it for the rest of the session.
    await db.execute("DELETE FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::text[])", list(deliveries))
    await db.execute("DELETE FROM webhook_deliveries WHERE endpoint_id = $1", endpoint["id"])
    await db.execute("DELETE FROM webhook_endpoints WHERE id = $1", endpoint["id"])


async def test_the_webhook_history_purge_runs_hourly_on_a_schedule(temporal_client: Any, settings: Any) -> None:
    from groundwork.workflows.maintenance import WEBHOOK_HISTORY_SCHEDULE_ID

    try:
        await ensure_schedules(temporal_client, settings.temporal_task_queue)
        description = await temporal_client.get_schedule_handle(WEBHOOK_HISTORY_SCHEDULE_ID).describe()
        assert description.schedule.spec.intervals[0].every.total_seconds() == 3600
    finally:
        await temporal_client.get_schedule_handle(PROVIDERS_SCHEDULE_ID).delete()

"""A worker stops promptly even while a delivery's attempt keeps failing (it must never hold shutdown)."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from temporalio.client import WorkflowExecutionStatus

from groundwork.domain.ids import new_id
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.webhooks.secrets import seal_webhook_secret
from groundwork.worker import build_worker
from groundwork.workflows.webhooks import DeliveryPolicy, DeliveryRequest, WebhookDeliveryWorkflow
from tests.conftest import Workspace

# Well past the few seconds an attempt in flight may take, well short of the unbounded wait it used to be.
SHUTDOWN_BOUND_SECONDS = 20


async def _delivery_no_key_opens(workspace: Workspace) -> DeliveryRequest:
    """An endpoint whose secret was sealed under a key the worker lacks, and one pending delivery to it."""
    endpoint_id = f"whe_{uuid.uuid4().hex}"
    foreign = seal_webhook_secret(KeyRing.parse(KeyRing.generate_text()), endpoint_id, "whsec_" + "A" * 32)
    await db.execute(
        "INSERT INTO webhook_endpoints (id, workspace_id, url, event_types, secret, created_by)"
        " VALUES ($1, $2, 'http://127.0.0.1:9/hook', '{notification.*}', $3, $4)",
        endpoint_id,
        workspace.id,
        foreign,
        workspace.principals["admin"],
    )
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
    await db.execute(
        "INSERT INTO webhook_deliveries (id, workflow_id, workspace_id, endpoint_id, event_id, event_type, status)"
        " VALUES ($1, $1, $2, $3, $4, 'notification.created', 'pending')",
        delivery_id,
        workspace.id,
        endpoint_id,
        event_id,
    )
    return DeliveryRequest(
        delivery_id=delivery_id,
        generation=0,
        workspace_id=workspace.id,
        endpoint_id=endpoint_id,
        event_id=event_id,
        event_type="notification.created",
        policy=DeliveryPolicy(schedule=[0.0, 60.0], allow_private=True),
    )


async def test_a_worker_stops_promptly_while_a_delivery_retries_an_attempt_that_cannot_start(
    temporal_client: Any, workspace: Workspace
) -> None:
    await workspace.key(admin=True)
    request = await _delivery_no_key_opens(workspace)
    task_queue = f"shutdown-{uuid.uuid4().hex[:8]}"
    worker = build_worker(temporal_client, task_queue)
    running = asyncio.create_task(worker.run())
    handle = await temporal_client.start_workflow(
        WebhookDeliveryWorkflow.run, request, id=request.delivery_id, task_queue=task_queue
    )
    try:
        await asyncio.sleep(8)  # attempts at about 0, 1, 3 and 7 s: each fails before anything is sent
        started = time.monotonic()
        await asyncio.wait_for(worker.shutdown(), SHUTDOWN_BOUND_SECONDS)
        await running
        took = time.monotonic() - started
        assert took < SHUTDOWN_BOUND_SECONDS
        # Nothing was lost by stopping: the delivery is still open, for the next worker to carry on.
        assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
        row = await db.fetchrow("SELECT status FROM webhook_deliveries WHERE id = $1", request.delivery_id)
        assert row is not None and row["status"] == "pending"
    finally:
        await handle.terminate("test over")
        if not running.done():
            running.cancel()
        # No later test's relay may adopt this delivery (its secret opens with no key of the session).
        await db.execute("DELETE FROM webhook_deliveries WHERE id = $1", request.delivery_id)
        await db.execute("DELETE FROM webhook_endpoints WHERE id = $1", request.endpoint_id)

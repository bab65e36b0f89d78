"""Disabling an endpoint while one of its deliveries records a failed attempt: both finish, neither deadlocks.

Disabling locks the endpoint and then ends its pending deliveries; recording an attempt locks the delivery and,
on a failure, the endpoint. `record_attempt` takes the endpoint's lock first, so the two queue instead of
waiting on each other (PostgreSQL would abort one with `deadlock detected`, a 500 to the caller)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx

from groundwork.persistence import db
from groundwork.persistence.repositories.webhooks import attempts, deliveries, endpoints
from tests.conftest import Workspace
from tests.integration.webhooks.conftest import Receiver, create_endpoint


async def test_a_failed_attempt_recorded_while_its_endpoint_is_disabled_deadlocks_neither(
    client: httpx.AsyncClient, workspace: Workspace, receivers: Any
) -> None:
    key = await workspace.key("admin", admin=True)
    receiver: Receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["work_item_enhancement.completed"])
    delivery = await deliveries.insert_test_delivery(
        workspace_id=workspace.id,
        endpoint_id=endpoint["id"],
        actor_id=workspace.principals["admin"],
        payload={"test": True},
        occurred_at=datetime.now(UTC),
    )
    locked, attempt_started = asyncio.Event(), asyncio.Event()

    async def disable() -> None:
        async with db.transaction():
            assert await endpoints.get_endpoint(workspace.id, endpoint["id"], for_update=True) is not None
            locked.set()
            await attempt_started.wait()
            await asyncio.sleep(0.5)  # the attempt now waits for a lock (which one is what this test is about)
            await deliveries.fail_pending_deliveries(endpoint["id"])

    async def record_failure() -> Any:
        await locked.wait()
        attempt_started.set()
        return await attempts.record_attempt(
            attempts.AttemptRecord(
                delivery_id=delivery.id, generation=0, slot=1, final=False, attempted_at=datetime.now(UTC),
                status_code=500, latency_ms=3.0, response_body="down", response_truncated=False, error=None,
                succeeded=False, gone=False, retry_after_seconds=None, next_delay_seconds=60.0,
                disable_after_seconds=86_400.0,
            )
        )  # fmt: skip

    _, outcome = await asyncio.wait_for(asyncio.gather(disable(), record_failure()), 30)
    assert outcome is not None and outcome.delivery_status == "failed"  # ended by the disable, not left pending
    row = await db.fetchrow("SELECT status, failure_reason FROM webhook_deliveries WHERE id = $1", delivery.id)
    assert row is not None and (row["status"], row["failure_reason"]) == ("failed", "endpoint_disabled")

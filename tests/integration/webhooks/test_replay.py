"""Delivery workflows stay deterministic across releases: old histories replay under the current code."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.platform.temporal.payloads import data_converter
from groundwork.workflows.webhooks import WebhookDeliveryWorkflow
from tests.conftest import Workspace
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until

HISTORIES = Path(__file__).parent / "histories"


def _replayer() -> Replayer:
    return Replayer(workflows=[WebhookDeliveryWorkflow], data_converter=data_converter)


async def test_a_delivery_recorded_with_regular_activity_attempts_replays() -> None:
    # Recorded from the release before attempts became local activities: a 500, a timer, then a 200.
    text = (HISTORIES / "delivery_with_regular_activities.json").read_text()
    workflow_id = "whd_from_the_previous_release"
    history = WorkflowHistory.from_json(workflow_id, json.loads(text))
    assert any(e.activity_task_scheduled_event_attributes.activity_type.name for e in history.events)
    result = await _replayer().replay_workflow(history)
    assert result.replay_failure is None


async def test_a_delivery_of_this_release_replays(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    temporal_client: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.answer(500)
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    await emit(workspace, "notification.created")

    async def succeeded() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return bool(deliveries and deliveries[0]["status"] == "succeeded")

    await wait_until(succeeded, what="the delivery to succeed on its second attempt")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    handle = temporal_client.get_workflow_handle(delivery["temporal"]["workflowId"])
    await handle.result()
    history = await handle.fetch_history()
    assert not any(e.activity_task_scheduled_event_attributes.activity_type.name for e in history.events)
    result = await _replayer().replay_workflow(history)
    assert result.replay_failure is None

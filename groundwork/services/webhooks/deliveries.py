"""Webhook deliveries: created from claimed outbox events, each run by one `WebhookDeliveryWorkflow`.

`WebhookDeliveries` is the outbox relay's webhook consumer: in the claim's transaction it creates one
delivery row per subscribed endpoint whose owner may see the event; after the commit it starts their
workflows with id `whd_<event>_<endpoint>`. A relay that dies between the commit and the start leaves
rows without `workflow_started_at`, which any relay's sweep starts again after a grace period; Temporal's
id policies (use the running workflow, reject a closed one) make that restart a no-op when the workflow
did start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from groundwork.config import Settings
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow
from groundwork.persistence.repositories.webhooks import deliveries as repo
from groundwork.persistence.repositories.webhooks.deliveries import DeliveryStartRow
from groundwork.workflows.search_attributes import DELIVERY_STATUS, ENDPOINT, EVENT_TYPE, WORKSPACE
from groundwork.workflows.webhooks import DeliveryPolicy, DeliveryRequest, WebhookDeliveryWorkflow

log = logging.getLogger(__name__)


def delivery_policy(settings: Settings) -> DeliveryPolicy:
    """The delivery policy a process's settings describe (carried in each workflow's input)."""
    return DeliveryPolicy(
        schedule=list(settings.webhook_schedule),
        allow_private=settings.webhook_allow_private,
        disable_after_seconds=settings.webhook_disable_after_seconds,
    )


class DeliveryStarter:
    """Starts delivery workflows for delivery rows and records which ones started."""

    def __init__(
        self,
        client: Callable[[], Awaitable[Client]],
        task_queue: str,
        policy: DeliveryPolicy,
        *,
        concurrency: int = 32,
    ) -> None:
        self._client = client
        self._task_queue = task_queue
        self._policy = policy
        self._limit = asyncio.Semaphore(concurrency)

    async def start(self, deliveries: list[DeliveryStartRow]) -> int:
        """Start (or find already started) the workflow of each delivery; returns how many are known started.

        Each generation of a delivery has its own workflow id, so the run found for an id is always
        of the generation the row asks for: reusing it (a relay and the API, or two relays, starting
        the same one) is safe, and a run of an older generation never stands in for a newer one.
        """
        if not deliveries:
            return 0
        try:
            client = await self._client()
        except Exception as exc:
            log.warning("Temporal unreachable, %d deliveries wait for the sweep: %s", len(deliveries), exc)
            return 0
        outcomes = await asyncio.gather(*(self._start_one(client, d) for d in deliveries))
        started = [o for o in outcomes if o is not None]
        await repo.mark_started(started)
        return len(started)

    async def _start_one(self, client: Client, delivery: DeliveryStartRow) -> tuple[str, int, str | None] | None:
        generation = delivery.generation
        request = DeliveryRequest(
            delivery_id=delivery.id,
            generation=generation,
            workspace_id=delivery.workspace_id,
            endpoint_id=delivery.endpoint_id,
            event_id=delivery.event_id,
            event_type=delivery.event_type,
            policy=self._policy,
        )
        attributes = TypedSearchAttributes(
            [
                SearchAttributePair(ENDPOINT, delivery.endpoint_id),
                SearchAttributePair(EVENT_TYPE, delivery.event_type),
                SearchAttributePair(DELIVERY_STATUS, "pending"),
                SearchAttributePair(WORKSPACE, delivery.workspace_id),
            ]
        )
        async with self._limit:
            try:
                handle: WorkflowHandle[Any, Any] = await client.start_workflow(
                    WebhookDeliveryWorkflow.run,
                    request,
                    id=delivery.workflow_id,
                    task_queue=self._task_queue,
                    # One run per id, ever: a closed one is never run again, a running one is reused.
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    search_attributes=attributes,
                    # In the worker process the first workflow task goes straight to the local worker.
                    request_eager_start=True,
                )
            except WorkflowAlreadyStartedError:
                return delivery.id, generation, None  # it ran and closed: nothing to start
            except Exception as exc:
                log.warning("could not start %s, the sweep retries: %s", delivery.workflow_id, exc)
                return None
        return delivery.id, generation, handle.result_run_id


class WebhookDeliveries:
    """The outbox relay's webhook step: `consume` in the claim transaction, then start what it created."""

    def __init__(self, client: Callable[[], Awaitable[Client]], settings: Settings) -> None:
        self.starter = DeliveryStarter(client, settings.temporal_task_queue, delivery_policy(settings))
        self.created: list[DeliveryStartRow] = []

    async def consume(self, events: list[ClaimedEventRow]) -> None:
        """Create the deliveries of claimed events (inside the relay's transaction)."""
        self.created = await repo.create_deliveries(events)

    async def start_consumed(self) -> int:
        """Start the workflows of the deliveries the last committed `consume` created."""
        created, self.created = self.created, []
        return await self.starter.start(created)

    async def restart_stranded(self, grace_seconds: float, batch_size: int = 200) -> int:
        """Start deliveries whose workflow start was asked for but is not known to have happened."""
        started = 0
        while True:
            stranded = await repo.claim_unstarted(grace_seconds, batch_size)
            started += await self.starter.start(stranded)
            if len(stranded) < batch_size:
                return started
